package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"unsafe"

	"mcpscope/framestore"
	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/transport"
)

// Load reads a journal back into an offline session: the same store, calls
// and info a live session had, rebuilt by the same correlation code. The
// session keeps the file open to read frames back (Close closes it).
// When the file has lines that are not records, or ends in a torn line,
// the session holds everything else and the error (a *journal.Damage)
// says which lines; any other error comes with a nil session.
func Load(path string) (*Session, journal.Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, journal.Header{}, fmt.Errorf("open journal: %w", err)
	}
	s := New(nil, Options{Timeout: -1, MaxTimeout: -1})
	s.offline = true
	s.file = f
	s.store = framestore.New(fileSource{f}, journal.OpenIndex(path))
	h, err := journal.ReadPos(f, func(seq uint64, fr transport.Frame, pos journal.LinePos) error {
		s.ingestNumbered(seq, fr, pos)
		return nil
	})
	s.store.Finish()
	s.info.Target = h.Target
	s.info.JournalPath = path
	s.info.Started = h.Started
	var damage *journal.Damage
	if err != nil && !errors.As(err, &damage) {
		s.store.Close()
		f.Close()
		return nil, h, err
	}
	return s, h, err
}

// maxSeqGap is the largest jump in a journal's numbering Load keeps (a
// few damaged lines); past it, or going back, frames are numbered on.
const maxSeqGap = 1024

// ingestNumbered stores a frame read from a journal file under the
// journal's own number, when that number is a small step on (else the
// file's order is the session's).
func (s *Session) ingestNumbered(seq uint64, fr transport.Frame, pos journal.LinePos) {
	s.mu.Lock()
	at := uint64(0)
	if seq > s.seq && seq-s.seq <= maxSeqGap {
		at = seq // keep the journal's numbering
	}
	if s.spill != nil && s.order.len()-s.spill.from >= s.spill.batch {
		s.sweepLocked() // between frames: the calls that ended go out of memory (spill.go)
	}
	s.mu.Unlock()
	s.ingest(fr, pos, false, at)
	if fr.Kind == transport.Event {
		s.offlineDetached(&fr) // a detach's note ends its call, detached
	}
}

// fileSource reads frames back from a journal file being read.
type fileSource struct{ f *os.File }

func (fs fileSource) ReadBack(p []byte, off int64) error {
	_, err := fs.f.ReadAt(p, off)
	return err
}

// adoptLocked makes a call record for a request seen in a journal (offline
// sessions have no CallWith to make them).
func (s *Session) adoptLocked(e *journal.Envelope, it *framestore.Item) *Call {
	// Most adopted calls need no callExtra (timers, leases, MRTR links are
	// for calls made here, or a few): xw makes it on first write, under
	// s.mu like every write to an adopted call.
	// The method from the pool: the decoder gave each frame a copy of its
	// own, and a journal's calls name a handful of methods.
	// The call and its id and params come from slabs: a session holds
	// every call for its life, and a million of them allocated one by one
	// among the reading's garbage leave the heap's spans sparse once that
	// garbage goes (40 MiB of RSS at 1M frames that no GC gives back).
	var (
		c  *Call
		id json.RawMessage
	)
	if s.spill != nil {
		// Most go out of memory once ended: a slab would be held by the
		// few that stay (spill.go).
		c, id = new(Call), bytes.Clone(e.ID)
	} else {
		c, id = s.adopted.call(), s.adopted.clone(e.ID)
	}
	*c = Call{s: s, Key: adoptedKey(e, id), ID: id, Method: s.shared.get(e.Method), started: wallNano(it.Frame.Time)}
	c.Name, c.Seq = s.shared.get(e.Hints().Name), it.Seq
	if s.offline && s.store.Journaled() && e.Method == "tools/call" {
		// A tool call's params (most of a journal's calls) stay in the
		// journal, like its result: Params reads them back. Rounds, tasks,
		// listings and listens keep theirs: the session reads them again.
		c.paramsOut = true
	} else {
		// In bytes of its own: the request frame's buffer goes once the
		// store's window lets go of it (a session holds every call).
		c.setParams(s.adopted.clone(e.Params))
	}
	c.adopted = true
	if v := it.Frame.Meta.Via; v != "" {
		c.xw().via = v
	}
	// A journal's first request, when it is server/discover, is the era probe.
	if e.Method == ProbeMethod && s.order.len() == 0 {
		c.xw().opts.probe = true
	}
	if len(e.Hints().MetaToken) > 0 {
		c.Token = journal.IDKey(e.Hints().MetaToken)
		s.byToken[c.Token] = c
	}
	s.calls.set(c.Key, c)
	s.order.add(c)
	s.pending[c.Key] = c
	s.linkAdoptedLocked(c, e) // MRTR rounds and re-issues (rounds.go)
	return c
}

// noteResultLocked records what a result teaches about the connection.
func (s *Session) noteResultLocked(c *Call, e *journal.Envelope) {
	result := e.Result
	switch c.Method {
	case "tools/list":
		s.noteToolsLocked(result)
		return
	case "tools/call", "tasks/get", "tasks/cancel", "tasks/list", "tasks/result":
		s.noteTaskResultLocked(c, e)
		if c.Method == "tools/call" && c.rt == rtTask {
			s.noteTaskExtLocked(c, result) // the 2026 tasks extension (tasksext.go)
		}
		return
	case "server/discover":
		var d protocol.DiscoverResult
		if json.Unmarshal(result, &d) == nil {
			if si, ok := d.Meta[protocol.MetaServerInfo]; ok {
				_ = json.Unmarshal(si, &s.info.ServerInfo)
			}
			s.info.Capabilities, s.info.Instructions = d.Capabilities, d.Instructions
			if slices.Contains(d.SupportedVersions, protocol.ModernVersion) {
				s.info.ProtocolVersion = protocol.ModernVersion
			}
		}
		return
	case "initialize":
	default:
		return
	}
	var res protocol.InitResult
	if json.Unmarshal(result, &res) == nil {
		s.info.ProtocolVersion = res.ProtocolVersion
		s.info.ServerInfo = res.ServerInfo
		s.info.Capabilities = res.Capabilities
		s.info.Instructions = res.Instructions
	}
}

// adoptSlab allocates an offline session's calls, and the bytes of their
// ids and params, in chunks: what lives as long as the session sits in
// spans of its own instead of among the garbage of the reading.
type adoptSlab struct {
	calls []Call
	bytes []byte
}

const (
	callSlab = 256      // calls a chunk holds
	byteSlab = 64 << 10 // bytes a chunk holds
	ownClone = 4 << 10  // a clone this long is allocated on its own
)

func (a *adoptSlab) call() *Call {
	if len(a.calls) == cap(a.calls) {
		a.calls = make([]Call, 0, callSlab)
	}
	a.calls = a.calls[:len(a.calls)+1]
	return &a.calls[len(a.calls)-1]
}

// clone is bytes.Clone into the slab; the copy's capacity is its length,
// so an append to it cannot write over its neighbour.
func (a *adoptSlab) clone(b []byte) []byte {
	if b == nil || len(b) > ownClone {
		return bytes.Clone(b)
	}
	if cap(a.bytes)-len(a.bytes) < len(b) || a.bytes == nil {
		a.bytes = make([]byte, 0, byteSlab)
	}
	at := len(a.bytes)
	a.bytes = append(a.bytes, b...)
	return a.bytes[at:len(a.bytes):len(a.bytes)]
}

// adoptedKey is e's call key, sharing id's slab bytes when the id is its
// own canonical text (a plain integer or string: the common case). The
// slab's bytes are never written again once cloned, so the string holds.
func adoptedKey(e *journal.Envelope, id json.RawMessage) string {
	if k := journal.KeyBytes(id); len(k) > 0 && len(k) == len(id) {
		return unsafe.String(&k[0], len(k))
	}
	return e.Key()
}
