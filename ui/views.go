package ui

import (
	tea "charm.land/bubbletea/v2"

	"mcpscope/session"
	"mcpscope/transport"
	"mcpscope/ui/chooser"
	"mcpscope/ui/help"
	"mcpscope/ui/info"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
)

// viewKeys are the keymap groups of the views in their own packages (the
// view contract, ui/view): a new view registers here, one line, in the
// order `?` and the README list it.
var viewKeys = []view.Group{
	help.Keys,
	chooser.Keys,
	info.Keys,
}

// component puts a view of the contract on the root's stack of modals.
type component struct{ v view.View }

func (c *component) scope() keys.Scope { return c.v.Scope() }

func (c *component) key(m *Model, name string, msg tea.KeyPressMsg) (bool, tea.Cmd) {
	return false, m.apply(c.v.Key(m.viewCtx(), name, msg), c)
}

func (c *component) render(m *Model, w, h int) string { return c.v.Render(m.viewCtx(), w, h) }

// open puts v on top.
func (m *Model) open(v view.View) { m.push(&component{v}) }

// viewCtx is what every view may read.
func (m *Model) viewCtx() view.Context {
	th := m.th
	return view.Context{Theme: th, Keys: m.km, Width: m.w, Height: m.hgt, Now: m.opts.Now, Location: m.opts.Location,
		JSONRows: func(raw []byte, w int, indent string) []string { return jsonRows(th, raw, w, indent) }}
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
		m.quit = true
	}
	return tea.Batch(cmds...)
}

// sessionFacts is the read-only side of the session the info view is given.
type sessionFacts struct{ m *Model }

func (f sessionFacts) Info() session.Info             { return f.m.info }
func (f sessionFacts) Connection() (word, why string) { return f.m.connState() }
func (f sessionFacts) Transport() transport.Transport { return f.m.s.Transport() }
func (f sessionFacts) Journaled() bool                { return f.m.s.Store().Journaled() }
func (m *Model) openInfo()                            { m.open(info.New(sessionFacts{m})) }
