// Package detail is the detail view (enter): one call — its request,
// response (rendered or raw JSON), raw frames, HTTP metadata and correlated
// notifications — or one notification-pane item, each tab a pager
// (ui/widget/pager) over the frames' own bytes.
package detail

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/framestore"
	"mcpscope/internal/termsafe"
	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/transport"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
	"mcpscope/ui/widget"
	"mcpscope/ui/widget/pager"
)

// Session is what the detail reads of the session and the root, and the
// intents it sends.
type Session interface {
	Store() *framestore.Store
	// Lookup finds a call by key (the next MRTR round of a followed call).
	Lookup(key string) *session.Call
	// RoundRoot is the key of the round that started sn's MRTR chain.
	RoundRoot(sn session.CallSnapshot) string
	// Progress is a running call's progress in one plain line.
	Progress(sn session.CallSnapshot) string
	// OutputSchema is the outputSchema the catalog knows of a tool (nil:
	// none), shown beside its structuredContent.
	OutputSchema(tool string) json.RawMessage
	// Area is the size the detail is drawn in (the body, or its right side
	// when beside the list).
	Area() (w, h int)
	// Step moves the selection of the list the detail came from by k rows
	// and gives the row selected now (a call, or a notification-pane item).
	Step(from From, k int) (*session.Call, *framestore.Item)
	// Cancel cancels the call (or says why not).
	Cancel(c *session.Call) view.Action
	// Save asks where to write data (what it is, a suggested file name)
	// and writes it.
	Save(what, name string, data []byte) view.Action
	// Stdio reports a server spoken to over stdio: its frames carry no
	// HTTP, so the detail has no http tab.
	Stdio() bool
}

// From is the list a detail was opened from: ] and [ move in it.
type From int8

const (
	FromNone From = iota
	FromRequests
	FromNotes
)

// Target is what a detail shows: a call or an item, on which tab.
type Target struct {
	Call *session.Call
	Item *framestore.Item
	Tab  int // 0 request (or message), 1 response…
	From From
	// Follow: the call was sent from the catalog, so the detail follows it
	// to its next MRTR round, to the answer that ends it.
	Follow bool
}

// tab is one page of the detail view: a doc, built when what it shows
// changes, and the pager that shows it.
type tab struct {
	name string
	p    *pager.Pager
	copy func() ([]byte, error) // what y copies (nil: the tab's text)
}

// View shows one call or one notification-pane item.
type View struct {
	s       Session
	call    *session.Call
	item    *framestore.Item
	frames  callFrames
	version string
	tabs    []*tab
	tab     int
	nowrap  bool // wrapping is off in every tab
	from    From
	follow  bool
	srcs    map[uint64]*frameSrc
	used    map[uint64]bool // the frames the last build showed

	searching bool
	input     string

	rv resultView // the response tab's rendered view (result.go)
}

// New shows t, laid out now.
func New(c view.Context, s Session, t Target) *View {
	v := &View{s: s, call: t.Call, item: t.Item, tab: t.Tab, from: t.From, follow: t.Follow}
	v.refresh(c)
	return v
}

var (
	clamp = widget.Clamp
	fit   = widget.Fit
	itoa  = strconv.Itoa
)

// Call is the call shown (nil for an item), Item the item.
func (v *View) Call() *session.Call    { return v.call }
func (v *View) Item() *framestore.Item { return v.item }

// TabName is the name of the tab shown.
func (v *View) TabName() string { return v.cur().name }

// Doc is tab i's doc.
func (v *View) Doc(i int) *pager.Doc { return v.tabs[i].p.Doc() }

// Frames is how many frames the view holds laid out: bounded, however
// long a call it shows streams.
func (v *View) Frames() int { return len(v.srcs) }

// Scope is keys.Search while a search is typed.
func (v *View) Scope() keys.Scope {
	if v.searching {
		return keys.Search
	}
	return Scope
}

// Key runs a binding; typed text goes to the search line.
func (v *View) Key(c view.Context, name string, msg tea.KeyPressMsg) view.Action {
	v.fit()
	if v.searching {
		if a, ok := searchBindings.Do(v, c, name); ok {
			return a
		}
		v.input += keys.Text(msg)
		return view.Action{}
	}
	if name == "" {
		// The call's own verbs work here too: cancel a call you landed on.
		name = c.Keys.Lookup(keys.Requests, msg.String(), false)
	}
	a, _ := bindings.Do(v, c, name)
	return a
}

// Disabled is why the binding called name cannot run now.
func (v *View) Disabled(c view.Context, name string) string {
	if v.searching {
		return searchBindings.Why(v, c, name)
	}
	return bindings.Why(v, c, name)
}

// Footer is a call's footer, a notification's (no response), or the
// search line's.
func (v *View) Footer(c view.Context) []string {
	switch {
	case v.searching:
		return c.Keys.Footer(keys.Search)
	case v.call == nil:
		return itemFooter
	}
	return c.Keys.Footer(Scope)
}

// Refresh rebuilds the tabs when what they show has changed.
func (v *View) Refresh(c view.Context) { v.refresh(c) }

// Scroll moves the view k rows (the mouse wheel).
func (v *View) Scroll(k int) {
	v.fit()
	v.cur().p.Scroll(k)
}

// Show shows the row the list (from) has selected now, keeping the tab
// and the wrap: a click in the list beside the detail.
func (v *View) Show(c view.Context, from From, call *session.Call, item *framestore.Item) {
	v.from = from
	v.retarget(c, call, item)
}

// MaxNotes bounds the correlated notifications a call's detail reads back
// (the newest); the journal has the rest.
const MaxNotes = 1000

// callFrames are the frames of one call, found in the store's index: its
// request(s), its response(s) and the newest of its other frames.
type callFrames struct {
	next   uint64 // the next frame to look at
	req    []uint64
	resp   []uint64
	notes  []uint64 // at most MaxNotes, the newest
	nNotes int
}

// find looks at the frames since the last look for the call's own.
func (cf *callFrames) find(st *framestore.Store, key string) {
	st.Scan(cf.next, 0, func(e framestore.Entry) bool {
		cf.next = e.Seq + 1
		if e.CallKey != key {
			return true
		}
		switch {
		case e.Dir == transport.Out && e.Class == journal.ClassRequest:
			cf.req = append(cf.req, e.Seq)
		case e.Dir == transport.In && (e.Class == journal.ClassResult || e.Class == journal.ClassError):
			cf.resp = append(cf.resp, e.Seq)
		default:
			cf.nNotes++
			if len(cf.notes) == MaxNotes {
				cf.notes = append(cf.notes[:0], cf.notes[1:]...)
			}
			cf.notes = append(cf.notes, e.Seq)
		}
		return true
	})
}

// refresh rebuilds the tabs when what they show has changed.
func (v *View) refresh(c view.Context) {
	if v.item != nil {
		if ver := v.loadsVersion(); v.tabs == nil || ver != v.version {
			v.version = ver
			v.buildItem(c)
		}
		return
	}
	if v.follow {
		// A round answered with input_required goes on as a new call.
		for i := 0; i < session.MaxRounds; i++ {
			next := v.call.Snapshot().Next
			nc := v.s.Lookup(next)
			if next == "" || nc == nil {
				break
			}
			v.call, v.frames, v.version, v.srcs = nc, callFrames{}, "", nil
		}
	}
	st := v.s.Store()
	if v.frames.next == 0 {
		// A call's frames begin with its request: look from there (from
		// now, when it is not on the wire yet; Last before Seq, so the
		// request cannot slip between the two).
		last := st.Last()
		v.frames.next = last + 1
		if seq := v.call.Snapshot().Seq; seq != 0 {
			v.frames.next = seq
		}
	}
	v.frames.find(st, v.call.Key)
	sn := v.call.Snapshot()
	f := &v.frames
	ver := fmt.Sprintf("%s/%d/%d/%d/%d/%s/%t/%s", sn.State, len(f.req), len(f.resp), f.nNotes, sn.Late, sn.Next, sn.ChainErr != nil, v.loadsVersion())
	if ver == v.version {
		return
	}
	v.version = ver
	v.buildCall(c, sn)
}

// items reads frames back from the store.
func items(st *framestore.Store, seqs []uint64) []*framestore.Item {
	out := make([]*framestore.Item, 0, len(seqs))
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
func (v *View) title(c view.Context, w int) string {
	if v.item != nil {
		it := v.item
		return fit(fmt.Sprintf(" #%d · %s · %s %s", it.Seq, it.Frame.Time.In(c.Location).Format("15:04:05.000"), it.Frame.Dir, it.Frame.Kind), w)
	}
	sn := v.call.Snapshot()
	head := strings.TrimRight(fmt.Sprintf(" call %s · %s %s", widget.IDText(sn.Key), termsafe.Line(sn.Method), termsafe.Line(sn.Name)), " ")
	word := session.StateWord(&sn)
	if sn.Handle != "" {
		word += " as " + termsafe.Line(sn.Handle) // detached: its record, to rejoin
	}
	tail := " · " + word + " · " + widget.Dur(sn.Duration(c.Now()))
	if sn.Round > 0 {
		tail += fmt.Sprintf(" · MRTR round %d of #%s (retries #%s)", sn.Round+1, v.s.RoundRoot(sn), sn.Parent)
	}
	if sn.TaskID != "" {
		tail += " · task " + termsafe.Line(sn.TaskID)
	}
	if room := w - ansi.StringWidth(tail); ansi.StringWidth(head) > room {
		head = fit(head, max(12, room))
	}
	return fit(head+tail, w)
}

func (v *View) buildCall(c view.Context, sn session.CallSnapshot) {
	v.used = map[uint64]bool{}
	defer v.prune()
	st := v.s.Store()
	req, resp, notes := items(st, v.frames.req), items(st, v.frames.resp), items(st, v.frames.notes)
	var docs []*pager.Doc
	var names []string
	var copies []func() ([]byte, error)

	rq := &pager.Doc{}
	var rqCopy func() ([]byte, error)
	if len(req) > 0 {
		v.addFrame(rq, req[0], false)
		rqCopy = frameCopy(st, req[0])
	} else {
		rq.AddText(pager.Faint, "(not on the wire yet; params as they will be sent)")
		rq.AddJSON(sn.Params)
		params := sn.Params
		rqCopy = func() ([]byte, error) { return params, nil }
	}
	docs, names, copies = append(docs, rq), append(names, "request"), append(copies, rqCopy)

	rs := &pager.Doc{}
	if sn.ResultType == "input_required" {
		rs.AddText(pager.Plain, inputRequestLines(sn)...)
	}
	if len(resp) > 0 && sn.Failure != nil {
		rs.AddText(pager.Plain, "ended without the server's word: "+termsafe.Line(sn.Failure.Error()), "")
	}
	for i, it := range resp {
		if i > 0 || it.Note != "" {
			rs.AddText(pager.Faint, "", "── "+termsafe.Line(it.Note)+" (#"+itoa(int(it.Seq))+")")
		}
		v.addFrame(rs, it, false)
	}
	switch {
	case len(resp) == 0 && sn.Failure != nil:
		rs.AddText(pager.Plain, "no response from the server:", termsafe.Line(sn.Failure.Error()))
	case len(resp) == 0:
		rs.AddText(pager.Faint, "(waiting for the response)")
		if sn.HasProgress {
			rs.AddText(pager.Plain, "progress "+v.s.Progress(sn))
		}
	}
	if rd, ok := v.renderedResponse(c, sn, resp); ok {
		rs = rd
	}
	var rsCopy func() ([]byte, error)
	if len(resp) > 0 {
		rsCopy = frameCopy(st, resp[0])
	}
	docs, names, copies = append(docs, rs), append(names, "response"), append(copies, rsCopy)

	all := append(append(append([]*framestore.Item(nil), req...), resp...), notes...)
	sort.Slice(all, func(i, j int) bool { return all[i].Seq < all[j].Seq })
	docs, names, copies = append(docs, v.rawDoc(c, all)), append(names, "raw"), append(copies, rawCopy(st, all))
	if v.hasHTTP(all) {
		docs, names, copies = append(docs, httpDoc(all)), append(names, "http"), append(copies, nil)
	}

	nd := &pager.Doc{}
	if more := v.frames.nNotes - len(notes); more > 0 {
		nd.AddText(pager.Faint, fmt.Sprintf("(%d earlier correlated frames are in the journal; the newest %d follow)", more, len(notes)))
	}
	var nl []string
	for _, it := range notes {
		l := it.Frame.Time.In(c.Location).Format("15:04:05.000") + " " + it.Frame.Dir.String() + " "
		if it.Note != "" { // before the message, which wraps: progress after the cancel says so first
			l += "── " + termsafe.Line(it.Note) + " ── "
		}
		nl = append(nl, l+summary(it))
	}
	if len(nl) == 0 {
		nl = []string{"(no correlated notifications)"}
	}
	nd.AddText(pager.Plain, nl...)
	docs, names, copies = append(docs, nd), append(names, fmt.Sprintf("notifications (%d)", v.frames.nNotes)), append(copies, nil)
	v.setTabs(docs, names, copies)
	v.foldRendered()
}

// setTabs puts new docs in the tabs, keeping each tab's place.
func (v *View) setTabs(docs []*pager.Doc, names []string, copies []func() ([]byte, error)) {
	if len(v.tabs) != len(docs) {
		v.tabs = nil
		for range docs {
			p := pager.New(&pager.Doc{})
			p.SetWrap(!v.nowrap)
			v.tabs = append(v.tabs, &tab{p: p})
		}
	}
	for i, t := range v.tabs {
		t.name, t.copy = names[i], copies[i]
		fresh := t.p.Doc() == nil || t.p.Doc().Lines() != docs[i].Lines()
		t.p.SetDoc(docs[i])
		if fresh && i == 0 && v.call != nil {
			// A request's _meta (progress token, and in 2026-07-28 the client's
			// capabilities and info) is the same on every call: folded, the
			// arguments show first.
			t.p.FoldKey(`"_meta"`)
		}
	}
}

// inputRequestLines lists what an input_required round asks for, and
// where the chain went.
func inputRequestLines(sn session.CallSnapshot) []string {
	var ir protocol.InputRequired
	_ = json.Unmarshal(sn.Result, &ir)
	l := []string{fmt.Sprintf("input_required (MRTR round %d): the server asks for %d input(s):", sn.Round+1, len(ir.InputRequests))}
	names := make([]string, 0, len(ir.InputRequests))
	for k := range ir.InputRequests {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		r := ir.InputRequests[k]
		l = append(l, "  "+termsafe.Line(k)+": "+termsafe.Line(r.Method)+" "+widget.OneLine(r.Params, 200))
	}
	if len(ir.RequestState) > 0 {
		l = append(l, "  requestState: "+widget.Bytes(len(ir.RequestState))+" (echoed byte for byte)")
	}
	return append(l, widget.ChainText(sn), "")
}

func (v *View) buildItem(c view.Context) {
	it := v.item
	st := v.s.Store()
	main := &pager.Doc{}
	if it.Note != "" {
		main.AddText(pager.Plain, "note: "+termsafe.Line(it.Note), "")
	}
	cp := frameCopy(st, it)
	if it.Frame.Kind == transport.Event {
		ev := widget.EventText(it.Frame.Meta)
		main.AddText(pager.Plain, ev)
		cp = func() ([]byte, error) { return []byte(ev), nil }
	} else {
		v.addFrame(main, it, it.Frame.Kind != transport.Message)
	}
	one := []*framestore.Item{it}
	docs, names, copies := []*pager.Doc{main, v.rawDoc(c, one)}, []string{"message", "raw"}, []func() ([]byte, error){cp, rawCopy(st, one)}
	if v.hasHTTP(one) {
		docs, names, copies = append(docs, httpDoc(one)), append(names, "http"), append(copies, nil)
	}
	v.setTabs(docs, names, copies)
}

// hasHTTP reports whether the detail has an http tab: not for a stdio
// server, unless a frame carries HTTP metadata after all (a recording
// read back under another target).
func (v *View) hasHTTP(all []*framestore.Item) bool {
	if !v.s.Stdio() {
		return true
	}
	for _, it := range all {
		if mt := it.Frame.Meta; mt.HTTPMethod != "" || mt.URL != "" || mt.Status != 0 || len(mt.Headers) > 0 {
			return true
		}
	}
	return false
}

func summary(it *framestore.Item) string {
	if it.Env != nil {
		return termsafe.Line(it.Env.Method) + " " + widget.OneLine(it.Env.Params, 200)
	}
	if it.Frame.Kind == transport.Event {
		return widget.EventText(it.Frame.Meta)
	}
	return widget.OneLine(it.Frame.Data, 200)
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
	json *pager.Segment // nil: not JSON
	raw  *pager.Segment
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
func (v *View) source(it *framestore.Item) *frameDocs {
	if v.srcs == nil {
		v.srcs = map[uint64]*frameSrc{}
	}
	if v.used != nil {
		v.used[it.Seq] = true
	}
	src := v.srcs[it.Seq]
	if src == nil {
		src = &frameSrc{size: len(it.Frame.Data)}
		if it.Cut {
			src.size = it.Size
		}
		v.srcs[it.Seq] = src
	}
	if fd := src.done.Load(); fd != nil {
		return fd
	}
	st := v.s.Store()
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
func layFrame(st *framestore.Store, it *framestore.Item) *frameDocs {
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
	fd := &frameDocs{raw: pager.RawSegment(b), err: err}
	if err == nil && it.Frame.Kind == transport.Message && json.Valid(b) {
		fd.json = pager.JSONSegment(b)
	}
	return fd
}

// prune forgets the frames the last build no longer showed (a streaming
// call's older notifications), so a detail left open stays bounded.
func (v *View) prune() {
	for seq, src := range v.srcs {
		if !v.used[seq] && (!src.started || src.done.Load() != nil) {
			delete(v.srcs, seq)
		}
	}
	v.used = nil
}

// loadsVersion changes when a frame read in the background is ready.
func (v *View) loadsVersion() string {
	n := 0
	for _, s := range v.srcs {
		if s.started && s.done.Load() != nil {
			n++
		}
	}
	return itoa(n)
}

// addFrame adds a frame to a doc: JSON pretty-printed, anything else as
// inert lines (raw forces lines).
func (v *View) addFrame(d *pager.Doc, it *framestore.Item, raw bool) {
	fd := v.source(it)
	if fd == nil {
		d.AddText(pager.Faint, "(reading "+widget.Bytes(v.srcs[it.Seq].size)+"…)")
		return
	}
	if fd.err != nil {
		d.AddText(pager.Plain, "(only the first "+widget.Bytes(len(it.Frame.Data))+" are at hand: "+termsafe.Line(fd.err.Error())+")")
	}
	if fd.json != nil && !raw {
		d.Add(fd.json)
		return
	}
	d.Add(fd.raw)
}

// frameCopy is what y copies of a frame: its exact bytes, read back
// whole when memory holds only their head.
func frameCopy(st *framestore.Store, it *framestore.Item) func() ([]byte, error) {
	return func() ([]byte, error) {
		if !it.Cut {
			return it.Frame.Data, nil
		}
		return st.Bytes(it.Seq)
	}
}

func rawCopy(st *framestore.Store, all []*framestore.Item) func() ([]byte, error) {
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
func (v *View) rawDoc(c view.Context, all []*framestore.Item) *pager.Doc {
	rd := &pager.Doc{}
	for _, it := range all {
		size := len(it.Frame.Data)
		if it.Cut {
			size = it.Size
		}
		rd.AddText(pager.Faint, fmt.Sprintf("── #%d %s %s %s %d bytes", it.Seq, it.Frame.Time.In(c.Location).Format("15:04:05.000"),
			it.Frame.Dir, it.Frame.Kind, size))
		if it.Frame.Kind == transport.Event {
			rd.AddText(pager.Plain, widget.EventText(it.Frame.Meta))
			continue
		}
		v.addFrame(rd, it, true)
	}
	return rd
}

// httpDoc shows the transport metadata of each frame.
func httpDoc(all []*framestore.Item) *pager.Doc {
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
		for k, val := range mt.Headers {
			hs = append(hs, "    "+termsafe.Line(k)+": "+termsafe.Line(val))
		}
		sort.Strings(hs)
		l = append(l, hs...)
	}
	if len(l) == 0 {
		l = []string{"(no HTTP metadata: stdio, or not sent yet)"}
	}
	hd := &pager.Doc{}
	hd.AddText(pager.Plain, l...)
	return hd
}

// ─── moving ───────────────────────────────────────────────────────────────

func (v *View) cur() *tab {
	if len(v.tabs) == 0 {
		v.tabs = []*tab{{name: "…", p: pager.New(&pager.Doc{})}}
	}
	return v.tabs[clamp(v.tab, 0, len(v.tabs)-1)]
}

// fit sizes every tab's pager to the text area the detail has now.
func (v *View) fit() {
	w, h := v.s.Area()
	for _, t := range v.tabs {
		t.p.Resize(w-1, h-3) // a gutter; title, tabs and a status line
	}
}

// retarget shows call or item, keeping the tab and the wrap.
func (v *View) retarget(c view.Context, call *session.Call, item *framestore.Item) {
	if (call == nil && item == nil) || (call == v.call && item == v.item) {
		return
	}
	*v = View{s: v.s, call: call, item: item, tab: v.tab, nowrap: v.nowrap, from: v.from, rv: resultView{raw: v.rv.raw}}
	v.refresh(c)
	v.tab = clamp(v.tab, 0, len(v.tabs)-1) // a call has more tabs than a notification
}

// ─── drawing ──────────────────────────────────────────────────────────────

// Render draws the title, the tabs, the pager and a status line.
func (v *View) Render(c view.Context, w, h int) string {
	th := c.Theme
	var b strings.Builder
	b.WriteString(th.Title.Render(v.title(c, w)) + "\n")
	var tabs []string
	for i, t := range v.tabs {
		if i == v.tab {
			tabs = append(tabs, th.Selected.Render(" "+t.name+" "))
		} else {
			tabs = append(tabs, th.Faint.Render(" "+t.name+" "))
		}
	}
	b.WriteString(fit(strings.Join(tabs, "│"), w) + "\n")
	p := v.cur().p
	for _, t := range v.tabs {
		t.p.Resize(w-1, h-3)
	}
	rows := p.Render(th)
	for _, r := range rows {
		b.WriteString(r + "\n")
	}
	_, ph := p.Size()
	for i := len(rows); i < ph; i++ {
		b.WriteString("\n")
	}
	mode := " · wrap"
	if !p.Wrap() {
		mode = " · no wrap"
	}
	switch {
	case v.searching:
		b.WriteString(th.Accent.Render("/" + termsafe.Line(v.input) + "█"))
	case p.Query() != "":
		b.WriteString(th.Faint.Render(fit(fmt.Sprintf("/%s: %s · %s", termsafe.Line(p.Query()), widget.Counted(p.Hits(), "match", "matches"), p.Where())+mode, w)))
	default:
		b.WriteString(th.Faint.Render(fit(p.Where()+mode, w)))
	}
	return b.String()
}
