package ui

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/framestore"
	"mcpscope/internal/termsafe"
	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/transport"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
	"mcpscope/ui/widget"
)

func itoa(n int) string { return strconv.Itoa(n) }

// View implements tea.Model. Only the root returns a tea.View.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "mcpscope"
	return v
}

// Render draws the screen as a string of exactly the terminal's height.
// It reads only model state and the visible rows' call snapshots, so its
// cost does not grow with the session's length.
func (m *Model) Render() string {
	w, h := m.w, m.hgt
	if w < 20 || h < 6 {
		return fit("mcpscope: terminal too small ("+itoa(w)+"×"+itoa(h)+")", w)
	}
	lines := make([]string, 0, h)
	lines = append(lines, m.statusBar(w))
	body := h - 2
	if _, ok := m.topDetail(); ok && m.sideBySide() {
		lines = append(lines, m.sideBySideBody(m.top(), w, body)...)
	} else if md := m.top(); md != nil {
		if ph := m.panelRows(md, w, body); ph > 0 {
			lines = append(lines, m.under(len(m.modals)-1, w, body)[:body-ph]...)
			lines = append(lines, block(md.render(m, w, ph), w, ph)...)
		} else {
			lines = append(lines, block(md.render(m, w, body), w, body)...)
		}
	} else {
		lines = append(lines, m.under(len(m.modals), w, body)...)
	}
	if m.find.prompt != nil && m.top() == nil {
		// The input line takes the body's last line, its caret or keys the footer's.
		in, under := m.promptLines(w)
		lines = append(lines[:len(lines)-1], in, under)
	} else {
		// A long flash (why a key cannot run now) takes body lines from the
		// bottom rather than being cut at the screen's edge.
		foot := m.footer(w, min(flashLines, body))
		lines = append(lines[:len(lines)-(len(foot)-1)], foot...)
	}
	return strings.Join(lines, "\n")
}

// panelRows is the height of md when it is a small panel (view.Paneler)
// drawn over the bottom of what lies beneath, 0 when it takes the body.
func (m *Model) panelRows(md modal, w, body int) int {
	if c, ok := md.(viewer); ok {
		if p, ok := c.held().(view.Paneler); ok {
			return min(body, p.Rows(m.viewCtx(), w, body))
		}
	}
	return 0
}

// under draws what lies beneath modal number k: the modal before it, the
// catalog, or the panes.
func (m *Model) under(k, w, body int) []string {
	if k > 0 {
		return block(m.modals[k-1].render(m, w, body), w, body)
	}
	if m.inCat {
		return block(m.catalog.Render(m.viewCtx(), w, body), w, body)
	}
	reqH, progH, noteH := m.layout()
	lines := m.requestsPane(w, reqH)
	lines = append(lines, m.progressStrip(w, progH)...)
	return append(lines, m.notesPane(w, noteH)...)
}

// sideBySideMin is the width from which the detail shows beside the list
// it was opened from (two 80-column halves at 160).
const sideBySideMin = 160

func (m *Model) sideBySide() bool { return m.w >= sideBySideMin }

// listWidth is the left side's width when side by side.
func (m *Model) listWidth() int { return m.w * 2 / 5 }

// detailArea is the detail view's size: the body, or its right side.
func (m *Model) detailArea() (w, h int) {
	w = m.w
	if m.sideBySide() {
		w = m.w - m.listWidth() - 1
	}
	return w, max(1, m.hgt-2)
}

// sideBySideBody draws the list on the left and the detail on the right.
func (m *Model) sideBySideBody(d modal, w, body int) []string {
	lw := m.listWidth()
	rw := w - lw - 1
	left := m.under(len(m.modals)-1, lw, body)
	right := block(d.render(m, rw, body), rw, body)
	sep := m.th.Faint.Render("│")
	out := make([]string, body)
	for i := range out {
		out[i] = pad(left[i], lw) + sep + right[i]
	}
	return out
}

// layout splits the body: requests above, running calls' progress, then
// notifications.
func (m *Model) layout() (reqH, progH, noteH int) {
	body := max(0, m.hgt-2)
	if n := len(m.running); n > 0 && body >= 12 {
		progH = min(n, 3) + 1
		if n > 3 {
			progH++
		}
	}
	rest := body - progH
	reqH = rest / 2
	return reqH, progH, rest - reqH
}

func (m *Model) paneHeight(p pane) int {
	r, _, n := m.layout()
	if p == paneRequests {
		return r
	}
	return n
}

func (m *Model) statusBar(w int) string {
	in := m.info
	// Each part has forms from the longest to the shortest ("": left out).
	// When the line is too long, the steps below shorten the parts that
	// matter least first: the connection state and the era stay longest.
	type part struct {
		forms []string
		at    int
	}
	one := func(s ...string) *part { return &part{forms: s} }
	brand := one("mcpscope")
	conn, why := m.connState()
	connP := one(conn)
	if conn == "reconnecting" && in.Reconnecting > 0 {
		connP = one("reconnecting ("+itoa(in.Reconnecting)+")", conn)
	}
	if why != "" && conn == "disconnected" {
		connP = one(conn+": "+termsafe.Line(shorten(why, 48)), conn)
	}
	if conn == "attached" { // the proxy's name outlasts the server's
		name, _, _ := strings.Cut(why, ": ")
		connP = one(conn+": "+termsafe.Line(shorten(why, 48)), conn+": "+termsafe.Line(shorten(name, 32)), conn)
	}
	if conn == "recording" { // offline: the file's name outlasts the server's
		connP = one(conn+": "+why, conn+": "+termsafe.Line(shorten(m.journalName(), 32)), conn)
	}
	server, serverText := one(), ""
	if in.ServerInfo.Name != "" {
		serverText = termsafe.Line(in.ServerInfo.Name + " " + in.ServerInfo.Version)
		server = one(serverText, shorten(serverText, 24), shorten(serverText, 12), "")
	}
	era := one()
	if in.ProtocolVersion != "" || in.EraReason != "" {
		v := termsafe.Line(shorten(firstNonEmpty(in.ProtocolVersion, "?"), 24)) // the server's string: bounded
		mid := v + " (" + termsafe.Line(in.Era) + ")"
		era = one(mid, mid)
		if in.EraReason != "" { // the reason's first clause, whole where there is room
			with := func(n int) string { return v + " (" + termsafe.Line(in.Era+": "+shortReason(in.EraReason, n)) + ")" }
			era = one(with(64), with(32), mid)
		}
	}
	target := one()
	if in.Target != "" {
		target = one(termsafe.Line(shorten(in.Target, 40)), "")
	}
	sid, sidText := one(), termsafe.Line(in.SessionID)
	if in.SessionID != "" {
		sid = one("session "+widget.MidCut(sidText, 12), "") // longer below when there is room
	}
	store := one() // named when it is not the default (the file store)
	if st := m.opts.StateStore; st != nil {
		if _, local := st.(*statestore.FileStore); !local {
			name := termsafe.Line(st.String())
			kind, _, _ := strings.Cut(name, " ")
			store = one("state "+shorten(name, 40), "state "+kind, "")
			if in.StoreTrouble != "" { // failing: marked at every width (the notes say how)
				store = one("state "+shorten(name, 40)+" ⚠ failing", "state "+kind+" ⚠", "⚠ state")
			}
		}
	}
	waiting := one()
	if n := len(m.prompts); n > 0 {
		waiting = one(fmt.Sprintf("⚑ %d waiting", n))
	}
	loading := one()
	if long, short := m.loadingText(); long != "" {
		loading = one(long, short)
	}
	counts := one(fmt.Sprintf("calls %d · running %d · notes %d · logs %d", m.h.ncalls, len(m.running), in.Notifications, in.Logs),
		fmt.Sprintf("calls %d · running %d", m.h.ncalls, len(m.running)), "")
	left := []*part{brand, connP, server, era, target, sid, store}
	right := []*part{loading, waiting, counts}
	join := func(ps []*part, sep string) string {
		var out []string
		for _, p := range ps {
			if p.at < len(p.forms) && p.forms[p.at] != "" {
				out = append(out, p.forms[p.at])
			}
		}
		return strings.Join(out, sep)
	}
	render := func() (string, string) {
		r := join(right, " · ")
		if r != "" {
			r += " "
		}
		return " " + join(left, " │ "), r
	}
	steps := []*part{store, target, sid, counts, loading, era, era, server, counts, store, server, connP, server}
	if conn == "recording" || conn == "attached" {
		steps = []*part{store, target, sid, counts, loading, era, era, server, counts, store, connP, server, server, connP}
	}
	l, r := render()
	room := func() int { return w - ansi.StringWidth(l) - ansi.StringWidth(r) - 1 }
	for _, p := range steps {
		if room() >= 0 {
			break
		}
		p.at = min(p.at+1, max(0, len(p.forms)-1))
		l, r = render()
	}
	// A part shortened early gets a longer form back when a later step
	// freed the cells for it (the most important first)…
	for i := len(steps) - 1; i >= 0; i-- {
		if p := steps[i]; p.at > 0 {
			p.at--
			if l, r = render(); room() < 0 {
				p.at++
			}
		}
	}
	l, r = render()
	// …and the cells still left go to the session id and the server's
	// name, cut to them rather than to a fixed short form.
	for _, f := range []struct {
		p         *part
		pre, text string
		cut       func(string, int) string
	}{{sid, "session ", sidText, widget.MidCut}, {server, "", serverText, shorten}} {
		if f.text == "" || f.p.forms[f.p.at] == f.pre+f.text || room() <= 2 {
			continue
		}
		have := ansi.StringWidth(f.p.forms[f.p.at])
		if have == 0 {
			have = -3 // the separator it will need
		}
		// Two cells stay between the left and right parts.
		if n := have + room() - 2 - len(f.pre); n >= 6 {
			f.p.forms[f.p.at] = f.pre + f.cut(f.text, n)
			l, r = render()
		}
	}
	l = fit(l, max(10, w-ansi.StringWidth(r)-1))
	gap := w - ansi.StringWidth(l) - ansi.StringWidth(r)
	var line string
	if gap >= 1 {
		line = l + strings.Repeat(" ", gap) + r
	} else {
		line = pad(l+" │ "+r, w)
	}
	return m.th.StatusBar.Render(pad(line, w))
}

// shortReason is the status bar's form of the era decision's reason: its
// first clause in at most n runes; the help overlay has it in full.
func shortReason(r string, n int) string {
	if i := strings.IndexAny(r, "(;"); i > 0 {
		r = strings.TrimSpace(r[:i])
	}
	return shorten(r, n)
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// flashLines is how many lines a flash may take at most: a reason is
// read whole at any width, and the panes stay in sight.
const flashLines = 4

// footer is the footer's lines, at most n: the flash, wrapped, or the
// keys of where the focus is.
func (m *Model) footer(w, n int) []string {
	if m.flashWarn { // until a key is pressed: it may need reading twice
		ls, cut := wrapFlash(" "+termsafe.Line(m.flashText()), w, n)
		if more := " … (whole in the notes pane)"; cut && w > 2*len(more) {
			last := &ls[len(ls)-1]
			*last = ansi.Truncate(strings.TrimSuffix(*last, " …"), w-ansi.StringWidth(more), "") + more
		}
		return styled(m.th.Warn, ls, w)
	}
	if m.flash != "" && m.opts.Now().Sub(m.flashAt) < 8*time.Second {
		ls, _ := wrapFlash(" "+termsafe.Line(m.flashText()), w, n)
		return styled(m.th.Accent, ls, w)
	}
	return []string{m.footerKeys(w)}
}

// wrapFlash wraps a flash's text in at most n lines of w columns, the
// lines after the first indented like it; cut says text was left out.
func wrapFlash(text string, w, n int) (ls []string, cut bool) {
	if ansi.StringWidth(text) <= w || n <= 1 || w < 8 {
		return []string{text}, ansi.StringWidth(text) > w
	}
	all := widget.WrapLines(strings.TrimPrefix(text, " "), w-1, math.MaxInt)
	if cut = len(all) > n; cut {
		all = widget.WrapLines(strings.TrimPrefix(text, " "), w-1, n)
	}
	for i := range all {
		all[i] = " " + all[i]
	}
	return all, cut
}

func styled(st lipgloss.Style, ls []string, w int) []string {
	for i := range ls {
		ls[i] = fit(st.Render(ls[i]), w)
	}
	return ls
}

// footerKeys is the footer's keys line.
func (m *Model) footerKeys(w int) string {
	var names []string
	switch md := m.top(); {
	case md != nil:
		names = m.km.Footer(md.scope())
		if c, ok := md.(viewer); ok {
			if f, ok := c.held().(view.Footerer); ok {
				names = f.Footer(m.viewCtx())
			}
		}
	case m.inCat:
		names = m.km.Footer(m.catalog.Scope())
	case m.focus == paneNotes:
		names = m.km.Footer(keys.Notes)
	default:
		names = m.km.Footer(keys.Requests)
	}
	var hints []string
	help := -1
	for _, n := range names {
		bd, ok := m.km.Get(n)
		if !ok {
			continue
		}
		h := " " + m.th.HelpKey.Render(bd.Keys[0]) + " " + m.th.Faint.Render(bd.Label())
		if m.disabled(n) != "" { // dimmed; ? and the flash say why
			h = " " + m.th.Faint.Render(bd.Keys[0]+" "+bd.Label())
		}
		if n == "help" {
			help = len(hints)
		}
		hints = append(hints, h)
	}
	return fitHints(hints, help, w)
}

// fitHints joins the footer's hints in order, dropping whole ones from
// the end (the footer lists the most used first) rather than cutting one
// in the middle of its word; help (index help, -1 for none), which lists
// them all, is dropped last.
func fitHints(hints []string, help, w int) string {
	for {
		s := strings.Join(hints, "")
		if ansi.StringWidth(s) <= w || len(hints) <= 1 {
			return fit(s, w)
		}
		last := len(hints) - 1
		if last == help {
			last--
		}
		if last < help {
			help--
		}
		hints = append(hints[:last], hints[last+1:]...)
	}
}

// keyOf is the first key of a binding, for hints in titles.
func (m *Model) keyOf(name string) string {
	if b, ok := m.km.Get(name); ok && len(b.Keys) > 0 {
		return b.Keys[0]
	}
	return "?"
}

func (m *Model) paneTitle(title string, focused bool, w int) string {
	st := m.th.Faint
	mark := "  "
	if focused {
		st, mark = m.th.Title, "▌ "
	}
	t := mark + title + " "
	return st.Render(pad(t+strings.Repeat("─", max(0, w-ansi.StringWidth(t))), w))
}

// requestsPane draws one row per call, newest at the bottom.
func (m *Model) requestsPane(w, h int) []string {
	if h <= 0 {
		return nil
	}
	n := m.reqLen()
	title := fmt.Sprintf("Requests %d", n)
	if n != m.h.ncalls {
		title += fmt.Sprintf(" of %d", m.h.ncalls)
	}
	title += m.reqFilterTitle()
	if m.req.follow {
		title += " · follow"
	}
	if m.s.Follows() {
		title += " · H the host's"
	}
	out := []string{m.paneTitle(title, m.focus == paneRequests, w)}
	now := m.opts.Now()
	var shown []session.CallSnapshot
	for i := m.req.top; i < n && len(out)+len(shown) < h; i++ {
		shown = append(shown, m.reqCall(i).Snapshot())
	}
	cols := m.reqColumns(shown, w)
	for k, sn := range shown {
		i := m.req.top + k
		row := m.requestRow(sn, cols, w, i == m.req.sel, now)
		if m.find.req.f != nil && m.find.req.hl {
			row = m.markRow(row, m.callHit(i), i == m.req.sel)
		}
		out = append(out, row)
	}
	if n == 0 && h > 1 && m.h.ncalls > 0 {
		out = append(out, m.th.Faint.Render("   no call matches the filter — "+m.keyOf("filter-clear")+" clears it"))
	} else if n == 0 && h > 1 {
		out = append(out, m.th.Faint.Render("   no calls yet — C opens the catalog, : sends raw JSON-RPC"))
	}
	for len(out) < h {
		out = append(out, "")
	}
	return out
}

// status is the word a call's row shows: the one rule the journal and the
// filter's ~s use too, but for a call whose task asks for input now, which
// only the tasks the session saw last say.
func (m *Model) status(sn session.CallSnapshot) string {
	if w := m.taskWord(&sn); w != "" { // the call's task asks for input now
		return w
	}
	return session.StateWord(&sn)
}

func (m *Model) statusStyle(st string) lipgloss.Style {
	switch st {
	case "ok":
		return m.th.OK
	case "error", "lost":
		return m.th.Error
	case "late":
		return m.th.Late
	case "cancelled", "detached":
		return m.th.Cancelled
	case "streaming", "legacy", "reissued":
		return m.th.Info
	case "input":
		return m.th.Warn
	}
	return m.th.Pending
}

// reqCols are the widths of the requests pane's columns for the rows
// shown: the start time (with the host's mark when attached), method and
// name.
type reqCols struct {
	started bool // the start time is shown
	kw      int  // the id column: 5, wider for string ids up to an eighth of the width
	mw, nw  int
}

// reqColumns sizes the method and name columns: their usual widths, wider
// where a row shown needs it (resources/templates/list), within what the
// width leaves after the fixed columns and, where there is room, a
// progress bar.
func (m *Model) reqColumns(shown []session.CallSnapshot, w int) reqCols {
	c := reqCols{started: w >= 50, kw: 5, mw: 16, nw: 16} // the time gives way before the duration does
	if w < 100 {
		c.mw, c.nw = 14, 12 // leave the progress bar room at 80 columns
	}
	need := 4 // the widest method of a row with a name: a row without one
	// (resources/templates/list) spreads over both columns instead
	for _, sn := range shown {
		c.kw = max(c.kw, min(ansi.StringWidth(widget.IDText(sn.Key)), max(5, w/8)))
		name := ansi.StringWidth(m.reqName(sn, w))
		method := ansi.StringWidth(termsafe.Line(sn.Method))
		c.mw = max(c.mw, method)
		c.nw = max(c.nw, name)
		if name > 0 {
			need = max(need, method)
		}
	}
	fixed := 1 + c.kw + 1 + 2 + 9 + 8 // mark, key, spaces, status, duration
	if c.started {
		fixed += 9
	}
	if m.s.Follows() {
		fixed += 2
	}
	budget := w - fixed
	if budget-progressRoom >= 26 {
		budget -= progressRoom // keep a progress bar's room
	}
	budget = max(7, budget)
	if c.mw+c.nw > budget {
		// The method column first gives back what no named row needs;
		// then the method comes first (a handful of names, each telling):
		// the name keeps 7 cells, enough to know it again; the detail has
		// it whole.
		c.mw = max(need, min(c.mw, budget-c.nw))
		c.mw = max(4, min(c.mw, budget-min(c.nw, 7)))
		c.nw = max(3, budget-c.mw)
	}
	return c
}

// progressRoom is what the requests pane keeps for a progress bar.
const progressRoom = 14

// reqName is a call's name column: its tool, resource or prompt name, or
// for an MRTR retry the round it is.
func (m *Model) reqName(sn session.CallSnapshot, w int) string {
	if sn.Round > 0 {
		return m.roundLabel(sn, w >= 100)
	}
	return termsafe.Line(sn.Name)
}

func (m *Model) requestRow(sn session.CallSnapshot, cols reqCols, w int, sel bool, now time.Time) string {
	st := m.status(sn)
	mark := " "
	if sel {
		mark = "▸"
	}
	name := m.reqName(sn, w)
	mw, nw := cols.mw, cols.nw
	started := ""
	if cols.started {
		started = sn.Started.In(m.opts.Location).Format("15:04:05") + " "
	}
	// Attached to a proxy: whose call it is (H: the host's; blank: yours).
	if m.s.Follows() {
		if isHosts(sn) {
			started += "H "
		} else {
			started += "  "
		}
	}
	method := termsafe.Line(sn.Method) // the sender's bytes
	what := fmt.Sprintf("%-*s %-*s", mw, shorten(method, mw), nw, shorten(name, nw))
	if name == "" { // a call with no name (resources/templates/list): the method has its cells too
		what = fmt.Sprintf("%-*s", mw+1+nw, shorten(method, mw+1+nw))
	}
	left := fmt.Sprintf("%s%s%-*s %s ", mark, started, cols.kw, widget.MidCut(widget.IDText(sn.Key), cols.kw), what)
	line := left + m.statusStyle(st).Render(fmt.Sprintf("%-9s", st)) + fmt.Sprintf(" %7s", fmtDur(sn.Duration(now)))
	rest := w - ansi.StringWidth(line) - 1
	if sn.HasProgress && rest > 12 {
		line += " " + m.progressText(sn, rest, !sn.State.Ended())
	} else if sn.ResultType == "input_required" && rest > 8 {
		line += " " + m.th.Faint.Render(chainText(sn))
	} else if e := sn.Err(); e != nil && rest > 8 {
		line += " " + m.th.Faint.Render(termsafe.Line(e.Error()))
	} else if sn.ReissueOf != "" && rest > 8 {
		line += " " + m.th.Faint.Render("(re-issue of #"+sn.ReissueOf+")")
	}
	if sel {
		return m.th.Selected.Render(pad(ansi.Strip(line), w))
	}
	return fit(line, w)
}

// roundLabel is an MRTR retry's name column: "↳ round 2 of #5" (the
// original request's key), short "↳2 of #5" at narrow widths.
func (m *Model) roundLabel(sn session.CallSnapshot, wide bool) string {
	root := m.roundRoot(sn)
	if wide {
		return "↳ round " + itoa(sn.Round+1) + " of #" + root
	}
	return "↳" + itoa(sn.Round+1) + " of #" + root
}

// roundRoot follows Parent links to the round that started the chain.
func (m *Model) roundRoot(sn session.CallSnapshot) string {
	key := sn.Parent
	for i := 0; i < session.MaxRounds+1 && key != ""; i++ {
		c := m.s.Lookup(key)
		if c == nil {
			break
		}
		p := c.Snapshot()
		if p.Parent == "" {
			return p.Key
		}
		key = p.Parent
	}
	return key
}

// progressText is "███░░ 3/10 1.0/s eta 7s message" in w columns.
func (m *Model) progressText(sn session.CallSnapshot, w int, live bool) string {
	p := sn.Progress
	barW := min(12, w/4)
	var b strings.Builder
	if p.Total > 0 {
		b.WriteString(m.bar(p.Value/p.Total, barW) + " ")
		b.WriteString(fmtNum(p.Value) + "/" + fmtNum(p.Total))
	} else {
		b.WriteString(fmtNum(p.Value) + " (no total)")
	}
	if live {
		// Rate and ETA show whole or not at all: never "eta 1…".
		if r := p.Rate(); r > 0 && ansi.StringWidth(b.String())+len(fmtNum(r))+3 <= w {
			b.WriteString(" " + fmtNum(r) + "/s")
		}
		if eta := p.ETA(); eta > 0 && ansi.StringWidth(b.String())+len(fmtDur(eta))+5 <= w {
			b.WriteString(" eta " + fmtDur(eta))
		}
	}
	if p.Message != "" {
		b.WriteString(" " + termsafe.Line(p.Message))
	}
	return fit(b.String(), w)
}

func (m *Model) bar(frac float64, w int) string {
	frac = min(max(frac, 0), 1)
	done := int(frac*float64(w) + 0.5)
	return m.th.BarDone.Render(strings.Repeat("█", done)) + m.th.BarTodo.Render(strings.Repeat("░", w-done))
}

func fmtNum(f float64) string {
	if f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', 1, 64)
}

// progressStrip lists running calls with their progress, rate and ETA.
func (m *Model) progressStrip(w, h int) []string {
	if h <= 0 {
		return nil
	}
	out := []string{m.paneTitle(fmt.Sprintf("Running %d", len(m.running)), false, w)}
	now := m.opts.Now()
	for i, c := range m.running {
		if len(out) >= h {
			break
		}
		if i == 3 {
			out = append(out, m.th.Faint.Render(fmt.Sprintf("   … and %d more", len(m.running)-3)))
			break
		}
		sn := c.Snapshot()
		head := fmt.Sprintf("   %-5s %-16s %7s ", widget.MidCut(widget.IDText(sn.Key), 12), shorten(termsafe.Line(firstNonEmpty(sn.Name, sn.Method)), 16), fmtDur(sn.Duration(now)))
		rest := w - ansi.StringWidth(head)
		if sn.HasProgress {
			head += m.progressText(sn, rest, true)
		} else {
			head += m.th.Faint.Render(string(sn.State) + ", no progress yet")
		}
		out = append(out, fit(head, w))
	}
	for len(out) < h {
		out = append(out, "")
	}
	return out
}

// notesPane draws notifications, logs, stderr and transport events.
func (m *Model) notesPane(w, h int) []string {
	if h <= 0 {
		return nil
	}
	n := m.visibleNotes()
	title := fmt.Sprintf("Notifications %d", n)
	if m.h.view != nil {
		title += fmt.Sprintf(" of %d", m.h.count(m.h.filter))
	}
	if m.h.filter != kindAll {
		title += " · kind: " + m.h.filter.String()
	}
	title += m.noteFilterTitle()
	if d := m.s.Store().Dropped(); d > 0 {
		title += fmt.Sprintf(" · %d older frames not kept (no journal)", d)
	}
	if m.paused {
		title += fmt.Sprintf(" · PAUSED (+%d new)", m.h.noteLen()-n)
	} else if m.note.follow {
		title += " · follow"
	}
	out := []string{m.paneTitle(title, m.focus == paneNotes, w)}
	// Notification rows never change once stored, so a row is rendered once
	// per width and theme (View runs on the program's own goroutine).
	if m.rowCache == nil || m.rowCacheW != w || m.rowCacheTheme != m.th.Name || len(m.rowCache) > 4096 {
		m.rowCache, m.rowCacheW, m.rowCacheTheme = map[rowKey]string{}, w, m.th.Name
	}
	if m.note.top == 0 && m.h.dropped > 0 && len(out) < h {
		out = append(out, m.th.Faint.Render(fit(fmt.Sprintf("   ── %d older rows not kept: no journal (a session without one keeps its newest %d frames) ──",
			m.h.dropped, framestore.NoJournalWindow), w)))
	}
	if n == 0 && m.h.view != nil && len(out) < h {
		out = append(out, m.th.Faint.Render("   no row matches the filter — "+m.keyOf("filter-clear")+" clears it"))
	}
	for i := m.note.top; i < n && len(out) < h; i++ {
		k := rowKey{m.h.noteSeq(i), i == m.note.sel}
		row, ok := m.rowCache[k]
		if !ok {
			row = m.noteRow(m.h.noteAt(i), w, k.sel)
			m.rowCache[k] = row
		}
		if m.find.note.f != nil && m.find.note.hl {
			row = m.markRow(row, m.noteHit(k.seq), k.sel)
		}
		out = append(out, row)
	}
	for len(out) < h {
		out = append(out, "")
	}
	return out
}

type rowKey struct {
	seq uint64
	sel bool
}

func (m *Model) noteRow(r noteRow, w int, sel bool) string {
	it := r.it
	mark := " "
	if sel {
		mark = "▸"
	}
	head := mark + it.Frame.Time.In(m.opts.Location).Format("15:04:05") + " " + fmt.Sprintf("%-8s", r.kind.String()) + " "
	body := m.noteText(r, w-ansi.StringWidth(head))
	if sel {
		return m.th.Selected.Render(pad(head+ansi.Strip(body), w))
	}
	return fit(head+body, w)
}

// noteText is the one-line summary of a notification-pane item. Every
// server string goes through termsafe.
func (m *Model) noteText(r noteRow, w int) string {
	it := r.it
	max := w*2 + 16
	switch r.kind {
	case kindStderr:
		return m.th.Warn.Render("stderr") + " " + termsafe.Line(shortBytes(it.Frame.Data, max))
	case kindEvent:
		mt := it.Frame.Meta
		switch mt.Event {
		case transport.EvStreamDropped, transport.EvHTTPError, transport.EvSendFailed:
			return m.th.Warn.Render(eventText(mt))
		case transport.EvStreamResumed:
			return m.th.OK.Render(eventText(mt))
		case transport.EvResumeAttempt:
			// The hint goes before the (long) detail, so it is never cut.
			txt := eventText(mt)
			if b, ok := m.km.Get("reconnect"); ok {
				rest := strings.TrimPrefix(txt, mt.Event)
				return m.th.Accent.Render(mt.Event) + m.th.Faint.Render(" ("+b.Keys[0]+": now)") + m.th.Accent.Render(rest)
			}
			return m.th.Accent.Render(txt)
		}
		return m.th.Info.Render(eventText(mt))
	case kindLog:
		var p struct {
			Level  string          `json:"level"`
			Logger string          `json:"logger"`
			Data   json.RawMessage `json:"data"`
		}
		_ = json.Unmarshal(it.Env.Params, &p)
		data := oneLine(p.Data, max)
		var s string
		if json.Unmarshal(p.Data, &s) == nil {
			data = termsafe.Line(shorten(s, max))
		}
		lv := termsafe.Line(p.Level)
		txt := fmt.Sprintf("%-8s ", lv)
		if p.Logger != "" {
			txt += termsafe.Line(p.Logger) + ": "
		}
		return m.th.Level(p.Level).Render(txt + data)
	case kindProgress:
		var p struct {
			Token    json.RawMessage `json:"progressToken"`
			Progress float64         `json:"progress"`
			Total    float64         `json:"total"`
			Message  string          `json:"message"`
		}
		_ = json.Unmarshal(it.Env.Params, &p)
		s := "progress " + oneLine(p.Token, 24) + " " + fmtNum(p.Progress)
		if p.Total > 0 {
			s += "/" + fmtNum(p.Total)
		}
		if p.Message != "" {
			s += " " + termsafe.Line(p.Message)
		}
		if it.CallKey != "" {
			s += m.th.Faint.Render(" (call " + it.CallKey + ")")
		}
		if it.Note != "" { // first, so 80 columns still show it: progress after the call ended
			s = m.th.Late.Render(termsafe.Line(it.Note)) + " · " + s
		}
		return s
	case kindNotify:
		return m.th.Accent.Render(termsafe.Line(it.Env.Method)) + " " + m.th.Faint.Render(oneLine(it.Env.Params, max))
	case kindRequest:
		return m.th.Warn.Render("⇠ "+termsafe.Line(it.Env.Method)) + " " + m.th.Faint.Render(oneLine(it.Env.Params, max))
	}
	s := oneLine(it.Frame.Data, max)
	if it.Note != "" {
		s = m.th.Late.Render(termsafe.Line(it.Note)) + " " + s
	}
	return s
}

func shortBytes(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
