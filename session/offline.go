package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"mcpscope/framestore"
	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/transport"
)

// Open reads a journal back like Load, but returns once the header is
// read: the frames come in the background, as a live session's would, so
// a person sees the first screen at once however long the journal is.
// Loading says how far the reading got and how it ended. Close stops it.
// Once every frame is read, a call the recording holds no answer for ends
// with its last frame, lost, as the journal readers of package scan end it
// (Load, which tests build sessions with, leaves such calls as they were).
// What the process does with the memory once the reading is done is its
// owner's to decide (Loaded says when, Loading how big the journal was).
func Open(path string) (*Session, journal.Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, journal.Header{}, fmt.Errorf("open journal: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, journal.Header{}, fmt.Errorf("open journal: %w", err)
	}
	h, err := journal.FileHeader(f)
	if err != nil {
		f.Close()
		return nil, h, err
	}
	s := New(nil, Options{Timeout: -1, MaxTimeout: -1})
	s.offline = true
	s.file = f
	s.store = framestore.New(fileSource{f}, journal.OpenIndex(path))
	s.info.Target = h.Target
	s.info.JournalPath = path
	if s.spill = newSpill(); s.spill != nil {
		s.calls.spilled = func(key string) *Call { return s.spilledByLocked(key, false) }
	}
	s.loading.begin(st.Size())
	go func() {
		var last time.Time
		_, err := journal.ReadAt(f, 0, func(seq uint64, fr transport.Frame, off int64, n int) error {
			if s.ctx.Err() != nil {
				return errLoadStopped
			}
			s.ingestNumbered(seq, fr, journal.LinePos{Off: off, N: n})
			s.loading.progress(off + int64(n))
			if fr.Time.After(last) {
				last = fr.Time
			}
			return nil
		})
		if errors.Is(err, errLoadStopped) {
			err = nil
		} else {
			s.recordingEnded(last)
			s.dropReadBackIndexes()
		}
		s.store.Finish()
		s.loading.end(err)
		s.store.Notify()
	}()
	return s, h, nil
}

var errLoadStopped = errors.New("closed while reading")

// RecordingEnded is why a call a recording holds no answer for ended: it
// ends where the recording ends, lost, as when its transport closed (the
// journal readers of package scan say the same).
const RecordingEnded = "no answer before the recording ended"

// recordingEnded ends the calls still unanswered when the recording ends
// at last (its latest frame): their clocks stop there.
func (s *Session) recordingEnded(last time.Time) {
	s.mu.Lock()
	s.endUnansweredLocked(RecordingEnded, last)
	s.mu.Unlock()
}

// dropReadBackIndexes lets go of what only the reading needed once every
// frame is in: no frame comes after, so no progress looks a token up
// (byToken: 9 MiB at 1M frames, and the ended calls' tokens, 2 MiB); the
// maps of pending calls, sized for the most ever in flight, and the ones
// of every call, sized by doubling, are built again at their size now.
func (s *Session) dropReadBackIndexes() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked()
	if s.spill != nil {
		s.spill.loaded = true
		s.spill.tokens = spillIndex{} // no progress comes after the reading
	}
	s.byToken = liveCalls(s.byToken)
	s.pending = liveCalls(s.pending)
	for c := range s.order.all() {
		if c.adopted && c.st().Ended() {
			c.Token = ""
		}
	}
	// The calls map grew by doubling while the reading went on; the
	// session keeps the calls for its life sorted by key.
	s.calls.freeze()
}

// liveCalls is a fresh map of m's calls that have not ended.
func liveCalls(m map[string]*Call) map[string]*Call {
	live := map[string]*Call{}
	for k, c := range m {
		if !c.st().Ended() {
			live[k] = c
		}
	}
	return live
}

// endUnansweredLocked ends a recording's calls still without an answer at
// at, lost: its transport closed (or the recording ended) then.
func (s *Session) endUnansweredLocked(reason string, at time.Time) {
	var open []*Call
	for _, c := range s.pending {
		if !c.st().Ended() && !c.givenUp {
			open = append(open, c)
		}
	}
	sort.Slice(open, func(i, j int) bool { return open[i].Seq < open[j].Seq })
	for _, c := range open {
		s.endLocked(c, StateError, nil, nil, &Failure{Reason: reason, Kind: ErrClosed}, at)
	}
}

// Loading is how far a journal Open reads in the background has got.
type Loading struct {
	Active bool  // still reading
	Read   int64 // bytes read
	Size   int64 // the file's size when it was opened
	// Err is how the reading ended: nil, a *journal.Damage (every other
	// line was read), or what stopped it.
	Err error
}

type loadState struct {
	mu   sync.Mutex
	l    Loading
	done chan struct{} // Loaded's, made on demand (loaded.go)
}

func (ls *loadState) begin(size int64) {
	ls.mu.Lock()
	ls.l = Loading{Active: true, Size: size}
	ls.mu.Unlock()
}

func (ls *loadState) progress(read int64) {
	ls.mu.Lock()
	ls.l.Read = read
	ls.mu.Unlock()
}

func (ls *loadState) end(err error) {
	ls.mu.Lock()
	ls.l.Active, ls.l.Err = false, err
	if err == nil {
		ls.l.Read = ls.l.Size
	}
	ls.closeDone()
	ls.mu.Unlock()
}

// Loading reports on a journal Open reads in the background (the zero
// Loading for every other session).
func (s *Session) Loading() Loading {
	s.loading.mu.Lock()
	defer s.loading.mu.Unlock()
	return s.loading.l
}

// clientCancelledLocked applies a client's notifications/cancelled seen
// in the frames (a journal read back, a host's through a proxy): the call
// it names ended then, cancelled (or timed out, when mcpscope itself gave
// up on it). A response that still comes is late, as it was live.
func (s *Session) clientCancelledLocked(it *framestore.Item, e *journal.Envelope) {
	c := s.calls.get(journal.IDKey(e.Hints().RequestID))
	if c == nil {
		return
	}
	it.CallKey = c.Key
	if !c.adopted || c.st().Ended() || c.givenUp {
		return
	}
	who := "the client"
	if it.Frame.Meta.Via == transport.ViaMcpscope {
		who = "mcpscope (through the proxy)"
	}
	f := &Failure{Reason: "cancelled by " + who + " (notifications/cancelled)", Kind: ErrCancelled}
	st, reason := CancelEnds(e.Params)
	switch {
	case st == StateError:
		f = &Failure{Reason: "timed out: " + who + " gave up on it (notifications/cancelled, reason timeout)", Kind: ErrTimeout}
	case reason != "":
		f.Reason += ": " + reason
	}
	s.endLocked(c, st, nil, nil, f, it.Frame.Time)
}

// CancelEnds is the state a client's notifications/cancelled (its params)
// ends the call it names with, and the reason it gave: an error when the
// reason is "timeout" (the client gave up on it, as mcpscope's own timeout
// does), cancelled otherwise. Sessions read back and journal scans share it.
func CancelEnds(params json.RawMessage) (State, string) {
	var p struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(params, &p)
	if p.Reason == "timeout" {
		return StateError, p.Reason
	}
	return StateCancelled, p.Reason
}

// proxyCancelledLocked ends a call with the error mcpscope proxy gave its
// client for a cancel from a viewer: cancelled, the error kept.
func (s *Session) proxyCancelledLocked(c *Call, it *framestore.Item, e *journal.Envelope) {
	s.endLocked(c, StateCancelled, nil, e.Error,
		&Failure{Reason: "cancelled from mcpscope: the proxy answered the client with this error and told the server", Kind: ErrCancelled},
		it.Frame.Time)
}

// recordedListing is a listing made of the pages an offline session saw:
// LastListing of the answered pages of method. ok is false when the frames
// hold none.
func (s *Session) recordedListing(method, field string) (*Listing, bool) {
	s.mu.Lock()
	var calls []*Call
	var pages []protocol.RecordedPage
	for c := range s.order.all() {
		if c.Method == method && c.st() == StateOK {
			calls = append(calls, c)
			pages = append(pages, protocol.RecordedPage{Cursor: protocol.ParamsCursor(c.params()), Result: c.result()})
		}
	}
	var run []*Call
	for _, i := range protocol.LastListing(pages) {
		run = append(run, calls[i])
	}
	s.mu.Unlock()
	if len(run) == 0 {
		return nil, false
	}
	l := &Listing{Method: method, Field: field, s: s}
	for _, c := range run {
		res, err := c.Result()
		if err != nil {
			l.err = err
			break
		}
		var page map[string]json.RawMessage
		if err := json.Unmarshal(res, &page); err != nil {
			l.err = fmt.Errorf("%s: the recorded result is not an object: %w", method, err)
			break
		}
		var items []json.RawMessage
		if raw, ok := page[field]; ok && string(raw) != "null" {
			_ = json.Unmarshal(raw, &items)
		}
		l.items = append(l.items, items...)
		l.pages++
	}
	return l, true
}

// DetachedFailure is why a call read back from a journal ended detached:
// left running on the server under handle, to rejoin.
func DetachedFailure(handle string) *Failure {
	return &Failure{Reason: "detached as " + handle + ": left running on the server, to rejoin (" + RejoinCommand(handle) + ")"}
}

// offlineDetached ends the call a journal's detach note names, detached
// under its handle, as the live session ended it then.
func (s *Session) offlineDetached(fr *transport.Frame) {
	key, handle, ok := journal.DetachedNote(&fr.Meta)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls.get(key)
	if c == nil || c.st().Ended() {
		return
	}
	if s.endLocked(c, StateDetached, nil, nil, DetachedFailure(handle), fr.Time) {
		c.xw().handle = handle
	}
}
