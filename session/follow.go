package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"mcpscope/framestore"
	"mcpscope/journal"
	"mcpscope/transport"
)

// A Feed is a transport whose frames another process has numbered and
// journaled already (mcpscope proxy, watched by mcpscope attach): it hands
// each frame over with its number and where its line is in that journal,
// so the session keeps the proxy's numbering (a host's call is cancelled
// by the seq of its request) and reads old frames back from the proxy's
// journal instead of writing one of its own.
//
// A session over a Feed (Follow) adopts the requests it sees as calls, as
// a journal read back does; the requests it sends itself go out under
// ids the Feed may rewrite on the wire, and the Feed says which (wire).
type Feed interface {
	transport.Transport
	// JournalPath is the file the frames' lines are in ("" when there is
	// none: the session then keeps a window of frames and forgets older
	// ones).
	JournalPath() string
	// StartFeed begins delivering frames to fn, in the order of their
	// numbers, from one goroutine. Before it delivers any frame that
	// carries a request the session sent, it calls wire with the
	// request's id as the session gave it (its key) and the id it has on
	// the wire.
	StartFeed(fn func(Fed), wire func(key string, id json.RawMessage)) error
}

// Fed is one frame a Feed delivers.
type Fed struct {
	Seq   uint64
	Frame transport.Frame
	// Off and Len locate the frame's line in the Feed's journal, its
	// newline included; Off -1 when it is not known (the frame is then
	// kept in memory while the session lives).
	Off int64
	Len int
}

// ForeignCanceller is a Feed that can cancel a call another client made
// (a host's call, through the proxy's socket): that client gets an error
// at once and the server is told. done hears whether it was done.
type ForeignCanceller interface {
	CancelForeign(seq uint64, id json.RawMessage, reason string, done func(error))
}

// Follow makes a session over a Feed: every frame the Feed delivers is
// correlated as a journal read back would be (requests are adopted as
// calls, answers end them), and the session's own requests (o.IDPrefix
// keeps their ids apart) are sent through it. Call Start to begin.
func Follow(t Feed, o Options) (*Session, error) {
	o.Journal = nil // the Feed's process journals; nothing is written twice
	s := New(t, o)
	s.offline, s.follows = true, true
	if p := t.JournalPath(); p != "" {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("open the journal %s to read it back: %w", p, err)
		}
		s.file = f
		s.store = framestore.New(fileSource{f}, journal.OpenIndex(p))
		s.info.JournalPath = p
	}
	return s, nil
}

// startTransport starts the transport: a Feed hands over numbered frames,
// any other transport raw ones.
func (s *Session) startTransport() error {
	if f, ok := s.t.(Feed); ok && s.follows {
		return f.StartFeed(s.fed, s.wireID)
	}
	return s.t.Start(s.Ingest)
}

// fed stores one frame a Feed delivered, under the Feed's number.
func (s *Session) fed(fd Fed) {
	pos := journal.LinePos{Off: fd.Off, N: fd.Len}
	if s.file == nil {
		pos = journal.LinePos{Off: -1}
	}
	s.ingest(fd.Frame, pos, false, fd.Seq)
}

// wireID records that the session's own request key went out with id:
// the frames that carry id are that call's.
func (s *Session) wireID(key string, id json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.calls.get(key); c != nil && !c.adopted {
		s.calls.set(journal.IDKey(id), c)
		c.xw().wireKey = journal.IDKey(id)
	}
}

// wireTokenLocked maps the progress token a call's request carried on the
// wire to the call, when the request went out with another token than the
// session gave it (a proxy rewrites injected requests' tokens).
func (s *Session) wireTokenLocked(c *Call, e *journal.Envelope) {
	if c.adopted || len(e.Hints().MetaToken) == 0 {
		return
	}
	if tok := journal.IDKey(e.Hints().MetaToken); tok != c.Token {
		s.byToken[tok] = c
	}
}

// NoteOwnRequest is what a server request that arrives while one of the
// session's own calls runs through a proxy is marked with: over stdio
// nothing says which call it belongs to, so the proxy gives it to the
// host, and the host answers it.
const NoteOwnRequest = "went to the host: sent while your call ran, and stdio does not say which call a server request belongs to; the host answers it"

// serverRequestSeenLocked marks a server request another client answers.
func (s *Session) serverRequestSeenLocked(it *framestore.Item) {
	if !s.follows || it.Frame.Meta.Via != transport.ViaHost {
		return
	}
	for _, c := range s.pending {
		if !c.adopted && c.Seq != 0 {
			it.Note = NoteOwnRequest
			return
		}
	}
}

// Follows reports whether the session watches another client's traffic
// through a Feed (mcpscope attach).
func (s *Session) Follows() bool { return s.follows }

// Offline reports whether the session only watches: a journal read back,
// or another client's traffic through a Feed. Its calls are adopted from
// the frames it sees; only a Feed's session sends anything itself.
func (s *Session) Offline() bool { return s.offline }

// ErrNotOwn: the call is another client's; only the client (or the proxy
// it talks through) can end it.
var ErrNotOwn = errors.New("another client's call")

// CancelForeign cancels a call another client made, through the Feed (the
// proxy ends it for that client with an error and tells the server). The
// frames that follow end it here; done hears whether the proxy did it.
func (s *Session) CancelForeign(c *Call, reason string, done func(error)) error {
	s.mu.Lock()
	adopted, state, seq, id := c.adopted, c.st(), c.Seq, c.ID
	s.mu.Unlock()
	fc, ok := s.t.(ForeignCanceller)
	switch {
	case !adopted:
		return fmt.Errorf("call %s is this session's own: cancel it as usual", c.Key)
	case state.Ended():
		return fmt.Errorf("call %s (%s) already ended", c.Key, c.Method)
	case c.Method == "initialize":
		return errors.New("initialize cannot be cancelled (the protocol forbids it)")
	case !ok || !s.follows:
		return fmt.Errorf("call %s is %w, and this session cannot reach it", c.Key, ErrNotOwn)
	}
	if done == nil {
		done = func(error) {}
	}
	fc.CancelForeign(seq, id, reason, done)
	return nil
}
