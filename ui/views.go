package ui

import (
	tea "charm.land/bubbletea/v2"

	"mcpscope/framestore"
	"mcpscope/session"
	"mcpscope/transport"
	catview "mcpscope/ui/catalog"
	"mcpscope/ui/chooser"
	"mcpscope/ui/detail"
	"mcpscope/ui/editor"
	"mcpscope/ui/filterline"
	formview "mcpscope/ui/form"
	"mcpscope/ui/help"
	"mcpscope/ui/info"
	"mcpscope/ui/keys"
	"mcpscope/ui/listen"
	"mcpscope/ui/quitask"
	"mcpscope/ui/rejoin"
	"mcpscope/ui/roots"
	"mcpscope/ui/tasks"
	"mcpscope/ui/view"
	"mcpscope/ui/waterfall"
	"mcpscope/ui/widget/pager"
)

// viewKeys are the keymap groups of the views in their own packages (the
// view contract, ui/view): a new view registers here, one line, in the
// order `?` and the README list it.
var viewKeys = []view.Group{
	detail.Keys, detail.SearchKeys,
	help.Keys,
	catview.Keys,
	formview.Keys,
	editor.Keys,
	roots.AskKeys, roots.EditKeys,
	chooser.Keys,
	info.Keys,
	tasks.Keys,
	listen.Keys,
	rejoin.Keys,
	waterfall.Keys,
	filterline.Keys,
	quitask.Keys,
}

// component puts a view of the contract on the root's stack of modals.
type component struct{ v view.View }

func (c *component) scope() keys.Scope { return c.v.Scope() }

func (c *component) key(m *Model, name string, msg tea.KeyPressMsg) (bool, tea.Cmd) {
	return false, m.apply(c.v.Key(m.viewCtx(), name, msg), c)
}

func (c *component) render(m *Model, w, h int) string { return c.v.Render(m.viewCtx(), w, h) }

func (c *component) held() view.View { return c.v }

// viewer is a modal that holds a view of the contract: a component, or
// a form the root asked for (form.go).
type viewer interface {
	modal
	held() view.View
}

// update gives a message other than a key to the view c, when it takes
// them.
func (m *Model) update(c viewer, msg tea.Msg) tea.Cmd {
	if u, ok := c.held().(view.Updater); ok {
		return m.apply(u.Update(m.viewCtx(), msg), c)
	}
	return nil
}

// open puts v on top.
func (m *Model) open(v view.View) { m.push(&component{v}) }

// viewCtx is what every view may read.
func (m *Model) viewCtx() view.Context {
	// JSONRows reads the model's theme when called, not a copy captured
	// here: a captured copy went to the heap on every call (several a
	// frame), 7 MB a second of garbage in an idle `open`, the GC's headroom
	// then filled with it.
	return view.Context{Theme: m.th, Keys: m.km, Width: m.w, Height: m.hgt, Now: m.opts.Now, Location: m.opts.Location,
		JSONRows: func(raw []byte, w int, indent string) []string { return pager.JSONRows(m.th, raw, w, indent) }}
}

// apply does what a view (from, nil for the panes' own bindings) asked.
func (m *Model) apply(a view.Action, from modal) tea.Cmd {
	cmds := []tea.Cmd{a.Cmd}
	if a.Close && from != nil {
		cmds = append(cmds, m.pop(from))
	}
	if a.Open != nil {
		m.open(a.Open)
	}
	if a.Help {
		m.push(newHelp(m))
	}
	if a.Flash != "" {
		m.setFlash(a.Flash)
	}
	if a.Copy != nil {
		cmds = append(cmds, m.copyText(a.Copy.Text, a.Copy.What))
	}
	if a.Quit {
		m.requestQuit()
	}
	return tea.Batch(cmds...)
}

// sessionFacts is the read-only side of the session the info view is given.
type sessionFacts struct{ m *Model }

func (f sessionFacts) Info() session.Info             { return f.m.info }
func (f sessionFacts) Connection() (word, why string) { return f.m.connState() }
func (f sessionFacts) Transport() transport.Transport { return f.m.s.Transport() }
func (f sessionFacts) Journaled() bool                { return f.m.s.Store().Journaled() }
func (f sessionFacts) OTLP() string {
	if f.m.opts.OTLPStatus == nil {
		return ""
	}
	return f.m.opts.OTLPStatus()
}
func (f sessionFacts) Roots() string {
	r := f.m.resp
	switch {
	case r == nil:
		return ""
	case r.Asks():
		return "asked each time (--root ask); last given: " + RootsLine(r.Roots())
	}
	return RootsLine(r.Roots()) + " (answered to roots/list without asking; --root changes it)"
}
func (m *Model) openInfo() { m.open(info.New(sessionFacts{m})) }

// newEditor is an editor of text (editor.New) whose submit and decline
// act on the root: answers to a server's request.
func newEditor(m *Model, title, text string, header []string, submit func(*Model, string) (string, tea.Cmd), decline func(*Model) tea.Cmd) modal {
	return &component{editor.New(m.viewCtx(), title, text, header,
		func(text string) (string, view.Action) { e, cmd := submit(m, text); return e, view.Action{Cmd: cmd} },
		func() view.Action { return view.Action{Cmd: decline(m)} })}
}

// editJSON opens an editor of JSON text, with nothing to decline.
func (m *Model) editJSON(title, text string, submit func(*Model, string) (string, tea.Cmd)) {
	m.open(editor.NewJSON(m.viewCtx(), title, text,
		func(text string) (string, view.Action) { e, cmd := submit(m, text); return e, view.Action{Cmd: cmd} }))
}

// choose asks the user to pick one of options (starting on sel); f runs
// on the pick.
func (m *Model) choose(title string, options []string, sel int, f func(m *Model, i int) tea.Cmd) {
	m.open(chooser.New(title, options, sel, func(i int) view.Action { return view.Action{Cmd: f(m, i)} }))
}

// newHelp is the key help over what the keys go to now.
func newHelp(m *Model) modal {
	return &component{help.New(m.viewCtx(), help.Session{Protocol: m.info.ProtocolVersion, Era: m.info.Era, EraReason: m.info.EraReason}, m.disabled)}
}

// openWaterfall opens the waterfall (ui/waterfall) over the UI's history.
func (m *Model) openWaterfall() { m.open(waterfall.New(m.viewCtx(), historyOf{m})) }

// historyOf is the part of the session the waterfall reads: the calls
// the UI took in, and the detail it opens.
type historyOf struct{ m *Model }

func (h historyOf) Calls() int                      { return h.m.h.ncalls }
func (h historyOf) Call(i int) *session.Call        { return h.m.h.call(i) }
func (h historyOf) Lookup(key string) *session.Call { return h.m.s.Lookup(key) }
func (h historyOf) Store() *framestore.Store        { return h.m.s.Store() }
func (h historyOf) Transport() transport.Transport  { return h.m.s.Transport() }
func (h historyOf) Open(c *session.Call) view.Action {
	h.m.showCall(c, 0)
	return view.Action{}
}
