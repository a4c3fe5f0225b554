package ui

import (
	"mcpscope/session"
	"mcpscope/transport"
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

// classify says whether an item belongs in the notifications pane and as
// what. Client requests and their responses live in the requests pane;
// responses the session could not place (late, unknown id) are "other"
// here too, because they deserve to be seen.
func classify(it *session.Item) (noteKind, bool) {
	switch it.Frame.Kind {
	case transport.Stderr:
		return kindStderr, true
	case transport.Event:
		return kindEvent, true
	case transport.Garbage:
		return kindOther, true
	}
	if it.Frame.Dir != transport.In {
		return 0, false
	}
	switch it.Class {
	case session.ClassNotification:
		switch it.Env.Method {
		case "notifications/message":
			return kindLog, true
		case "notifications/progress":
			return kindProgress, true
		}
		return kindNotify, true
	case session.ClassRequest:
		return kindRequest, true
	case session.ClassResult, session.ClassError:
		if it.Note != "" {
			return kindOther, true
		}
		return 0, false
	}
	return kindOther, true
}

type noteRow struct {
	it   *session.Item
	kind noteKind
}

// history is the UI's incremental index of the session: calls in order,
// notification rows, and items by call. It only ever appends, so pulling
// is proportional to what is new, not to the session's length.
type history struct {
	s        *session.Session
	lastSeq  uint64
	calls    []*session.Call
	index    map[string]int // call key → position in calls
	live     map[string]*session.Call
	byCall   map[string][]*session.Item
	notes    []noteRow
	filter   noteKind
	filtered []int32 // positions in notes that match filter (unused for kindAll)
	counts   [numKinds]int
}

func newHistory(s *session.Session) *history {
	return &history{s: s, index: map[string]int{}, live: map[string]*session.Call{}, byCall: map[string][]*session.Item{}}
}

// pull takes what the store and the session gained since the last pull.
func (h *history) pull() {
	for _, c := range h.s.CallsSince(len(h.calls)) {
		h.index[c.Key] = len(h.calls)
		h.calls = append(h.calls, c)
		h.live[c.Key] = c
	}
	for _, it := range h.s.Store().Since(h.lastSeq, 0) {
		h.lastSeq = it.Seq
		if it.CallKey != "" {
			h.byCall[it.CallKey] = append(h.byCall[it.CallKey], it)
		}
		if k, ok := classify(it); ok {
			h.counts[k]++
			h.notes = append(h.notes, noteRow{it, k})
			if h.filter != kindAll && k == h.filter {
				h.filtered = append(h.filtered, int32(len(h.notes)-1))
			}
		}
	}
}

// running returns calls that have not ended, in call order, and forgets
// the ones that have.
func (h *history) running() []*session.Call {
	var out []*session.Call
	for k, c := range h.live {
		select {
		case <-c.Done():
			delete(h.live, k)
			continue
		default:
		}
		out = append(out, c)
	}
	// Map order is random; sort by position so rows do not jump.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && h.index[out[j].Key] < h.index[out[j-1].Key]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func (h *history) setFilter(k noteKind) {
	h.filter = k
	h.filtered = h.filtered[:0]
	if k == kindAll {
		return
	}
	for i, n := range h.notes {
		if n.kind == k {
			h.filtered = append(h.filtered, int32(i))
		}
	}
}

func (h *history) noteLen() int {
	if h.filter == kindAll {
		return len(h.notes)
	}
	return len(h.filtered)
}

func (h *history) noteAt(i int) noteRow {
	if h.filter == kindAll {
		return h.notes[i]
	}
	return h.notes[h.filtered[i]]
}
