package ui

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/internal/termsafe"
	"mcpscope/session"
	"mcpscope/transport"
	"mcpscope/ui/keys"
)

// detailTab is one page of the detail view: sanitized lines, built once
// per change of the thing shown, never per frame.
type detailTab struct {
	name  string
	lines []string
	json  bool   // colour as JSON
	copy  []byte // what y copies from this tab
}

// detail shows one call (request, response, raw frames, HTTP metadata,
// correlated notifications) or one notification-pane item.
type detail struct {
	title   string
	call    *session.Call
	item    *session.Item
	frames  callFrames
	version string
	tabs    []detailTab
	tab     int
	top     int

	searching bool
	input     string
	query     string
	matches   []int
	cur       int
}

func (m *Model) openDetail() {
	d := &detail{}
	if m.focus == paneNotes {
		d.item = m.selectedNote()
		if d.item == nil {
			return
		}
	} else {
		d.call = m.selectedCall()
		if d.call == nil {
			return
		}
	}
	d.refresh(m)
	m.push(d)
}

func (d *detail) scope() keys.Scope {
	if d.searching {
		return keys.Search
	}
	return keys.Detail
}

// maxDetailNotes bounds the correlated notifications a call's detail
// reads back (the newest); the journal has the rest.
const maxDetailNotes = 1000

// callFrames are the frames of one call, found in the store's index: its
// request(s), its response(s) and the newest of its other frames.
type callFrames struct {
	next   uint64 // the next frame to look at
	req    []uint64
	resp   []uint64
	notes  []uint64 // at most maxDetailNotes, the newest
	nNotes int
}

// find looks at the frames since the last look for the call's own.
func (cf *callFrames) find(st *session.Store, key string) {
	st.Scan(cf.next, 0, func(e session.Entry) bool {
		cf.next = e.Seq + 1
		if e.CallKey != key {
			return true
		}
		switch {
		case e.Dir == transport.Out && e.Class == session.ClassRequest:
			cf.req = append(cf.req, e.Seq)
		case e.Dir == transport.In && (e.Class == session.ClassResult || e.Class == session.ClassError):
			cf.resp = append(cf.resp, e.Seq)
		default:
			cf.nNotes++
			if len(cf.notes) == maxDetailNotes {
				cf.notes = append(cf.notes[:0], cf.notes[1:]...)
			}
			cf.notes = append(cf.notes, e.Seq)
		}
		return true
	})
}

// refresh rebuilds the tabs when what they show has changed.
func (d *detail) refresh(m *Model) {
	if d.item != nil {
		if d.tabs == nil {
			d.buildItem(m)
		}
		return
	}
	st := m.s.Store()
	if d.frames.next == 0 {
		// A call's frames begin with its request: look from there (from
		// now, when it is not on the wire yet; Last before Seq, so the
		// request cannot slip between the two).
		last := st.Last()
		d.frames.next = last + 1
		if seq := d.call.Snapshot().Seq; seq != 0 {
			d.frames.next = seq
		}
	}
	d.frames.find(st, d.call.Key)
	sn := d.call.Snapshot()
	f := &d.frames
	v := fmt.Sprintf("%s/%d/%d/%d/%d/%s/%t", sn.State, len(f.req), len(f.resp), f.nNotes, sn.Late, sn.Next, sn.ChainErr != nil)
	if v == d.version {
		return
	}
	d.version = v
	d.buildCall(m, sn)
	d.rematch()
}

// items reads frames back from the store.
func items(st *session.Store, seqs []uint64) []*session.Item {
	out := make([]*session.Item, 0, len(seqs))
	for _, seq := range seqs {
		if it := st.Get(seq); it != nil {
			out = append(out, it)
		}
	}
	return out
}

func (d *detail) buildCall(m *Model, sn session.CallSnapshot) {
	d.title = fmt.Sprintf("call %s · %s %s · %s · %s", sn.Key, sn.Method, termsafe.Line(sn.Name), m.status(sn), fmtDur(sn.Duration(m.opts.Now())))
	if sn.Round > 0 {
		d.title += fmt.Sprintf(" · MRTR round %d of #%s (retries #%s)", sn.Round+1, m.roundRoot(sn), sn.Parent)
	}
	if sn.TaskID != "" {
		d.title += " · task " + termsafe.Line(sn.TaskID)
	}
	st := m.s.Store()
	req, resp, notes := items(st, d.frames.req), items(st, d.frames.resp), items(st, d.frames.notes)
	var tabs []detailTab
	if len(req) > 0 {
		data := exactBytes(st, req[0])
		tabs = append(tabs, detailTab{name: "request", lines: prettyLines(data), json: true, copy: data})
	} else {
		tabs = append(tabs, detailTab{name: "request", lines: append([]string{"(not on the wire yet; params as they will be sent)"}, prettyLines(sn.Params)...), json: true, copy: sn.Params})
	}
	var rl []string
	var rc []byte
	for i, it := range resp {
		if i > 0 || it.Note != "" {
			rl = append(rl, "", "── "+termsafe.Line(it.Note)+" (#"+itoa(int(it.Seq))+")")
		}
		data := exactBytes(st, it)
		rl = append(rl, prettyLines(data)...)
		if rc == nil {
			rc = data
		}
	}
	switch {
	case len(resp) == 0 && sn.Failure != nil:
		rl = append(rl, "no response from the server:", termsafe.Line(sn.Failure.Error()))
	case len(resp) == 0:
		rl = append(rl, "(waiting for the response)")
	case sn.Failure != nil:
		rl = append([]string{"ended without the server's word: " + termsafe.Line(sn.Failure.Error()), ""}, rl...)
	}
	if sn.ResultType == "input_required" {
		rl = append(inputRequestLines(sn), rl...)
	}
	tabs = append(tabs, detailTab{name: "response", lines: rl, json: true, copy: rc})
	all := append(append(append([]*session.Item(nil), req...), resp...), notes...)
	sort.Slice(all, func(i, j int) bool { return all[i].Seq < all[j].Seq })
	tabs = append(tabs, rawTab(m, all), httpTab(m, all))
	var nl []string
	if more := d.frames.nNotes - len(notes); more > 0 {
		nl = append(nl, fmt.Sprintf("(%d earlier correlated frames are in the journal; the newest %d follow)", more, len(notes)))
	}
	for _, it := range notes {
		nl = append(nl, it.Frame.Time.In(m.opts.Location).Format("15:04:05.000")+" "+it.Frame.Dir.String()+" "+summary(it))
	}
	if len(nl) == 0 {
		nl = []string{"(no correlated notifications)"}
	}
	tabs = append(tabs, detailTab{name: fmt.Sprintf("notifications (%d)", d.frames.nNotes), lines: nl})
	if len(d.tabs) == len(tabs) {
		for i := range tabs {
			d.tabs[i] = tabs[i]
		}
	} else {
		d.tabs = tabs
	}
}

// maxDetailBytes bounds how much of one huge frame a detail view reads
// back to show (copy reads it all).
const maxDetailBytes = 16 << 20

// exactBytes is a frame's data as it crossed the wire: held in memory, or
// read back from the journal (the first maxDetailBytes of it) when memory
// holds only its head.
func exactBytes(st *session.Store, it *session.Item) []byte {
	if !it.Cut {
		return it.Frame.Data
	}
	b, err := st.Bytes(it.Seq)
	if err != nil {
		return it.Frame.Data
	}
	if len(b) > maxDetailBytes {
		b = b[:maxDetailBytes]
	}
	return b
}

// inputRequestLines lists what an input_required round asks for, and
// where the chain went.
func inputRequestLines(sn session.CallSnapshot) []string {
	var ir session.InputRequired
	_ = json.Unmarshal(sn.Result, &ir)
	l := []string{fmt.Sprintf("input_required (MRTR round %d): the server asks for %d input(s):", sn.Round+1, len(ir.InputRequests))}
	names := make([]string, 0, len(ir.InputRequests))
	for k := range ir.InputRequests {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		r := ir.InputRequests[k]
		l = append(l, "  "+termsafe.Line(k)+": "+termsafe.Line(r.Method)+" "+oneLine(r.Params, 200))
	}
	if len(ir.RequestState) > 0 {
		l = append(l, "  requestState: "+humanBytes(len(ir.RequestState))+" (echoed byte for byte)")
	}
	return append(l, chainText(sn), "")
}

func (d *detail) buildItem(m *Model) {
	it := d.item
	d.title = fmt.Sprintf("#%d · %s · %s %s", it.Seq, it.Frame.Time.In(m.opts.Location).Format("15:04:05.000"), it.Frame.Dir, it.Frame.Kind)
	data := exactBytes(m.s.Store(), it)
	main := detailTab{name: "message", lines: prettyLines(data), json: it.Frame.Kind == transport.Message, copy: data}
	if it.Frame.Kind == transport.Event {
		main.lines = []string{eventText(it.Frame.Meta)}
		main.copy = []byte(eventText(it.Frame.Meta))
	}
	if it.Note != "" {
		main.lines = append([]string{"note: " + termsafe.Line(it.Note), ""}, main.lines...)
	}
	d.tabs = []detailTab{main, rawTab(m, []*session.Item{it}), httpTab(m, []*session.Item{it})}
}

func summary(it *session.Item) string {
	if it.Env != nil {
		return termsafe.Line(it.Env.Method) + " " + oneLine(it.Env.Params, 200)
	}
	if it.Frame.Kind == transport.Event {
		return eventText(it.Frame.Meta)
	}
	return oneLine(it.Frame.Data, 200)
}

// rawTab shows the exact bytes of each frame, made inert.
func rawTab(m *Model, items []*session.Item) detailTab {
	var l []string
	var all []byte
	for _, it := range items {
		size := len(it.Frame.Data)
		if it.Cut {
			size = it.Size
		}
		l = append(l, fmt.Sprintf("── #%d %s %s %s %d bytes", it.Seq, it.Frame.Time.In(m.opts.Location).Format("15:04:05.000"),
			it.Frame.Dir, it.Frame.Kind, size))
		data := exactBytes(m.s.Store(), it)
		shown := data
		if len(shown) > 256<<10 {
			shown = shown[:256<<10]
		}
		l = append(l, strings.Split(termsafe.Text(string(shown)), "\n")...)
		if len(all) < maxDetailBytes {
			all = append(all, data...)
			all = append(all, '\n')
		}
	}
	if len(l) > maxDetailLines {
		l = l[:maxDetailLines]
	}
	return detailTab{name: "raw", lines: l, copy: all}
}

// httpTab shows the transport metadata of each frame.
func httpTab(m *Model, items []*session.Item) detailTab {
	var l []string
	for _, it := range items {
		mt := it.Frame.Meta
		if mt.HTTPMethod == "" && mt.URL == "" && mt.Status == 0 && len(mt.Headers) == 0 && mt.Stream == "" && mt.EventID == "" {
			continue
		}
		line := fmt.Sprintf("#%d %s", it.Seq, it.Frame.Dir)
		if mt.HTTPMethod != "" {
			line += " " + mt.HTTPMethod
		}
		if mt.URL != "" {
			line += " " + termsafe.Line(mt.URL)
		}
		if mt.Status != 0 {
			line += fmt.Sprintf(" → %d", mt.Status)
		}
		if mt.Stream != "" {
			line += " stream " + termsafe.Line(mt.Stream)
		}
		if mt.EventID != "" {
			line += " event-id " + termsafe.Line(mt.EventID)
		}
		if mt.Retry != 0 {
			line += fmt.Sprintf(" retry %dms", mt.Retry)
		}
		l = append(l, line)
		var hs []string
		for k, v := range mt.Headers {
			hs = append(hs, "    "+termsafe.Line(k)+": "+termsafe.Line(v))
		}
		sort.Strings(hs)
		l = append(l, hs...)
	}
	if len(l) == 0 {
		l = []string{"(no HTTP metadata: stdio, or not sent yet)"}
	}
	return detailTab{name: "http", lines: l}
}

func (d *detail) cur_() *detailTab { return &d.tabs[clamp(d.tab, 0, len(d.tabs)-1)] }

func (d *detail) key(m *Model, name string, msg tea.KeyPressMsg) (bool, tea.Cmd) {
	page := max(1, m.hgt-5)
	t := d.cur_()
	if d.searching {
		switch name {
		case "search-run":
			d.searching, d.query = false, d.input
			d.rematch()
			d.jump(0)
		case "search-cancel":
			d.searching = false
		case "search-backspace":
			if r := []rune(d.input); len(r) > 0 {
				d.input = string(r[:len(r)-1])
			}
		default:
			d.input += keys.Text(msg)
		}
		return false, nil
	}
	switch name {
	case "detail-close":
		return true, nil
	case "quit":
		m.quit = true
	case "help":
		m.push(newHelp(m))
	case "tab-next":
		d.tab = (d.tab + 1) % len(d.tabs)
		d.top = 0
		d.rematch()
	case "tab-prev":
		d.tab = (d.tab + len(d.tabs) - 1) % len(d.tabs)
		d.top = 0
		d.rematch()
	case "up":
		d.top--
	case "down":
		d.top++
	case "page-up":
		d.top -= page
	case "page-down":
		d.top += page
	case "top":
		d.top = 0
	case "follow":
		d.top = len(t.lines)
	case "search":
		d.searching, d.input = true, ""
	case "search-next":
		d.jump(1)
	case "search-prev":
		d.jump(-1)
	case "copy":
		data := t.copy
		what := t.name
		if data == nil {
			data = []byte(strings.Join(t.lines, "\n"))
		}
		return false, m.copyText(string(data), what)
	}
	d.top = clamp(d.top, 0, max(0, len(t.lines)-page))
	return false, nil
}

func (d *detail) rematch() {
	d.matches = d.matches[:0]
	if d.query == "" || len(d.tabs) == 0 {
		return
	}
	q := strings.ToLower(d.query)
	for i, l := range d.cur_().lines {
		if strings.Contains(strings.ToLower(l), q) {
			d.matches = append(d.matches, i)
		}
	}
}

func (d *detail) jump(step int) {
	if len(d.matches) == 0 {
		return
	}
	if step != 0 {
		d.cur = (d.cur + step + len(d.matches)) % len(d.matches)
	} else {
		d.cur = 0
		for i, l := range d.matches {
			if l >= d.top {
				d.cur = i
				break
			}
		}
	}
	d.top = max(0, d.matches[d.cur]-2)
}

func (d *detail) render(m *Model, w, h int) string {
	var b strings.Builder
	b.WriteString(m.th.Title.Render(fit(" "+d.title, w)) + "\n")
	var tabs []string
	for i, t := range d.tabs {
		if i == d.tab {
			tabs = append(tabs, m.th.Selected.Render(" "+t.name+" "))
		} else {
			tabs = append(tabs, m.th.Faint.Render(" "+t.name+" "))
		}
	}
	b.WriteString(fit(strings.Join(tabs, "│"), w) + "\n")
	t := d.cur_()
	bodyH := max(1, h-3)
	q := strings.ToLower(d.query)
	end := min(len(t.lines), d.top+bodyH)
	for i := d.top; i < end; i++ {
		l := fit(t.lines[i], w)
		switch {
		case q != "" && strings.Contains(strings.ToLower(l), q):
			l = highlight(m, l, q)
		case t.json:
			l = colourJSONLine(m.th, l)
		}
		b.WriteString(l + "\n")
	}
	for i := end - d.top; i < bodyH; i++ {
		b.WriteString("\n")
	}
	switch {
	case d.searching:
		b.WriteString(m.th.Accent.Render("/" + termsafe.Line(d.input) + "█"))
	case d.query != "":
		b.WriteString(m.th.Faint.Render(fmt.Sprintf("/%s: %d matches · line %d of %d", termsafe.Line(d.query), len(d.matches), d.top+1, len(t.lines))))
	default:
		b.WriteString(m.th.Faint.Render(fmt.Sprintf("line %d of %d", min(d.top+1, len(t.lines)), len(t.lines))))
	}
	return b.String()
}

// highlight marks every case-insensitive occurrence of q in a plain line.
func highlight(m *Model, l, q string) string {
	l = ansi.Strip(l)
	low := strings.ToLower(l)
	var b strings.Builder
	for {
		i := strings.Index(low, q)
		if i < 0 || len(low) != len(l) {
			b.WriteString(l)
			return b.String()
		}
		b.WriteString(l[:i] + m.th.Match.Render(l[i:i+len(q)]))
		l, low = l[i+len(q):], low[i+len(q):]
	}
}
