package ui

import (
	"slices"

	"mcpscope/framestore"
	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/transport"
	"mcpscope/ui/listen"
)

// noteKind is what the notifications pane shows a row as, and filters by.
type noteKind uint8

const (
	kindAll noteKind = iota
	kindLog
	kindProgress
	kindNotify
	kindRequest
	kindStderr
	kindEvent
	kindOther
	numKinds
)

var kindNames = [...]string{"all", "log", "progress", "notify", "request", "stderr", "event", "other"}

func (k noteKind) String() string { return kindNames[k] }

// classify says whether a frame belongs in the notifications pane and as
// what, from what the store's index keeps of it. Client requests and
// their responses live in the requests pane; responses the session could
// not place (late, unknown id) are "other" here too, because they
// deserve to be seen.
func classify(e framestore.Entry) (noteKind, bool) {
	switch e.Kind {
	case transport.Stderr:
		return kindStderr, true
	case transport.Event:
		return kindEvent, true
	case transport.Garbage:
		return kindOther, true
	}
	if e.Dir != transport.In {
		return 0, false
	}
	switch e.Class {
	case journal.ClassNotification:
		switch e.Method {
		case "notifications/message":
			return kindLog, true
		case "notifications/progress":
			return kindProgress, true
		}
		return kindNotify, true
	case journal.ClassRequest:
		return kindRequest, true
	case journal.ClassResult, journal.ClassError:
		if e.Note != "" {
			return kindOther, true
		}
		return 0, false
	}
	return kindOther, true
}

// entryOf is the index's view of an item, for classify.
func entryOf(it *framestore.Item) framestore.Entry {
	e := framestore.Entry{Seq: it.Seq, Dir: it.Frame.Dir, Kind: it.Frame.Kind, Class: it.Class, CallKey: it.CallKey, Note: it.Note}
	if it.Env != nil {
		e.Method = it.Env.Method
	}
	return e
}

// callNotes is what the listen view shows of a call's notifications.
type callNotes struct {
	n    int
	last string
}

// history is the UI's index over the session: calls in order, and the
// rows of the notifications pane as frame numbers, one list per filter.
// The frames themselves stay in the store (and its journal); rows are
// read back when drawn. It only ever appends, so pulling is proportional
// to what is new, not to the session's length.
type history struct {
	s       *session.Session
	st      *framestore.Store
	lastSeq uint64
	ncalls  int                   // calls taken in: the session's first ncalls (read through call)
	live    []*session.Call       // calls not seen ended yet, in call order (running forgets the rest)
	streams []*session.Call       // the listen calls, in call order (few)
	listens map[string]bool       // keys of the listen calls taken in (few: no map of every call)
	notes   map[string]*callNotes // listen calls' notifications, by call key
	rows    [numKinds]seqList     // rows[kindAll] is every row
	filter  noteKind
	view    *seqList // the pane's filter hides the rest: these rows are shown (nil: rows[filter])
	dropped int      // rows gone with frames a session without a journal forgot
}

func newHistory(s *session.Session) *history {
	h := &history{s: s, st: s.Store(), listens: map[string]bool{}, notes: map[string]*callNotes{}}
	base := max(h.st.First(), 1)
	for k := range h.rows {
		h.rows[k].base = base
	}
	return h
}

// pull takes what the store and the session gained since the last pull.
// It reports how many rows of the shown filter went (forgotten frames of
// a session without a journal), so selections can follow.
func (h *history) pull() (gone int) {
	fresh, total := h.s.CallsSince(h.ncalls)
	h.ncalls = total
	for _, c := range fresh {
		if c.Method == listen.Method {
			h.listens[c.Key] = true
			h.streams = append(h.streams, c)
		} else if len(h.listens) > 0 {
			delete(h.listens, c.Key) // the key's latest call is another one
		}
		if !ended(c) {
			h.live = append(h.live, c)
		}
	}
	if first := h.st.First(); first > 0 {
		for k := range h.rows {
			n := h.rows[k].trimBelow(first)
			if noteKind(k) == h.filter {
				gone = n
			}
			if k == int(kindAll) {
				h.dropped += n
			}
		}
		if h.view != nil {
			gone = h.view.trimBelow(first)
		}
	}
	h.st.Scan(h.lastSeq+1, 0, func(e framestore.Entry) bool {
		h.lastSeq = e.Seq
		if e.CallKey != "" && e.Class == journal.ClassNotification && e.Dir == transport.In {
			cn := h.notes[e.CallKey]
			if cn == nil && h.isListen(e.CallKey) {
				cn = &callNotes{}
				h.notes[e.CallKey] = cn
			}
			if cn != nil && e.Method != "notifications/subscriptions/acknowledged" {
				cn.n++
				cn.last = e.Method
			}
		}
		if k, ok := classify(e); ok {
			h.rows[kindAll].add(e.Seq)
			h.rows[k].add(e.Seq)
		}
		return true
	})
	return gone
}

// call is call i of those taken in (i < ncalls).
func (h *history) call(i int) *session.Call { return h.s.CallAt(i) }

// isListen reports whether the call taken in with this key is a listen
// call. (Not through the session: Scan's callback runs under the store's
// lock, which the session takes under its own.)
func (h *history) isListen(key string) bool { return h.listens[key] }

// running returns calls that have not ended, in call order, and forgets
// the ones that have.
func (h *history) running() []*session.Call {
	n := 0
	for _, c := range h.live {
		if !ended(c) {
			h.live[n] = c
			n++
		}
	}
	clear(h.live[n:])
	h.live = h.live[:n]
	if cap(h.live) > 64 && n < cap(h.live)/4 {
		h.live = slices.Clone(h.live) // a burst ended: let its room go
	}
	if n == 0 {
		return nil
	}
	return slices.Clone(h.live)
}

// ended reports whether the call has ended.
func ended(c *session.Call) bool {
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}

func (h *history) setFilter(k noteKind) { h.filter = k }

// shown is the list of rows the pane shows.
func (h *history) shown() *seqList {
	if h.view != nil {
		return h.view
	}
	return &h.rows[h.filter]
}

func (h *history) noteLen() int { return h.shown().len() }

// noteSeq is the frame of row i of the shown filter.
func (h *history) noteSeq(i int) uint64 { return h.shown().at(i) }

// count is how many rows a filter has.
func (h *history) count(k noteKind) int { return h.rows[k].len() }

// noteRow is one row of the notifications pane, read back for drawing.
type noteRow struct {
	it   *framestore.Item
	kind noteKind
}

// noteAt reads row i of the shown filter back from the store.
func (h *history) noteAt(i int) noteRow {
	seq := h.noteSeq(i)
	it := h.st.Get(seq)
	if it == nil {
		// Forgotten between the pull and now (no journal): a row that says so.
		it = &framestore.Item{Seq: seq, Note: "frame not kept (no journal)"}
		return noteRow{it, kindOther}
	}
	k, _ := classify(entryOf(it))
	return noteRow{it, k}
}
