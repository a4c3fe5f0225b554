package ui

import (
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/filter"
	"mcpscope/framefilter"
	"mcpscope/framestore"
	"mcpscope/internal/termsafe"
	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/transport"
	"mcpscope/ui/filterline"
)

// Filtering the panes with the filter language (package filter).
//
// A pane's filter keeps what matches as 4 bytes a row, like the panes
// themselves: the requests pane keeps positions in history.calls, the
// notifications pane frame numbers. Rows are checked in bounded steps
// (filterBatch rows or filterBudget of time, whichever ends first), one step
// per filterStepMsg, so a filter over a million rows never holds the UI
// loop: keys are handled between steps and the title says how far it got.
//
// A call (a row of the requests pane) matches when its request frame or its
// first response frame matches, each described with the call's current
// state (framefilter.Subjects.FillItem). A call still running is checked again
// when it ends, and on every refresh while it runs if the filter reads what
// changes (~s ~e ~dur). A row of the notifications pane is one frame,
// checked once.
//
// A filter either hides the other rows (the default) or shows every row
// and marks the matches (H toggles); n and N jump between the matches.

const (
	filterBatch  = 2048                 // rows checked per step at most
	filterBudget = 8 * time.Millisecond // time one step may take at most
	recheckBatch = 256                  // running calls checked again per refresh at most
	sinceDensity = 4                    // notes rows read with one Since when at least 1 frame in this many is a row
)

// callFilter is the requests pane's filter.
type callFilter struct {
	expr   string
	f      *filter.Filter
	hl     bool     // highlight the matches instead of hiding the rest
	hits   []uint32 // positions in history.calls that match, ascending
	next   int      // calls before next have been checked once
	open   []uint32 // checked while running: checked again as they change
	openAt int      // where the next recheck of open starts
	anchor int      // the call selected when the filter was set (-1: follow)
	placed bool     // the selection was put back on the anchor
}

// noteFilter is the notifications pane's filter, over the rows of the
// shown kind.
type noteFilter struct {
	expr    string
	f       *filter.Filter
	hl      bool
	kind    noteKind
	hits    seqList // matching rows' frame numbers
	nextSeq uint64  // rows below this frame number have been checked
	anchor  uint64  // the frame selected when the filter was set (0: follow)
	placed  bool
}

// findState is the model's filtering: one filter per pane, and the input
// line when it is open.
type findState struct {
	req      callFilter
	note     noteFilter
	prompt   *filterline.Line
	stepping bool // a filterStepMsg is on its way
	subj     *framefilter.Subjects
	// lastKey/lastSn cache one call's snapshot across a step (a progress
	// flood is one call's frames).
	lastKey string
	lastSn  session.CallSnapshot
}

// filterStepMsg is sent by the step command while a filter has rows left
// to check.
type filterStepMsg struct{}

// emptyFilter reports a filter that keeps every row: no filter at all.
func emptyFilter(f *filter.Filter) bool { return f == nil || f.String() == "" }

// setCallFilter filters the requests pane by f (nil or empty: no filter).
func (m *Model) setCallFilter(expr string, f *filter.Filter) {
	cf := &m.find.req
	sel := m.selectedIndex()
	hl := cf.hl
	*cf = callFilter{hl: hl, anchor: sel}
	if m.req.follow {
		cf.anchor = -1
	}
	if emptyFilter(f) {
		m.req.sel = max(sel, 0)
		m.fixScroll()
		return
	}
	cf.expr, cf.f = strings.TrimSpace(expr), f
	if !hl {
		m.req.sel, m.req.top = 0, 0
	}
	m.fixScroll()
}

// setNoteFilter filters the notifications pane by f (nil or empty: no
// filter). A paused pane resumes: its frozen row count means nothing
// under another filter.
func (m *Model) setNoteFilter(expr string, f *filter.Filter) {
	nf := &m.find.note
	var anchor uint64
	if n := m.visibleNotes(); n > 0 && !m.note.follow {
		anchor = m.h.noteSeq(clamp(m.note.sel, 0, n-1))
	}
	hl := nf.hl
	m.h.view = nil
	*nf = noteFilter{hl: hl, kind: m.h.filter, anchor: anchor}
	nf.hits.base = max(m.s.Store().First(), 1)
	m.paused = false
	if emptyFilter(f) {
		m.note.sel = m.rowOfSeq(anchor)
		m.fixScroll()
		return
	}
	nf.expr, nf.f = strings.TrimSpace(expr), f
	if !hl {
		m.h.view = &nf.hits
		m.note.sel, m.note.top = 0, 0
	}
	m.fixScroll()
}

// rowOfSeq is the row of the shown list at or after frame seq (0: the
// last row, following).
func (m *Model) rowOfSeq(seq uint64) int {
	n := m.h.noteLen()
	if seq == 0 {
		m.note.follow = true
		return max(0, n-1)
	}
	return clamp(sort.Search(n, func(i int) bool { return m.h.noteSeq(i) >= seq }), 0, n-1)
}

// selectedIndex is the position in history.calls of the selected call
// (-1: none).
func (m *Model) selectedIndex() int {
	n := m.reqLen()
	if n == 0 {
		return -1
	}
	return m.reqIndex(clamp(m.req.sel, 0, n-1))
}

// reqLen is how many rows the requests pane has.
func (m *Model) reqLen() int {
	if cf := &m.find.req; cf.f != nil && !cf.hl {
		return len(cf.hits)
	}
	return m.h.ncalls
}

// reqIndex is the position in history.calls of row i.
func (m *Model) reqIndex(i int) int {
	if cf := &m.find.req; cf.f != nil && !cf.hl {
		return int(cf.hits[i])
	}
	return i
}

// reqCall is row i of the requests pane.
func (m *Model) reqCall(i int) *session.Call { return m.h.call(m.reqIndex(i)) }

// toggleFilterMode switches the focused pane between hiding and
// highlighting, keeping the selection on the same row where it can.
func (m *Model) toggleFilterMode() {
	if m.focus == paneNotes {
		nf := &m.find.note
		if nf.f == nil {
			m.setFlash("no filter on the pane: " + m.keyOf("filter") + " sets one")
			return
		}
		var seq uint64
		if n := m.visibleNotes(); n > 0 {
			seq = m.h.noteSeq(clamp(m.note.sel, 0, n-1))
		}
		nf.hl = !nf.hl
		m.h.view = nil
		if !nf.hl {
			m.h.view = &nf.hits
		}
		if seq != 0 {
			m.note.sel = m.rowOfSeq(seq)
		}
	} else {
		cf := &m.find.req
		if cf.f == nil {
			m.setFlash("no filter on the pane: " + m.keyOf("filter") + " sets one")
			return
		}
		idx := m.selectedIndex()
		cf.hl = !cf.hl
		if cf.hl {
			m.req.sel = max(idx, 0)
		} else {
			m.req.sel = sort.Search(len(cf.hits), func(i int) bool { return int(cf.hits[i]) >= idx })
		}
	}
	m.setFlash(map[bool]string{true: "filter: showing every row, matches marked (n/N jump)", false: "filter: showing the matches only"}[m.filterHL()])
	m.fixScroll()
}

func (m *Model) filterHL() bool {
	if m.focus == paneNotes {
		return m.find.note.hl
	}
	return m.find.req.hl
}

// jumpMatch moves the selection to the next (d > 0) or previous match.
func (m *Model) jumpMatch(d int) {
	ls, n := m.focused()
	if n == 0 {
		return
	}
	hl := m.filterHL()
	if !hl || (m.focus == paneNotes && m.find.note.f == nil) || (m.focus == paneRequests && m.find.req.f == nil) {
		m.move(ls, n, d) // every row shown is a match
		return
	}
	sel := clamp(ls.sel, 0, n-1)
	to := -1
	if m.focus == paneRequests {
		hits := m.find.req.hits
		i := sort.Search(len(hits), func(i int) bool { return int(hits[i]) > sel })
		if d < 0 {
			i = sort.Search(len(hits), func(i int) bool { return int(hits[i]) >= sel }) - 1
		}
		if i >= 0 && i < len(hits) {
			to = int(hits[i])
		}
	} else {
		hits := &m.find.note.hits
		cur := m.h.noteSeq(sel)
		i := sort.Search(hits.len(), func(i int) bool { return hits.at(i) > cur })
		if d < 0 {
			i = sort.Search(hits.len(), func(i int) bool { return hits.at(i) >= cur }) - 1
		}
		if i >= 0 && i < hits.len() {
			to = m.rowOfSeq(hits.at(i))
		}
	}
	if to < 0 {
		m.setFlash(map[bool]string{true: "no match below", false: "no match above"}[d > 0])
		return
	}
	ls.sel, ls.follow = to, false
	m.fixScroll()
}

// clearFilter drops the focused pane's filter.
func (m *Model) clearFilter() {
	if m.focus == paneNotes {
		if m.find.note.f != nil {
			m.setNoteFilter("", nil)
			m.setFlash("notifications: filter cleared")
		}
		return
	}
	if m.find.req.f != nil {
		m.setCallFilter("", nil)
		m.setFlash("requests: filter cleared")
	}
}

// busy reports rows left to check.
func (fs *findState) busy(m *Model) bool {
	if cf := &fs.req; cf.f != nil && cf.next < m.h.ncalls {
		return true
	}
	if nf := &fs.note; nf.f != nil {
		base := &m.h.rows[nf.kind]
		return base.len() > 0 && base.at(base.len()-1) >= nf.nextSeq
	}
	return false
}

// kick starts a step when rows are left and none is on its way.
func (fs *findState) kick(m *Model) tea.Cmd {
	if fs.stepping || !fs.busy(m) {
		return nil
	}
	fs.stepping = true
	return func() tea.Msg { return filterStepMsg{} }
}

// step checks one bounded batch of rows of each pane's filter.
func (fs *findState) step(m *Model) {
	fs.stepping = false
	if fs.subj == nil {
		fs.subj = framefilter.NewSubjects()
	}
	fs.lastKey = ""
	start := time.Now()
	now := m.opts.Now()
	if cf := &fs.req; cf.f != nil {
		for n := 0; cf.next < m.h.ncalls && n < filterBatch; n++ {
			if n%64 == 63 && time.Since(start) > filterBudget {
				break
			}
			i := cf.next
			cf.next++
			hit, ended := fs.checkCall(m, i, now)
			if hit {
				fs.setHit(m, i, true)
			}
			if !ended {
				cf.open = append(cf.open, uint32(i))
			}
		}
		fs.placeCall(m)
	}
	if nf := &fs.note; nf.f != nil {
		if nf.kind != m.h.filter { // the kind changed under it: start over
			m.setNoteFilter(nf.expr, nf.f)
		}
		fs.stepNotes(m, start, now)
	}
	m.fixScroll()
}

// placeCall puts the selection back on the call selected when the filter
// was set (or the first match after it), once the scan has passed it.
func (fs *findState) placeCall(m *Model) {
	cf := &fs.req
	if cf.placed || cf.hl {
		return
	}
	if cf.anchor < 0 {
		cf.placed = true
		m.req.follow = true
		return
	}
	if cf.next > cf.anchor || cf.next >= m.h.ncalls {
		cf.placed = true
		m.req.sel = min(sort.Search(len(cf.hits), func(i int) bool { return int(cf.hits[i]) >= cf.anchor }), max(0, len(cf.hits)-1))
	}
}

// checkCall matches call i by its request and its response.
func (fs *findState) checkCall(m *Model, i int, now time.Time) (hit, ended bool) {
	c := m.h.call(i)
	sn := c.Snapshot()
	ended = sn.State.Ended()
	f := fs.req.f
	st := m.s.Store()
	if it := st.Get(sn.Seq); sn.Seq != 0 && it != nil {
		if f.Match(fs.subj.FillItem(it, &sn, now)) {
			return true, ended
		}
	} else {
		// Not sent yet, or forgotten (no journal): the request as the call
		// remembers it.
		fr := transport.Frame{Time: sn.Started, Dir: transport.Out, Kind: transport.Message}
		if f.Match(fs.subj.Fill(&fr, &journal.Envelope{ID: sn.ID, Method: sn.Method}, &sn, now)) {
			return true, ended
		}
	}
	if sn.RespSeq != 0 {
		if it := st.Get(sn.RespSeq); it != nil && f.Match(fs.subj.FillItem(it, &sn, now)) {
			return true, ended
		}
	}
	return false, ended
}

// setHit adds or removes call i from the matches, keeping the selection
// on its row when rows are hidden.
func (fs *findState) setHit(m *Model, i int, on bool) {
	cf := &fs.req
	p := sort.Search(len(cf.hits), func(k int) bool { return int(cf.hits[k]) >= i })
	has := p < len(cf.hits) && int(cf.hits[p]) == i
	switch {
	case on && !has:
		cf.hits = append(cf.hits, 0)
		copy(cf.hits[p+1:], cf.hits[p:])
		cf.hits[p] = uint32(i)
		if !cf.hl && cf.placed && !m.req.follow && p <= m.req.sel {
			m.req.sel++
		}
	case !on && has:
		cf.hits = append(cf.hits[:p], cf.hits[p+1:]...)
		if !cf.hl && !m.req.follow && p < m.req.sel {
			m.req.sel--
		}
	}
}

// recheck checks again the calls that were running when checked: once
// they end, and on every refresh while they run if the filter reads what
// changes. Bounded per refresh.
func (fs *findState) recheck(m *Model) {
	cf := &fs.req
	if cf.f == nil || len(cf.open) == 0 {
		return
	}
	if fs.subj == nil {
		fs.subj = framefilter.NewSubjects()
	}
	fs.lastKey = ""
	volatile := cf.f.Volatile()
	now := m.opts.Now()
	n := min(len(cf.open), recheckBatch)
	cf.openAt %= len(cf.open)
	keep := cf.open[:0:0]
	var done []uint32
	for k := 0; k < n; k++ {
		i := cf.open[(cf.openAt+k)%len(cf.open)]
		c := m.h.call(int(i))
		select {
		case <-c.Done():
			done = append(done, i)
		default:
			if !volatile {
				continue
			}
		}
		hit, _ := fs.checkCall(m, int(i), now)
		fs.setHit(m, int(i), hit)
	}
	if len(done) > 0 {
		gone := map[uint32]bool{}
		for _, i := range done {
			gone[i] = true
		}
		for _, i := range cf.open {
			if !gone[i] {
				keep = append(keep, i)
			}
		}
		cf.open = keep
	}
	cf.openAt += n
}

// stepNotes checks the next rows of the notifications pane's kind list.
func (fs *findState) stepNotes(m *Model, start, now time.Time) {
	nf := &fs.note
	base := &m.h.rows[nf.kind]
	st := m.s.Store()
	i := sort.Search(base.len(), func(k int) bool { return base.at(k) >= nf.nextSeq })
	end := min(base.len(), i+filterBatch)
	if i >= end {
		return
	}
	// Rows close together are read with one Since (adjacent journal lines
	// come in one read); sparse rows one by one.
	var items []*framestore.Item
	if span := base.at(end-1) - base.at(i) + 1; span <= uint64(end-i)*sinceDensity {
		items = st.Since(base.at(i)-1, int(span))
	}
	k := 0
	for ; i < end; i++ {
		if i%64 == 63 && time.Since(start) > filterBudget {
			break
		}
		seq := base.at(i)
		var it *framestore.Item
		if items != nil {
			for k < len(items) && items[k].Seq < seq {
				k++
			}
			if k < len(items) && items[k].Seq == seq {
				it = items[k]
			}
		} else {
			it = st.Get(seq)
		}
		nf.nextSeq = seq + 1
		if it == nil || seq < nf.hits.base {
			continue // forgotten (no journal): nothing to match
		}
		if nf.f.Match(fs.subj.FillItem(it, fs.callOf(m, it.CallKey), now)) {
			nf.hits.add(seq)
		}
	}
	if !nf.placed && !nf.hl {
		switch {
		case nf.anchor == 0:
			nf.placed, m.note.follow = true, true
		case nf.nextSeq > nf.anchor || !fs.busy(m):
			nf.placed = true
			m.note.sel = m.rowOfSeq(nf.anchor)
		}
	}
}

// callOf is the snapshot of the call a frame belongs to (nil: none).
func (fs *findState) callOf(m *Model, key string) *session.CallSnapshot {
	if key == "" {
		return nil
	}
	if key != fs.lastKey {
		c := m.s.Lookup(key)
		if c == nil {
			return nil
		}
		fs.lastKey, fs.lastSn = key, c.Snapshot()
	}
	return &fs.lastSn
}

// reqFilterTitle is what the requests pane's title says of its filter.
func (m *Model) reqFilterTitle() string {
	cf := &m.find.req
	if cf.f == nil {
		return ""
	}
	return m.filterTitle(cf.expr, len(cf.hits), cf.hl, cf.next, m.h.ncalls)
}

func (m *Model) noteFilterTitle() string {
	nf := &m.find.note
	if nf.f == nil {
		return ""
	}
	base := &m.h.rows[nf.kind]
	done := sort.Search(base.len(), func(k int) bool { return base.at(k) >= nf.nextSeq })
	return m.filterTitle(nf.expr, nf.hits.len(), nf.hl, done, base.len())
}

// filterTitle is " · 3 match ~e" (highlighting), or " · filter ~e" when
// hiding (the count is the pane's), with how far the check got while it
// runs.
func (m *Model) filterTitle(expr string, hits int, hl bool, done, total int) string {
	s := " · "
	if hl {
		s += itoa(hits) + " match "
	} else {
		s += "filter "
	}
	s += termsafe.Line(shorten(expr, 40))
	if done < total {
		s += " · checking " + itoa(done*100/max(total, 1)) + "%"
	}
	return s
}

// markRow decorates a pane row in highlight mode: a match gets a mark, the
// rest are faint. row starts with its one-column selection mark.
func (m *Model) markRow(row string, hit, sel bool) string {
	if sel {
		return row
	}
	if hit {
		_, rest, _ := strings.Cut(row, " ")
		return m.th.Match.Render("•") + rest
	}
	return m.th.Faint.Render(ansi.Strip(row))
}

// callHit reports whether call i matches the requests pane's filter.
func (m *Model) callHit(i int) bool {
	hits := m.find.req.hits
	p := sort.Search(len(hits), func(k int) bool { return int(hits[k]) >= i })
	return p < len(hits) && int(hits[p]) == i
}

// noteHit reports whether frame seq matches the notifications pane's filter.
func (m *Model) noteHit(seq uint64) bool {
	h := &m.find.note.hits
	p := sort.Search(h.len(), func(k int) bool { return h.at(k) >= seq })
	return p < h.len() && h.at(p) == seq
}

// refresh follows what the session gained: frames a session without a
// journal forgot leave the matches, and running calls are checked again.
func (fs *findState) refresh(m *Model) {
	if nf := &fs.note; nf.f != nil {
		if first := m.s.Store().First(); first > 0 {
			nf.hits.trimBelow(first)
		}
	}
	fs.recheck(m)
}
