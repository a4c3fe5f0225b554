// Package waterfall is the waterfall view (w).
package waterfall

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/framestore"
	"mcpscope/internal/termsafe"
	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/themes"
	"mcpscope/transport"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
	"mcpscope/ui/widget"
)

// The waterfall (w) draws the session's calls on one time axis, the way a
// browser's network panel does: one row per call, a bar from send to
// answer, marks for what happened on the way.
//
// A multi-round call (MRTR input_required rounds) and a request re-issued
// after a broken stream are one row: the rounds are segments of one bar,
// with the time spent waiting on the person drawn between them. The
// question a waterfall answers is "how long did this take, and where did
// the time go"; linked rows would hide the person's share in the gaps
// between rows and leave the reader to add up. The requests pane still
// lists every round on its own row.

// Scope is where the view's keys are looked up.
const Scope keys.Scope = "waterfall"

// Session is what the waterfall reads of the session, and the one intent
// it sends.
type Session interface {
	// Calls is how many calls the UI has taken in; Call is call i of
	// them, in order.
	Calls() int
	Call(i int) *session.Call
	// Lookup finds a call by key (the session's map: the UI keeps none).
	Lookup(key string) *session.Call
	Store() *framestore.Store
	Transport() transport.Transport // nil for a recording
	// Open shows the call in the detail.
	Open(c *session.Call) view.Action
}

// Keys is the view's part of the keymap.
var Keys = view.Group{Scope: Scope, Bindings: bindings.Keys(),
	Footer: []string{"waterfall-zoom-in", "waterfall-zoom-out", "waterfall-earlier", "waterfall-later", "open", "waterfall-close", "help"}}

var bindings = view.Bindings[*View]{
	{Binding: keys.Binding{Name: "waterfall-zoom-in", Scope: Scope, Keys: []string{"+", "="}, Help: "zoom in (less time per column)"},
		Run: act(func(v *View, m env) { v.zoom(m, -1) })},
	{Binding: keys.Binding{Name: "waterfall-zoom-out", Scope: Scope, Keys: []string{"-"}, Help: "zoom out (more time per column)"},
		Run: act(func(v *View, m env) { v.zoom(m, 1) })},
	{Binding: keys.Binding{Name: "waterfall-fit", Scope: Scope, Keys: []string{"0"}, Help: "fit: the whole session in view, following it", Short: "fit"},
		Run: act(func(v *View, _ env) { v.fit, v.live, v.left = true, true, 0 })},
	{Binding: keys.Binding{Name: "waterfall-earlier", Scope: Scope, Keys: []string{"left", "h"}, Help: "earlier (a quarter of the view)"},
		Run: act(func(v *View, m env) { v.scroll(m, -1, 4) })},
	{Binding: keys.Binding{Name: "waterfall-later", Scope: Scope, Keys: []string{"right", "l"}, Help: "later (a quarter of the view); at the end, follow the clock"},
		Run: act(func(v *View, m env) { v.scroll(m, 1, 4) })},
	{Binding: keys.Binding{Name: "waterfall-page-earlier", Scope: Scope, Keys: []string{"H", "shift+left"}, Help: "earlier by a whole view"},
		Run: act(func(v *View, m env) { v.scroll(m, -1, 1) })},
	{Binding: keys.Binding{Name: "waterfall-page-later", Scope: Scope, Keys: []string{"L", "shift+right"}, Help: "later by a whole view"},
		Run: act(func(v *View, m env) { v.scroll(m, 1, 1) })},
	{Binding: keys.Binding{Name: "waterfall-close", Scope: Scope, Keys: []string{"esc", "w"}, Help: "back to the session", Short: "back"},
		Run: func(*View, view.Context) view.Action { return view.Close() }},

	// Global bindings the waterfall gives a meaning of its own.
	{Binding: keys.Binding{Name: "quit"}, Run: func(*View, view.Context) view.Action { return view.Action{Quit: true} }},
	{Binding: keys.Binding{Name: "help"}, Run: func(*View, view.Context) view.Action { return view.Action{Help: true} }},
	{Binding: keys.Binding{Name: "up"}, Run: moveBy(func(env) int { return -1 })},
	{Binding: keys.Binding{Name: "down"}, Run: moveBy(func(env) int { return 1 })},
	{Binding: keys.Binding{Name: "page-up"}, Run: moveBy(func(m env) int { return -m.wfRowsHeight(m.hgt - 2) })},
	{Binding: keys.Binding{Name: "page-down"}, Run: moveBy(func(m env) int { return m.wfRowsHeight(m.hgt - 2) })},
	{Binding: keys.Binding{Name: "top"}, Run: func(v *View, c view.Context) view.Action {
		v.sel, v.follow = 0, false
		return v.done(newEnv(c, v.s), true)
	}},
	{Binding: keys.Binding{Name: "follow"}, Run: act(func(v *View, _ env) { v.sel, v.follow, v.live = max(0, len(v.roots)-1), true, true })},
	{Binding: keys.Binding{Name: "open"}, Run: func(v *View, c view.Context) view.Action {
		m := newEnv(c, v.s)
		var a view.Action
		if len(v.roots) > 0 {
			if call := v.chainEnd(m, v.rootCall(m, v.sel)); call != nil {
				a = v.s.Open(call)
			}
		}
		return a.Then(v.done(m, false))
	}},
}

// act fits a change of the view to a binding's handler.
func act(f func(v *View, m env)) func(*View, view.Context) view.Action {
	return func(v *View, c view.Context) view.Action {
		m := newEnv(c, v.s)
		f(v, m)
		return v.done(m, false)
	}
}

// moveBy moves the selection by d rows.
func moveBy(d func(m env) int) func(*View, view.Context) view.Action {
	return func(v *View, c view.Context) view.Action {
		m := newEnv(c, v.s)
		n, d := len(v.roots), d(m)
		v.sel = clamp(v.sel+d, 0, n-1)
		v.follow = v.sel == n-1 && d > 0
		return v.done(m, true)
	}
}

// done keeps the rows in view after a key, and the selected row's bar
// when the selection moved.
func (v *View) done(m env, moved bool) view.Action {
	v.fixRows(m)
	if moved {
		v.showSelected(m)
	}
	return view.Action{}
}

// env is what the view works with during one key or render: the context
// and the session, under the names the drawing code uses.
type env struct {
	th     themes.Theme
	w, hgt int
	opts   view.Context
	h      history
	s      Session
}

type history struct{ s Session }

func newEnv(c view.Context, s Session) env {
	return env{th: c.Theme, w: c.Width, hgt: c.Height, opts: c, h: history{s}, s: s}
}

var (
	clamp  = widget.Clamp
	fit    = widget.Fit
	pad    = widget.Pad
	fmtDur = widget.Dur
	itoa   = strconv.Itoa
)

// wfScales are the zoom levels: the time one column stands for.
var wfScales = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
	50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 6 * time.Hour, 24 * time.Hour,
}

// Glyphs of the bar. Each meaning has its own glyph, so the view reads
// without colour (NO_COLOR, monochrome terminals); colour only repeats it.
const (
	glyphServer    = '█' // the server has answered something: it works on it
	glyphWait      = '▒' // sent, nothing back yet (time to first byte)
	glyphHuman     = '┄' // waiting on the person (an elicitation, sampling or roots answer)
	glyphFirstByte = '│'
	glyphProgress  = '•'
	glyphReissue   = '↯' // the response stream broke: sent again with a new id
	glyphResume    = '↻' // the response stream resumed (Last-Event-ID)
)

// wfKind is what a stretch of a bar is.
type wfKind uint8

const (
	wfNone wfKind = iota
	wfHuman
	wfWait
	wfServer
)

// wfSpan is a stretch of a row's bar.
type wfSpan struct {
	from, to time.Time
	kind     wfKind
}

// wfMark is one event on a row, drawn as one glyph.
type wfMark struct {
	at    time.Time
	glyph rune
	prio  int // which mark wins a column several fall into
}

// Mark priorities: structure (rounds, re-issues, resumes) before the
// answer, before the first byte, before progress steps.
const (
	prioProgress = iota + 1
	prioFirstByte
	prioEnd
	prioResume
	prioRound
)

// wfOutcome is how a row ended (or that it has not).
type wfOutcome struct {
	word  string
	glyph rune
	style lipgloss.Style
}

// wfRow is one call (with its rounds and re-issues) as the waterfall draws
// it. Built for the visible rows on each render from call snapshots and
// the store's index; never kept.
type wfRow struct {
	key, method, name string // as the client sent them (not yet sanitized)
	start, end        time.Time
	ended             bool
	spans             []wfSpan
	marks             []wfMark
	out               wfOutcome
	rounds, reissues  int
	progress, resumes int
	server, human     time.Duration
	ttfb              time.Duration // -1: no byte yet
	err               string
}

// callMarks is what the index says about one call, found by scanning it
// from the call's request on: kept per call key for the rows on screen,
// grown as frames arrive, dropped when off screen for long.
type callMarks struct {
	next      uint64 // next frame to look at (0: not started)
	done      bool   // the call's frames are all seen
	firstByte time.Time
	progress  []time.Time // at most maxProgressMarks, evenly thinned
	stride    int         // keep every stride-th progress step
	nProgress int
	resumes   []time.Time
	human     []wfSpan             // legacy server requests answered by the person
	asked     map[string]time.Time // server requests still waiting for our answer, by id
	used      int                  // the render that last used it
}

// Bounds of what the waterfall keeps.
const (
	maxProgressMarks = 256
	maxSpanMarks     = 32
	maxMarkCache     = 1024
	// scanBudget bounds the index entries one render looks at; marks of
	// long calls in a flood fill in over a few frames instead.
	scanBudget = 200_000
	// endSlack is how far past a call's end its frames are looked for
	// (frames are stamped by different goroutines, a little out of order).
	endSlack = time.Second
)

// humanMethods are the server requests a person answers.
var humanMethods = map[string]bool{"elicitation/create": true, "sampling/createMessage": true, "roots/list": true}

// View is the waterfall's rows, zoom and position, and the marks found
// so far.
type View struct {
	s Session

	roots  []int32         // positions in the history of the rows: calls that are no retry or re-issue
	seen   int             // calls of the history looked at
	open   []*session.Call // calls whose row may still grow
	maxEnd time.Time       // latest end of the calls no longer open

	sel, top int
	follow   bool          // the newest row stays selected
	fit      bool          // the scale shows the whole session
	live     bool          // the right edge follows the clock
	scale    int           // index in wfScales, when not fit
	left     time.Duration // the bar area's left edge, from the origin

	marks   map[string]*callMarks
	renders int // counts renders, for the mark cache
	budget  int // index entries this render may still scan
}

// New opens the waterfall on the whole session, following it.
func New(c view.Context, s Session) *View {
	v := &View{s: s, follow: true, fit: true, live: true, marks: map[string]*callMarks{}}
	v.Refresh(c)
	return v
}

func (v *View) Scope() keys.Scope { return Scope }

// Refresh takes in new calls and notices calls that ended.
func (v *View) Refresh(c view.Context) { v.refresh(newEnv(c, v.s)) }

func (v *View) refresh(m env) {
	for n := m.h.s.Calls(); v.seen < n; v.seen++ {
		c := m.h.s.Call(v.seen)
		sn := c.Snapshot()
		if sn.Parent == "" && sn.ReissueOf == "" {
			v.roots = append(v.roots, int32(v.seen))
		}
		if chainOpen(sn) {
			v.open = append(v.open, c)
		} else if sn.Ended.After(v.maxEnd) {
			v.maxEnd = sn.Ended
		}
	}
	keep := v.open[:0]
	for _, c := range v.open {
		sn := c.Snapshot()
		if chainOpen(sn) {
			keep = append(keep, c)
		} else if sn.Ended.After(v.maxEnd) {
			v.maxEnd = sn.Ended
		}
	}
	clear(v.open[len(keep):])
	v.open = keep
	v.fixRows(m)
}

// chainOpen: the call runs, or its chain waits for the person's answer.
func chainOpen(sn session.CallSnapshot) bool {
	return !sn.State.Ended() || (sn.ResultType == "input_required" && sn.Next == "" && sn.ChainErr == nil)
}

// clock is the waterfall's now: the wall clock, except for a journal read
// back (no transport), which does not grow: it ends at its last frame.
func (v *View) clock(m env) time.Time {
	if m.s.Transport() == nil {
		st := m.s.Store()
		if e, ok := st.Entry(st.Last()); ok {
			return e.Time
		}
	}
	return m.opts.Now()
}

// origin is time 0 of the axis: the first call's start.
func (v *View) origin(m env) time.Time {
	if len(v.roots) == 0 {
		return v.clock(m)
	}
	return m.h.s.Call(int(v.roots[0])).Snapshot().Started
}

// span is how long the session's calls cover, from the origin.
func (v *View) span(m env, origin time.Time) time.Duration {
	end := v.maxEnd
	if len(v.open) > 0 {
		if c := v.clock(m); c.After(end) {
			end = c
		}
	}
	return max(0, end.Sub(origin))
}

// wfRightW is the outcome column: glyph, word, duration.
const wfRightW = 1 + 1 + 9 + 1 + 7

// Layout splits a width into the label column and the bar area (a space
// each side of the bar, then the outcome column). The outcome column never
// shrinks: durations are never cut.
func Layout(w int) (labelW, barW int) {
	labelW = 24
	if w >= 100 {
		labelW = min(40, w/4)
	}
	barW = w - labelW - wfRightW - 2
	if barW < 10 {
		labelW = max(6, labelW-(10-barW))
		barW = w - labelW - wfRightW - 2
	}
	return labelW, max(1, barW)
}

// rowsHeight is how many rows fit in a body of h lines: under the title
// and the axis, above a rule, the selected row's numbers and the legend.
func (m env) wfRowsHeight(h int) int { return max(1, h-4-len(m.legend(m.w))) }

// fitExact is the scale that shows span in exactly w columns (whole
// milliseconds, at least one).
func fitExact(span time.Duration, w int) time.Duration {
	per := (span + time.Duration(max(1, w)) - 1) / time.Duration(max(1, w))
	return max(time.Millisecond, (per+time.Millisecond-1)/time.Millisecond*time.Millisecond)
}

// fitScale is the finest zoom level that shows span in w columns.
func fitScale(span time.Duration, w int) int {
	for i, s := range wfScales {
		if s*time.Duration(max(1, w)) >= span {
			return i
		}
	}
	return len(wfScales) - 1
}

// window is what the bar area shows: the scale of a column and the time
// at its left edge, from the origin.
func (v *View) window(m env) (origin time.Time, scale, left time.Duration, barW int) {
	_, barW = Layout(m.w)
	origin = v.origin(m)
	span := v.span(m, origin)
	if v.fit {
		return origin, fitExact(span, barW), 0, barW
	}
	scale = wfScales[v.scale]
	width := scale * time.Duration(barW)
	left = v.left
	if v.live {
		left = span - width*9/10 // the clock at 9/10 of the width, room to grow
	}
	return origin, scale, clampLeft(left, span, width), barW
}

// clampLeft keeps the view on the session: never before the origin, and
// the end never further left than a quarter of the width.
func clampLeft(left, span, width time.Duration) time.Duration {
	return min(max(left, 0), max(0, span-width/4))
}

func (v *View) fixRows(m env) {
	n := len(v.roots)
	if v.follow {
		v.sel = n - 1
	}
	v.sel = clamp(v.sel, 0, n-1)
	h := m.wfRowsHeight(m.hgt - 2)
	if v.sel < v.top {
		v.top = v.sel
	}
	if v.sel >= v.top+h {
		v.top = v.sel - h + 1
	}
	v.top = clamp(v.top, 0, max(0, n-h))
}

func (v *View) Key(c view.Context, name string, _ tea.KeyPressMsg) view.Action {
	a, _ := bindings.Do(v, c, name)
	return a
}

// unfit leaves fit mode at the scale and position fit showed.
func (v *View) unfit(m env) {
	if !v.fit {
		return
	}
	origin, _, _, barW := v.window(m)
	v.scale = fitScale(v.span(m, origin), barW)
	v.fit, v.left = false, 0
}

// zoom changes the scale by d levels, keeping the middle of the view (or,
// following the clock, its right edge) where it is.
func (v *View) zoom(m env, d int) {
	v.unfit(m)
	origin, scale, left, barW := v.window(m)
	next := clamp(v.scale+d, 0, len(wfScales)-1)
	mid := left + scale*time.Duration(barW)/2
	v.scale = next
	v.left = mid - wfScales[next]*time.Duration(barW)/2
	span := v.span(m, origin)
	v.left = clampLeft(v.left, span, wfScales[next]*time.Duration(barW))
}

// scroll moves the view in time by a 1/div of its width, later (dir 1)
// or earlier (-1); reaching the end follows the clock again.
func (v *View) scroll(m env, dir, div int) {
	v.unfit(m)
	origin, scale, left, barW := v.window(m)
	width := scale * time.Duration(barW)
	step := time.Duration(dir) * width / time.Duration(div)
	span := v.span(m, origin)
	v.left = clampLeft(left+step, span, width)
	v.live = step > 0 && v.left+width >= span
}

// showSelected scrolls in time to the selected row when its bar is out of
// view, so moving through rows never lands on an empty line.
func (v *View) showSelected(m env) {
	if v.fit || len(v.roots) == 0 {
		return
	}
	origin, scale, left, barW := v.window(m)
	r := v.row(m, v.sel, v.clock(m))
	from, to := r.start.Sub(origin), r.end.Sub(origin)
	width := scale * time.Duration(barW)
	if to < left || from > left+width {
		v.left = clampLeft(from-width/8, v.span(m, origin), width)
		v.live = false
	}
}

func (v *View) rootCall(m env, i int) *session.Call {
	return m.h.s.Call(int(v.roots[clamp(i, 0, len(v.roots)-1)]))
}

// lookup finds a call by key, through the session (which also has the
// retries made since the last pull).
func lookup(m env, key string) *session.Call {
	return m.s.Lookup(key)
}

// chain is a row's calls: the root, then each retry round or re-issue
// (Next links), bounded.
func chain(m env, root *session.Call) []session.CallSnapshot {
	var out []session.CallSnapshot
	for c := root; c != nil && len(out) < 4*(session.MaxRounds+1); {
		sn := c.Snapshot()
		out = append(out, sn)
		if sn.Next == "" {
			break
		}
		c = lookup(m, sn.Next)
	}
	return out
}

// chainEnd is the call a row came to.
func (v *View) chainEnd(m env, root *session.Call) *session.Call {
	ch := chain(m, root)
	if c := lookup(m, ch[len(ch)-1].Key); c != nil {
		return c
	}
	return root
}

// row builds row i.
func (v *View) row(m env, i int, clock time.Time) wfRow {
	return v.rowOf(m, chain(m, v.rootCall(m, i)), clock)
}

// rowOf builds a row from its calls' snapshots and the marks found so far.
func (v *View) rowOf(m env, ch []session.CallSnapshot, clock time.Time) wfRow {
	first := ch[0]
	r := wfRow{key: first.Key, method: first.Method, name: first.Name, start: first.Started, ttfb: -1}
	for j, sn := range ch {
		end, ended := sn.Ended, sn.State.Ended()
		if !ended {
			end = clock
		}
		mk := v.marksFor(sn.Key)
		if j > 0 {
			if sn.ReissueOf != "" {
				r.reissues++
				r.marks = append(r.marks, wfMark{sn.Started, glyphReissue, prioRound})
			} else {
				r.rounds++
				g := '+'
				if sn.Round+1 <= 9 {
					g = rune('0' + sn.Round + 1)
				}
				r.marks = append(r.marks, wfMark{sn.Started, g, prioRound})
			}
		}
		fb := mk.firstByte
		if fb.IsZero() || fb.After(end) {
			r.spans = append(r.spans, wfSpan{sn.Started, end, wfWait})
		} else {
			r.spans = append(r.spans, wfSpan{sn.Started, fb, wfWait}, wfSpan{fb, end, wfServer})
			r.marks = append(r.marks, wfMark{fb, glyphFirstByte, prioFirstByte})
			if r.ttfb < 0 {
				r.ttfb = fb.Sub(sn.Started)
			}
		}
		r.server += end.Sub(sn.Started)
		for _, at := range mk.progress {
			r.marks = append(r.marks, wfMark{at, glyphProgress, prioProgress})
		}
		r.progress += mk.nProgress
		for _, at := range mk.resumes {
			r.marks = append(r.marks, wfMark{at, glyphResume, prioResume})
		}
		r.resumes += len(mk.resumes)
		human := mk.human
		for _, at := range mk.asked {
			human = append(human, wfSpan{at, end, wfHuman}) // still waiting for the person
		}
		for _, h := range human {
			h.from, h.to = later(h.from, sn.Started), earlier(h.to, end)
			if h.to.After(h.from) {
				r.spans = carve(r.spans, h)
				r.human += h.to.Sub(h.from)
				r.server -= h.to.Sub(h.from)
			}
		}
		r.end = end
		// The gap to the next round is the person answering (input_required)
		// or the client sending again (a re-issue).
		gapEnd, kind := time.Time{}, wfWait
		if sn.ResultType == "input_required" {
			kind = wfHuman
		}
		switch {
		case j+1 < len(ch):
			gapEnd = ch[j+1].Started
		case kind == wfHuman && sn.Next == "" && sn.ChainErr == nil && m.s.Transport() != nil:
			// The person has not answered yet. (A journal read back does not
			// link rounds: its retry is a row of its own, the wait unknown.)
			gapEnd = later(clock, end)
		}
		if gapEnd.After(end) {
			r.spans = append(r.spans, wfSpan{end, gapEnd, kind})
			if kind == wfHuman {
				r.human += gapEnd.Sub(end)
			}
			r.end = gapEnd
		}
	}
	ls := ch[len(ch)-1]
	r.out = m.outcome(ls)
	r.ended = !chainOpen(ls)
	if r.ended {
		r.marks = append(r.marks, wfMark{r.end, r.out.glyph, prioEnd})
	}
	if e := ls.Err(); e != nil && !errors.Is(e, session.ErrReissued) {
		r.err = e.Error()
	} else if ls.ChainErr != nil {
		r.err = ls.ChainErr.Error()
	}
	return r
}

// carve puts h in spans, cutting it out of the stretches it overlaps: the
// server waits on the person during h, so h is not server time.
func carve(spans []wfSpan, h wfSpan) []wfSpan {
	out := make([]wfSpan, 0, len(spans)+2)
	for _, s := range spans {
		if !s.from.Before(h.to) || !s.to.After(h.from) {
			out = append(out, s)
			continue
		}
		if s.from.Before(h.from) {
			out = append(out, wfSpan{s.from, h.from, s.kind})
		}
		if s.to.After(h.to) {
			out = append(out, wfSpan{h.to, s.to, s.kind})
		}
	}
	return append(out, h)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// outcome is how a row's last call ended, as a word, a glyph and a style.
func (m env) outcome(sn session.CallSnapshot) wfOutcome {
	switch {
	case sn.ResultType == "input_required" && sn.Next == "" && sn.ChainErr == nil && sn.State == session.StateOK:
		return wfOutcome{"input", '?', m.th.Warn} // the server asks; the person answers
	case !sn.State.Ended():
		return wfOutcome{"pending", '…', m.th.Pending}
	case sn.State == session.StateCancelled:
		return wfOutcome{"cancelled", '⊘', m.th.Cancelled}
	case sn.State == session.StateDetached:
		return wfOutcome{"detached", '⇥', m.th.Cancelled}
	case sn.State == session.StateError && errors.Is(sn.Err(), session.ErrTimeout):
		return wfOutcome{"timeout", '◷', m.th.Late}
	case sn.State == session.StateError && sn.Probe:
		return wfOutcome{"legacy", '✓', m.th.Info} // the era probe's error is the era's answer
	case sn.State == session.StateError || sn.IsError || sn.ChainErr != nil:
		return wfOutcome{"error", '✗', m.th.Error}
	}
	return wfOutcome{"ok", '✓', m.th.OK}
}

// marksFor is the marks kept for call key (new ones empty).
func (v *View) marksFor(key string) *callMarks {
	mk := v.marks[key]
	if mk == nil {
		mk = &callMarks{stride: 1}
		v.marks[key] = mk
	}
	mk.used = v.renders
	return mk
}

// scanMarks brings the marks of the calls on screen up to date from the
// index: one pass from the earliest frame any of them still needs (calls
// on screen overlap in time, so one pass serves them all), within the
// render's scan budget.
func (v *View) scanMarks(m env, calls []session.CallSnapshot) {
	type scan struct {
		mk     *callMarks
		sn     session.CallSnapshot
		from   uint64 // frames before this one were looked at by earlier passes
		answer uint64 // the frame of its answer, when this pass saw it
	}
	active := map[string]*scan{}
	from := uint64(0)
	for _, sn := range calls {
		mk := v.marksFor(sn.Key)
		if mk.done {
			continue
		}
		if mk.next == 0 {
			if sn.Seq == 0 {
				continue // not on the wire yet
			}
			mk.next = sn.Seq
		}
		active[sn.Key] = &scan{mk: mk, sn: sn, from: mk.next}
		if from == 0 || mk.next < from {
			from = mk.next
		}
	}
	if len(active) == 0 || v.budget <= 0 {
		return
	}
	st := m.s.Store()
	var look []uint64 // frames to read back: stream events, questions for the person, our answers
	last, lastAt := uint64(0), time.Time{}
	st.Scan(from, 0, func(e framestore.Entry) bool {
		if v.budget <= 0 {
			return false
		}
		v.budget--
		last, lastAt = e.Seq, e.Time
		if a := active[e.CallKey]; a != nil && e.Seq >= a.from && !a.mk.done && e.Dir == transport.In &&
			!(a.sn.State.Ended() && e.Time.After(a.sn.Ended.Add(endSlack))) {
			if a.mk.firstByte.IsZero() {
				a.mk.firstByte = e.Time
			}
			switch {
			case e.Class == journal.ClassResult || e.Class == journal.ClassError:
				a.mk.done, a.answer = true, e.Seq // the answer: nothing of the call follows
			case e.Method == "notifications/progress":
				a.mk.addProgress(e.Time)
			}
		}
		switch {
		case e.Kind == transport.Event,
			e.Dir == transport.In && e.Class == journal.ClassRequest && humanMethods[e.Method],
			e.Dir == transport.Out && (e.Class == journal.ClassResult || e.Class == journal.ClassError):
			look = append(look, e.Seq)
		}
		return true
	})
	for _, a := range active {
		a.mk.next = max(a.mk.next, last+1)
		if a.sn.State.Ended() && lastAt.After(a.sn.Ended.Add(endSlack)) {
			a.mk.done = true // frames are past the call's end
		}
	}
	// Read back outside Scan (it holds the store's lock). These frames are
	// few: stream events, the person's questions and their answers.
	for _, seq := range look {
		var it *framestore.Item
		for _, a := range active {
			if seq < a.from || (a.answer != 0 && seq > a.answer) {
				continue
			}
			if it == nil {
				if it = st.Get(seq); it == nil {
					break
				}
			}
			a.mk.note(it, a.sn.Key)
		}
	}
}

// addProgress keeps at most maxProgressMarks steps, evenly: when full,
// every other one goes and only every stride-th step is kept from then on.
func (mk *callMarks) addProgress(at time.Time) {
	mk.nProgress++
	if (mk.nProgress-1)%mk.stride != 0 {
		return
	}
	if len(mk.progress) == maxProgressMarks {
		for i := 0; i < len(mk.progress)/2; i++ {
			mk.progress[i] = mk.progress[2*i]
		}
		mk.progress = mk.progress[:len(mk.progress)/2]
		mk.stride *= 2
	}
	mk.progress = append(mk.progress, at)
}

// note takes what a read-back frame says about call key: a resumed
// response stream, a question for the person on the call's stream (on
// stdio, which has no streams, any question while the call runs), or our
// answer to one.
func (mk *callMarks) note(it *framestore.Item, key string) {
	mt := it.Frame.Meta
	stream := mt.LogicalStream()
	switch {
	case it.Frame.Kind == transport.Event:
		if mt.Event == transport.EvStreamResumed && stream == "post:"+key && len(mk.resumes) < maxSpanMarks {
			mk.resumes = append(mk.resumes, it.Frame.Time)
		}
	case it.Env == nil:
	case it.Class == journal.ClassRequest:
		if stream != "" && stream != "post:"+key {
			return // another call's, or the listen stream's
		}
		if stream != "" && mk.firstByte.IsZero() {
			mk.firstByte = it.Frame.Time
		}
		if mk.asked == nil {
			mk.asked = map[string]time.Time{}
		}
		if len(mk.asked) < maxSpanMarks {
			mk.asked[it.Env.Key()] = it.Frame.Time
		}
	default: // our answer
		k := it.Env.Key()
		if at, ok := mk.asked[k]; ok {
			delete(mk.asked, k)
			if len(mk.human) < maxSpanMarks {
				mk.human = append(mk.human, wfSpan{at, it.Frame.Time, wfHuman})
			}
		}
	}
}

// wfCell is one column of a bar.
type wfCell struct {
	glyph rune
	kind  wfKind
	mark  bool
	prio  int
}

// barCells lays a row out on w columns starting at from, scale per
// column: in each column the stretch that covers most of it, then the
// marks over that (the most telling one where several fall together).
func barCells(r wfRow, from time.Time, scale time.Duration, w int) []wfCell {
	cells := make([]wfCell, w)
	col := func(t time.Time) int {
		d := t.Sub(from)
		if d < 0 {
			return -1
		}
		return int(d / scale)
	}
	// How much of each column each kind covers; spans do not overlap.
	cov := make([][wfServer + 1]time.Duration, w)
	touched := make([]wfKind, w) // the highest kind in a column, for instants
	for _, s := range r.spans {
		if s.to.Before(from) {
			continue
		}
		a, b := col(s.from), col(s.to)
		if s.to.After(s.from) && s.to.Sub(from)%scale == 0 {
			b-- // ends exactly on a column's edge: that column is not its
		}
		for j := max(a, 0); j <= min(b, w-1); j++ {
			c0 := from.Add(time.Duration(j) * scale)
			cov[j][s.kind] += earlier(s.to, c0.Add(scale)).Sub(later(s.from, c0))
			touched[j] = max(touched[j], s.kind)
		}
	}
	glyphs := [...]rune{wfNone: ' ', wfHuman: glyphHuman, wfWait: glyphWait, wfServer: glyphServer}
	for j := range cells {
		k := touched[j] // a column only instants touch shows the highest
		for kind := wfHuman; kind <= wfServer; kind++ {
			if cov[j][kind] > cov[j][k] {
				k = kind // otherwise what covers most of it
			}
		}
		cells[j].kind, cells[j].glyph = k, glyphs[k]
	}
	for _, mk := range r.marks {
		j := col(mk.at)
		if mk.prio != prioRound && mk.at.After(from) && mk.at.Sub(from)%scale == 0 {
			j-- // on a column's edge, an event belongs to the column it ends; a round starts the next one
		}
		if j < 0 || j >= w || mk.prio <= cells[j].prio {
			continue
		}
		cells[j].glyph, cells[j].mark, cells[j].prio = mk.glyph, true, mk.prio
	}
	return cells
}

// drawBar styles cells: the call's outcome colours its bar, the person's
// share has its own colour; runs of one style are rendered together.
func (m env) drawBar(cells []wfCell, out wfOutcome) string {
	const plain, human, outcome = 0, 1, 2
	styleOf := func(c wfCell) int {
		switch {
		case c.kind == wfNone && !c.mark:
			return plain
		case c.kind == wfHuman && !c.mark:
			return human
		}
		return outcome
	}
	var b, run strings.Builder
	cur := -1
	flush := func() {
		switch {
		case run.Len() == 0:
		case cur == human:
			b.WriteString(m.th.Warn.Render(run.String()))
		case cur == outcome:
			b.WriteString(out.style.Render(run.String()))
		default:
			b.WriteString(run.String())
		}
		run.Reset()
	}
	for _, c := range cells {
		if st := styleOf(c); st != cur {
			flush()
			cur = st
		}
		run.WriteRune(c.glyph)
	}
	flush()
	return b.String()
}

// wfTickSteps are the axis' label intervals.
var wfTickSteps = []time.Duration{
	10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond,
	500 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// axis labels the bar area with times from the origin, a label every
// tick step of at least 10 columns (room for "59m59s" and a gap).
func axis(left, scale time.Duration, w int) string {
	step := wfTickSteps[len(wfTickSteps)-1]
	for _, s := range wfTickSteps {
		if s >= 10*scale {
			step = s
			break
		}
	}
	line := []rune(strings.Repeat(" ", w))
	free := 0 // first column a label may start at
	for t := (left + step - 1) / step * step; ; t += step {
		c := int((t - left) / scale)
		if c >= w {
			break
		}
		label := "0"
		if t > 0 {
			label = fmtDur(t)
		}
		if c < free || c+len(label) > w {
			continue
		}
		copy(line[c:], []rune(label))
		free = c + len(label) + 1
	}
	return string(line)
}

func (v *View) Render(c view.Context, w, h int) string {
	m := newEnv(c, v.s)
	v.renders++
	v.budget = scanBudget
	labelW, barW := Layout(w)
	origin, scale, left, _ := v.window(m)
	clock := v.clock(m)
	from := origin.Add(left)

	mode := "zoom"
	switch {
	case v.fit:
		mode = "fit"
	case v.live:
		mode = "follows now"
	}
	l := []string{m.th.Title.Render(titleLine(len(v.roots), fmtDur(scale), mode, origin.In(m.opts.Location).Format("15:04:05.000"), w))}
	l = append(l, m.th.Faint.Render(pad("", labelW)+" "+axis(left, scale, barW)+" "+fmt.Sprintf("%-11s%7s", "outcome", "took")))

	legend := m.legend(w)
	rowsH := m.wfRowsHeight(h)
	var sel wfRow
	haveSel := false
	var chains [][]session.CallSnapshot
	var calls []session.CallSnapshot
	for i := v.top; i < len(v.roots) && i < v.top+rowsH; i++ {
		ch := chain(m, v.rootCall(m, i))
		chains = append(chains, ch)
		calls = append(calls, ch...)
	}
	v.scanMarks(m, calls)
	for i := v.top; i < len(v.roots) && i < v.top+rowsH; i++ {
		r := v.rowOf(m, chains[i-v.top], clock)
		mark := " "
		if i == v.sel {
			mark, sel, haveSel = "▸", r, true
		}
		label := pad(mark+"#"+widget.IDText(r.key)+" "+termsafe.Line(r.method+" "+r.name), labelW)
		if i == v.sel {
			label = m.th.Selected.Render(label)
		}
		outcome := r.out.style.Render(fmt.Sprintf("%c %-9s", r.out.glyph, r.out.word)) + fmt.Sprintf(" %7s", fmtDur(r.end.Sub(r.start)))
		l = append(l, label+" "+m.drawBar(barCells(r, from, scale, barW), r.out)+" "+outcome)
	}
	if len(v.roots) == 0 {
		l = append(l, m.th.Faint.Render("   no calls yet — C opens the catalog, : sends raw JSON-RPC"))
	}
	for len(l) < 2+rowsH {
		l = append(l, "")
	}
	v.dropMarks()

	info := ""
	if haveSel {
		info = m.rowInfo(sel)
	}
	l = append(l, m.th.Faint.Render(strings.Repeat("─", w)), info)
	l = append(l, legend...)
	return strings.Join(l, "\n")
}

// titleLine is the waterfall's title at the left and the origin's time
// at the right, at least a space apart: a narrow screen says "/column"
// for "per column", then drops the origin before it cuts the title.
func titleLine(calls int, scale, mode, origin string, w int) string {
	right := "0 = " + origin + " "
	for _, per := range []string{" per column", "/column"} {
		title := fmt.Sprintf(" Waterfall · %d calls · %s%s · %s", calls, scale, per, mode)
		if ansi.StringWidth(title)+1+len(right) <= w {
			return pad(title, w-len(right)) + right
		}
	}
	return pad(fit(fmt.Sprintf(" Waterfall · %d calls · %s/column · %s", calls, scale, mode), w), w)
}

// dropMarks forgets the marks of calls off screen when there are many.
func (v *View) dropMarks() {
	if len(v.marks) <= maxMarkCache {
		return
	}
	for k, mk := range v.marks {
		if mk.used != v.renders {
			delete(v.marks, k)
		}
	}
}

// rowInfo is the selected row's numbers, which a bar can only suggest.
func (m env) rowInfo(r wfRow) string {
	// Numbers first: what a narrow screen cuts is the error's text.
	parts := []string{"server " + fmtDur(r.server)}
	if r.human > 0 {
		parts = append(parts, m.th.Warn.Render("waiting on you "+fmtDur(r.human)))
	}
	if r.ttfb >= 0 {
		parts = append(parts, "first byte "+fmtDur(r.ttfb))
	}
	if r.rounds > 0 {
		parts = append(parts, itoa(r.rounds+1)+" rounds")
	}
	if r.progress > 0 {
		parts = append(parts, itoa(r.progress)+" progress")
	}
	if r.reissues > 0 {
		parts = append(parts, itoa(r.reissues)+" re-issued")
	}
	if r.resumes > 0 {
		parts = append(parts, itoa(r.resumes)+" resumed")
	}
	parts = append(parts, r.out.style.Render(r.out.word))
	if r.err != "" {
		parts = append(parts, termsafe.Line(r.err))
	}
	return " " + termsafe.Line("#"+r.key) + ": " + strings.Join(parts, " · ")
}

// legend says what every glyph and colour means: the bar's stretches and
// marks, then the outcomes, wrapped to w columns (two lines at 120, three
// at 80); an item is never cut.
func (m env) legend(w int) []string {
	type item struct {
		st          lipgloss.Style
		glyph, word string
	}
	f := m.th.Faint
	items := []item{{m.th.OK, string(glyphServer), "server"}, {m.th.OK, string(glyphWait), "no reply yet"},
		{m.th.Warn, string(glyphHuman), "waiting on you"}, {f, string(glyphFirstByte), "first byte"},
		{f, string(glyphProgress), "progress"}, {f, "2", "MRTR round"}, {f, string(glyphReissue), "re-issued"},
		{f, string(glyphResume), "resumed"}}
	for _, o := range wfOutcomes(m) {
		items = append(items, item{o.style, string(o.glyph), o.word})
	}
	var lines []string
	line, n := "", 0
	for _, it := range items {
		iw := 2 + ansi.StringWidth(it.word) + 2 // glyph, space, word, gap
		if n > 0 && n+iw > w {
			lines = append(lines, line)
			line, n = "", 0
		}
		line += " " + it.st.Render(it.glyph) + " " + it.word + " "
		n += iw
	}
	return append(lines, line)
}

// wfOutcomes are the outcomes a row can show, for the legend.
func wfOutcomes(m env) []wfOutcome {
	return []wfOutcome{{"ok", '✓', m.th.OK}, {"error", '✗', m.th.Error}, {"cancelled", '⊘', m.th.Cancelled},
		{"timeout", '◷', m.th.Late}, {"pending", '…', m.th.Pending}, {"input", '?', m.th.Warn}, {"detached", '⇥', m.th.Cancelled}}
}
