package session

import (
	"mcpscope/framestore"
	"mcpscope/journal"
	"mcpscope/statestore"
	"mcpscope/transport"
)

// Ingest takes one frame from the transport: into the journal, then (a
// progress step of a call kept in the state store) its mark in the store,
// then meaning.
func (s *Session) Ingest(f transport.Frame) {
	it, x := s.items.Item(&f)
	c := s.stepCall(&it.Frame, it.Env)
	free := s.ingestStep(it, journal.LinePos{Off: -1}, true, 0, c)
	if c != nil {
		c.xw().persistMu.Unlock() // held from before the mark until the step counts
	}
	if free && x != nil {
		s.items.Put(x) // the store keeps no window: nothing refers to it now
	}
}

// ingest decodes, journals (when journal is set; an offline session passes
// the frame's place in the file it reads instead), correlates and stores
// one frame. at, when past the last number given, is the frame's number in
// the journal it comes from (0: the next one).
func (s *Session) ingest(f transport.Frame, pos journal.LinePos, toJournal bool, at uint64) {
	it, _ := s.items.Item(&f)
	s.ingestItem(it, pos, toJournal, at)
}

// ingestItem is ingest of a decoded frame. It reports whether the store
// let go of it (see Store.add): then nothing refers to it any more.
func (s *Session) ingestItem(it *framestore.Item, pos journal.LinePos, toJournal bool, at uint64) (free bool) {
	return s.ingestStep(it, pos, toJournal, at, nil)
}

// ingestStep is ingestItem of a frame that may be a progress step of c (a
// call kept in the state store, its persistMu held; nil: none), whose
// mark goes to the store between the journal and the rest (markStep).
// ingestMu keeps frames in one order from their number to the store while
// the mark is written without s.mu (the UI reads on).
func (s *Session) ingestStep(it *framestore.Item, pos journal.LinePos, toJournal bool, at uint64, c *Call) (free bool) {
	f, env, batch, class := &it.Frame, it.Env, it.Batch, it.Class
	var after []func()
	s.ingestMu.Lock()
	s.mu.Lock()
	if at > s.seq {
		s.seq = at - 1
	}
	s.seq++
	it.Seq = s.seq
	var end int64
	if toJournal && s.journal != nil {
		off, n, err := s.journal.AppendFrame(it.Seq, f)
		if err != nil && s.info.JournalErr == "" {
			s.info.JournalErr = err.Error()
		}
		if s.journal.Seekable() { // else nothing can be read back: the frame is held as without a journal
			pos = journal.LinePos{Off: off, N: n}
		}
		end = off + int64(n)
	}
	if toJournal && s.opts.Observe != nil {
		s.opts.Observe(it.Seq, *f)
	}
	var (
		refused string
		lost    *statestore.LeaseLostError
		doubt   bool
	)
	if c != nil {
		if handle, m := s.stepMarkLocked(c, it); handle != "" {
			j := s.journal
			if end <= 0 {
				j = nil // not in the journal: nothing to wait for
			}
			s.mu.Unlock()
			refused, lost, doubt = s.markStep(c, handle, m, j, end)
			s.mu.Lock()
			if lost == nil && refused == "" {
				s.markedSeq = it.Seq
			}
			if doubt {
				c.xw().inDoubt = stepName(m.Progress)
			}
		} else if handle := s.resultDeleteLocked(c, env); handle != "" {
			s.mu.Unlock()
			lost = s.finishFenced(c, handle)
			s.mu.Lock()
		}
	}
	if lost != nil {
		// Journaled, never applied: the process that holds the call now
		// shows it.
		it.Note = "not applied here: " + lost.Error()
		if doubt {
			it.Note += "; " + inDoubtWhy
		}
	}
	s.noteReachLocked(f)
	dup := false
	if f.Dir == transport.In || f.Meta.Event == transport.EvPrime {
		if dup = s.trackEventLocked(&f.Meta, f.Kind == transport.Message); dup {
			it.Note = "duplicate SSE event " + f.Meta.EventID + " (delivered before; not applied again)"
		}
		s.touchQuietLocked(&f.Meta, f.Kind == transport.Message && !dup)
	}
	switch {
	case dup, lost != nil:
	case class == journal.ClassBatch:
		for _, e := range batch {
			after = s.correlate(it, e, after)
		}
	case env != nil:
		after = s.correlate(it, env, after)
	case f.Kind == transport.Message:
		it.Note = "not a JSON-RPC message"
	case f.Kind == transport.Event:
		after = s.onEvent(it, after)
	}
	free = s.store.Add(it, pos) && !s.offline && !s.follows // offline, correlation keeps items (load.go, follow.go)
	if s.changed != nil {
		close(s.changed) // every waiter on changedLocked wakes
		s.changed = nil
	}
	s.mu.Unlock()
	s.ingestMu.Unlock()
	if refused != "" {
		s.Note(refused)
	}
	if lost != nil {
		s.leaseLost(c, lost)
	}
	for _, fn := range after {
		fn()
	}
	return free
}

// journalPager is what the store reads old frames back from: the journal,
// or nothing (none, or one written to a device or FIFO).
func journalPager(j *journal.Writer) framestore.Pager {
	if j == nil || !j.Seekable() {
		return nil
	}
	return j
}

// journalIndex is the index file beside the journal frames are read back
// from (nil: none, and the store keeps its index in memory).
func journalIndex(j *journal.Writer) *journal.Index {
	if j == nil || !j.Seekable() {
		return nil
	}
	return journal.OpenIndex(j.Path())
}
