package ui

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/internal/termsafe"
	"mcpscope/session"
	"mcpscope/transport"
	"mcpscope/ui/keys"
)

// detailTab is one page of the detail view: a doc, built when what it
// shows changes, and the pager that shows it.
type detailTab struct {
	name string
	p    *pager
	copy func() ([]byte, error) // what y copies (nil: the tab's text)
}

// Where a detail was opened from: ] and [ move in that list.
const (
	fromNone int8 = iota
	fromRequests
	fromNotes
)

// detail shows one call (request, response, raw frames, HTTP metadata,
// correlated notifications) or one notification-pane item.
type detail struct {
	call    *session.Call
	item    *session.Item
	frames  callFrames
	version string
	tabs    []*detailTab
	tab     int
	nowrap  bool // wrapping is off in every tab
	from    int8
	// follow: opened for a call sent from the catalog, so it follows the
	// call to its next MRTR round, to the answer that ends it.
	follow bool
	srcs   map[uint64]*frameSrc
	used   map[uint64]bool // the frames the last build showed

	searching bool
	input     string

	rv resultView // the response tab's rendered view (resultview.go)
}

func (m *Model) openDetail() {
	d := &detail{}
	if m.focus == paneNotes {
		d.item, d.from = m.selectedNote(), fromNotes
		if d.item == nil {
			return
		}
	} else {
		d.call, d.from = m.selectedCall(), fromRequests
		if d.call == nil {
			return
		}
	}
	d.refresh(m)
	m.push(d)
}

// landOn opens a call just sent on its response tab, where the answer
// appears when it comes; the requests pane selects it underneath.
func (m *Model) landOn(c *session.Call) {
	m.req.follow = true
	m.fixScroll()
	d := &detail{call: c, tab: 1, from: fromRequests, follow: true}
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
		if v := d.loadsVersion(); d.tabs == nil || v != d.version {
			d.version = v
			d.buildItem(m)
		}
		return
	}
	if d.follow {
		// A round answered with input_required goes on as a new call.
		for i := 0; i < session.MaxRounds; i++ {
			next := d.call.Snapshot().Next
			c := m.s.Lookup(next)
			if next == "" || c == nil {
				break
			}
			d.call, d.frames, d.version, d.srcs = c, callFrames{}, "", nil
		}
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
	v := fmt.Sprintf("%s/%d/%d/%d/%d/%s/%t/%s", sn.State, len(f.req), len(f.resp), f.nNotes, sn.Late, sn.Next, sn.ChainErr != nil, d.loadsVersion())
	if v == d.version {
		return
	}
	d.version = v
	d.buildCall(m, sn)
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

// title names what the detail shows in w columns; a call's state and
// duration are read when drawn, so they move while it runs, and a long
// tool name gives way before they do.
func (d *detail) title(m *Model, w int) string {
	if d.item != nil {
		it := d.item
		return fit(fmt.Sprintf(" #%d · %s · %s %s", it.Seq, it.Frame.Time.In(m.opts.Location).Format("15:04:05.000"), it.Frame.Dir, it.Frame.Kind), w)
	}
	sn := d.call.Snapshot()
	head := strings.TrimRight(fmt.Sprintf(" call %s · %s %s", sn.Key, termsafe.Line(sn.Method), termsafe.Line(sn.Name)), " ")
	tail := " · " + m.status(sn) + " · " + fmtDur(sn.Duration(m.opts.Now()))
	if sn.Round > 0 {
		tail += fmt.Sprintf(" · MRTR round %d of #%s (retries #%s)", sn.Round+1, m.roundRoot(sn), sn.Parent)
	}
	if sn.TaskID != "" {
		tail += " · task " + termsafe.Line(sn.TaskID)
	}
	if room := w - ansi.StringWidth(tail); ansi.StringWidth(head) > room {
		head = fit(head, max(12, room))
	}
	return fit(head+tail, w)
}

func (d *detail) buildCall(m *Model, sn session.CallSnapshot) {
	d.used = map[uint64]bool{}
	defer d.prune()
	st := m.s.Store()
	req, resp, notes := items(st, d.frames.req), items(st, d.frames.resp), items(st, d.frames.notes)
	var docs []*doc
	var names []string
	var copies []func() ([]byte, error)

	rq := &doc{}
	var rqCopy func() ([]byte, error)
	if len(req) > 0 {
		d.addFrame(m, rq, req[0], false)
		rqCopy = frameCopy(st, req[0])
	} else {
		rq.addText(clFaint, "(not on the wire yet; params as they will be sent)")
		rq.addJSON(sn.Params)
		params := sn.Params
		rqCopy = func() ([]byte, error) { return params, nil }
	}
	docs, names, copies = append(docs, rq), append(names, "request"), append(copies, rqCopy)

	rs := &doc{}
	if sn.ResultType == "input_required" {
		rs.addText(clPlain, inputRequestLines(sn)...)
	}
	if len(resp) > 0 && sn.Failure != nil {
		rs.addText(clPlain, "ended without the server's word: "+termsafe.Line(sn.Failure.Error()), "")
	}
	for i, it := range resp {
		if i > 0 || it.Note != "" {
			rs.addText(clFaint, "", "── "+termsafe.Line(it.Note)+" (#"+itoa(int(it.Seq))+")")
		}
		d.addFrame(m, rs, it, false)
	}
	switch {
	case len(resp) == 0 && sn.Failure != nil:
		rs.addText(clPlain, "no response from the server:", termsafe.Line(sn.Failure.Error()))
	case len(resp) == 0:
		rs.addText(clFaint, "(waiting for the response)")
		if sn.HasProgress {
			rs.addText(clPlain, "progress "+ansi.Strip(m.progressText(sn, 200, true)))
		}
	}
	if rd, ok := d.renderedResponse(m, sn, resp); ok {
		rs = rd
	}
	var rsCopy func() ([]byte, error)
	if len(resp) > 0 {
		rsCopy = frameCopy(st, resp[0])
	}
	docs, names, copies = append(docs, rs), append(names, "response"), append(copies, rsCopy)

	all := append(append(append([]*session.Item(nil), req...), resp...), notes...)
	sort.Slice(all, func(i, j int) bool { return all[i].Seq < all[j].Seq })
	docs, names, copies = append(docs, d.rawDoc(m, all)), append(names, "raw"), append(copies, rawCopy(st, all))
	docs, names, copies = append(docs, httpDoc(all)), append(names, "http"), append(copies, nil)

	nd := &doc{}
	if more := d.frames.nNotes - len(notes); more > 0 {
		nd.addText(clFaint, fmt.Sprintf("(%d earlier correlated frames are in the journal; the newest %d follow)", more, len(notes)))
	}
	var nl []string
	for _, it := range notes {
		nl = append(nl, it.Frame.Time.In(m.opts.Location).Format("15:04:05.000")+" "+it.Frame.Dir.String()+" "+summary(it))
	}
	if len(nl) == 0 {
		nl = []string{"(no correlated notifications)"}
	}
	nd.addText(clPlain, nl...)
	docs, names, copies = append(docs, nd), append(names, fmt.Sprintf("notifications (%d)", d.frames.nNotes)), append(copies, nil)
	d.setTabs(docs, names, copies)
	d.foldRendered()
}

// setTabs puts new docs in the tabs, keeping each tab's place.
func (d *detail) setTabs(docs []*doc, names []string, copies []func() ([]byte, error)) {
	if len(d.tabs) != len(docs) {
		d.tabs = nil
		for range docs {
			p := newPager(&doc{})
			p.wrap = !d.nowrap
			d.tabs = append(d.tabs, &detailTab{p: p})
		}
	}
	for i, t := range d.tabs {
		t.name, t.copy = names[i], copies[i]
		fresh := t.p.d == nil || t.p.d.n != docs[i].n
		t.p.setDoc(docs[i])
		if fresh && i == 0 && d.call != nil {
			// A request's _meta (progress token, and in 2026-07-28 the client's
			// capabilities and info) is the same on every call: folded, the
			// arguments show first.
			t.p.foldKey(`"_meta"`)
		}
	}
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
	st := m.s.Store()
	main := &doc{}
	if it.Note != "" {
		main.addText(clPlain, "note: "+termsafe.Line(it.Note), "")
	}
	cp := frameCopy(st, it)
	if it.Frame.Kind == transport.Event {
		ev := eventText(it.Frame.Meta)
		main.addText(clPlain, ev)
		cp = func() ([]byte, error) { return []byte(ev), nil }
	} else {
		d.addFrame(m, main, it, it.Frame.Kind != transport.Message)
	}
	one := []*session.Item{it}
	d.setTabs([]*doc{main, d.rawDoc(m, one), httpDoc(one)}, []string{"message", "raw", "http"},
		[]func() ([]byte, error){cp, rawCopy(st, one), nil})
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

// ─── frames, read whole and laid out once ─────────────────────────────────

// frameSrc is one frame's bytes as the detail shows them: the store's
// own copy when memory holds it whole, else read back from the journal
// once, and its JSON index; built in the background when large.
type frameSrc struct {
	size    int
	started bool
	done    atomic.Pointer[frameDocs]
}

type frameDocs struct {
	json *segment // nil: not JSON
	raw  *segment
	err  error
}

// syncBytes is the largest frame laid out while the UI waits; a larger
// one is read and indexed in the background (a 20 MiB result takes
// ~100 ms), the view saying so meanwhile.
const syncBytes = 256 << 10

// maxFrameBytes is the largest frame shown whole (the index counts bytes
// in 32 bits); a larger one shows its head, and y copies everything.
const maxFrameBytes = 1<<32 - 1

// source gives a frame's laid-out bytes, or nil while they are read.
func (d *detail) source(m *Model, it *session.Item) *frameDocs {
	if d.srcs == nil {
		d.srcs = map[uint64]*frameSrc{}
	}
	if d.used != nil {
		d.used[it.Seq] = true
	}
	src := d.srcs[it.Seq]
	if src == nil {
		src = &frameSrc{size: len(it.Frame.Data)}
		if it.Cut {
			src.size = it.Size
		}
		d.srcs[it.Seq] = src
	}
	if fd := src.done.Load(); fd != nil {
		return fd
	}
	st := m.s.Store()
	if src.size <= syncBytes && !it.Cut {
		src.done.Store(layFrame(st, it))
		return src.done.Load()
	}
	if !src.started {
		src.started = true
		go func() {
			src.done.Store(layFrame(st, it))
			st.Notify() // wakes the UI, which finds the frame laid out
		}()
	}
	return nil
}

// layFrame reads a frame whole and indexes it.
func layFrame(st *session.Store, it *session.Item) *frameDocs {
	b := it.Frame.Data
	var err error
	if it.Cut {
		if all, e := st.Bytes(it.Seq); e == nil {
			b = all
		} else {
			err = e
		}
	}
	if len(b) > maxFrameBytes {
		b = b[:maxFrameBytes]
	}
	fd := &frameDocs{raw: &segment{kind: segRaw, b: b, offs: lineStarts(b)}, err: err}
	if err == nil && it.Frame.Kind == transport.Message && json.Valid(b) {
		fd.json = &segment{kind: segJSON, b: b, recs: indexJSON(b)}
	}
	return fd
}

// prune forgets the frames the last build no longer showed (a streaming
// call's older notifications), so a detail left open stays bounded.
func (d *detail) prune() {
	for seq, src := range d.srcs {
		if !d.used[seq] && (!src.started || src.done.Load() != nil) {
			delete(d.srcs, seq)
		}
	}
	d.used = nil
}

// loadsVersion changes when a frame read in the background is ready.
func (d *detail) loadsVersion() string {
	n := 0
	for _, s := range d.srcs {
		if s.started && s.done.Load() != nil {
			n++
		}
	}
	return itoa(n)
}

func (d *detail) pending(doc *doc, src *frameSrc) {
	doc.addText(clFaint, "(reading "+humanBytes(src.size)+"…)")
}

// addFrame adds a frame to a doc: JSON pretty-printed, anything else as
// inert lines (raw forces lines).
func (d *detail) addFrame(m *Model, doc *doc, it *session.Item, raw bool) {
	fd := d.source(m, it)
	if fd == nil {
		d.pending(doc, d.srcs[it.Seq])
		return
	}
	if fd.err != nil {
		doc.addText(clPlain, "(only the first "+humanBytes(len(it.Frame.Data))+" are at hand: "+termsafe.Line(fd.err.Error())+")")
	}
	if fd.json != nil && !raw {
		doc.add(fd.json)
		return
	}
	doc.add(fd.raw)
}

// frameCopy is what y copies of a frame: its exact bytes, read back
// whole when memory holds only their head.
func frameCopy(st *session.Store, it *session.Item) func() ([]byte, error) {
	return func() ([]byte, error) {
		if !it.Cut {
			return it.Frame.Data, nil
		}
		return st.Bytes(it.Seq)
	}
}

func rawCopy(st *session.Store, all []*session.Item) func() ([]byte, error) {
	return func() ([]byte, error) {
		var out []byte
		for _, it := range all {
			b, err := frameCopy(st, it)()
			if err != nil {
				return nil, err
			}
			out = append(append(out, b...), '\n')
		}
		return out, nil
	}
}

// rawDoc shows the exact bytes of each frame, made inert.
func (d *detail) rawDoc(m *Model, all []*session.Item) *doc {
	rd := &doc{}
	for _, it := range all {
		size := len(it.Frame.Data)
		if it.Cut {
			size = it.Size
		}
		rd.addText(clFaint, fmt.Sprintf("── #%d %s %s %s %d bytes", it.Seq, it.Frame.Time.In(m.opts.Location).Format("15:04:05.000"),
			it.Frame.Dir, it.Frame.Kind, size))
		if it.Frame.Kind == transport.Event {
			rd.addText(clPlain, eventText(it.Frame.Meta))
			continue
		}
		d.addFrame(m, rd, it, true)
	}
	return rd
}

// httpDoc shows the transport metadata of each frame.
func httpDoc(all []*session.Item) *doc {
	var l []string
	for _, it := range all {
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
	hd := &doc{}
	hd.addText(clPlain, l...)
	return hd
}

// ─── keys ─────────────────────────────────────────────────────────────────

func (d *detail) cur() *detailTab {
	if len(d.tabs) == 0 {
		d.tabs = []*detailTab{{name: "…", p: newPager(&doc{})}}
	}
	return d.tabs[clamp(d.tab, 0, len(d.tabs)-1)]
}

// fit sizes every tab's pager to the text area the detail has now.
func (d *detail) fit(m *Model) {
	w, h := m.detailArea()
	for _, t := range d.tabs {
		t.p.resize(w-1, h-3) // a gutter; title, tabs and a status line
	}
}

func (d *detail) key(m *Model, name string, msg tea.KeyPressMsg) (bool, tea.Cmd) {
	d.fit(m)
	p := d.cur().p
	if d.searching {
		switch name {
		case "search-run":
			d.searching = false
			p.search(d.input)
			p.jump(0)
			if d.input != "" && len(p.hits) == 0 {
				m.setFlash("no match for " + termsafe.Line(d.input))
			}
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
	case "tab-next", "tab-prev":
		step := 1
		if name == "tab-prev" {
			step = len(d.tabs) - 1
		}
		q := p.query
		d.tab = (d.tab + step) % len(d.tabs)
		if np := d.cur().p; np.query != q {
			np.search(q) // the search goes with the reader
		}
	case "up":
		p.lineUp()
	case "down":
		p.lineDown()
	case "page-up":
		p.scroll(-p.h)
	case "page-down":
		p.scroll(p.h)
	case "top":
		p.home()
	case "follow":
		p.end()
	case "wrap":
		d.nowrap = !d.nowrap
		for _, t := range d.tabs {
			t.p.setWrap(!d.nowrap)
		}
		if d.nowrap {
			m.setFlash("wrap off: " + m.keyOf("scroll-left") + "/" + m.keyOf("scroll-right") + " scroll sideways")
		} else {
			m.setFlash("wrap on: long lines fold onto the next rows")
		}
	case "scroll-left", "scroll-right":
		if !p.wrap {
			k := max(8, p.w/2)
			if name == "scroll-left" {
				k = -k
			}
			p.hscroll(k)
		} else {
			m.setFlash("lines wrap: " + m.keyOf("wrap") + " turns wrapping off to scroll sideways")
		}
	case "fold":
		if !p.toggleFold() {
			m.setFlash("nothing to fold here: folds work on JSON objects and arrays")
		}
	case "fold-all":
		p.foldAll()
	case "unfold-all":
		p.unfoldAll()
	case "search":
		d.searching, d.input = true, ""
	case "search-next":
		p.jump(1)
	case "search-prev":
		p.jump(-1)
	case "next-item", "prev-item":
		step := 1
		if name == "prev-item" {
			step = -1
		}
		d.step(m, step)
	case "result-view":
		d.toggleResultView(m)
	case "save-media":
		return false, d.saveMedia(m)
	case "copy":
		t := d.cur()
		var data []byte
		var err error
		if t.copy != nil {
			data, err = t.copy()
		} else {
			data = []byte(strings.Join(docText(p.d), "\n"))
		}
		if err != nil {
			m.setFlash("copy: " + err.Error())
			return false, nil
		}
		return false, m.copyText(string(data), t.name)
	case "":
		// The call's own verbs work here too: cancel a call you landed on.
		if d.call != nil && m.km.Lookup(keys.Requests, msg.String(), false) == "cancel-call" {
			return false, m.cancelCall(d.call)
		}
	}
	return false, nil
}

// step shows the next or previous row of the list the detail came from,
// on the same tab.
func (d *detail) step(m *Model, k int) {
	if d.from == fromNone {
		m.setFlash(m.keyOf("next-item") + " and " + m.keyOf("prev-item") + " move in the requests and notifications panes")
		return
	}
	m.focus = paneRequests
	if d.from == fromNotes {
		m.focus = paneNotes
	}
	ls, n := m.focused()
	m.move(ls, n, k)
	m.fixScroll()
	d.retarget(m)
}

// retarget shows the list's selected row, keeping the tab and the wrap.
func (d *detail) retarget(m *Model) {
	var call *session.Call
	var item *session.Item
	if d.from == fromNotes {
		item = m.selectedNote()
	} else {
		call = m.selectedCall()
	}
	if (call == nil && item == nil) || (call == d.call && item == d.item) {
		return
	}
	*d = detail{call: call, item: item, tab: d.tab, nowrap: d.nowrap, from: d.from, rv: resultView{raw: d.rv.raw}}
	d.refresh(m)
	d.tab = clamp(d.tab, 0, len(d.tabs)-1) // a call has more tabs than a notification
}

// ─── drawing ──────────────────────────────────────────────────────────────

func (d *detail) render(m *Model, w, h int) string {
	var b strings.Builder
	b.WriteString(m.th.Title.Render(d.title(m, w)) + "\n")
	var tabs []string
	for i, t := range d.tabs {
		if i == d.tab {
			tabs = append(tabs, m.th.Selected.Render(" "+t.name+" "))
		} else {
			tabs = append(tabs, m.th.Faint.Render(" "+t.name+" "))
		}
	}
	b.WriteString(fit(strings.Join(tabs, "│"), w) + "\n")
	p := d.cur().p
	for _, t := range d.tabs {
		t.p.resize(w-1, h-3)
	}
	rows := p.render(m.th)
	for _, r := range rows {
		b.WriteString(r + "\n")
	}
	for i := len(rows); i < p.h; i++ {
		b.WriteString("\n")
	}
	mode := " · wrap"
	if !p.wrap {
		mode = " · no wrap"
	}
	switch {
	case d.searching:
		b.WriteString(m.th.Accent.Render("/" + termsafe.Line(d.input) + "█"))
	case p.query != "":
		b.WriteString(m.th.Faint.Render(fit(fmt.Sprintf("/%s: %s · %s", termsafe.Line(p.query), counted(len(p.hits), "match", "matches"), p.where())+mode, w)))
	default:
		b.WriteString(m.th.Faint.Render(fit(p.where()+mode, w)))
	}
	return b.String()
}
