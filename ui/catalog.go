package ui

import (
	"encoding/json"
	"slices"

	tea "charm.land/bubbletea/v2"

	"mcpscope/internal/termsafe"
	"mcpscope/session"
	catview "mcpscope/ui/catalog"
	"mcpscope/ui/view"
)

// catalog is the catalog view (ui/catalog), which the root keeps while it
// is closed: it follows list changes, and the detail reads a tool's
// outputSchema from it.
type catalog struct{ *catview.View }

func newCatalog(m *Model) *catalog { return &catalog{catview.New(catalogHost{m})} }

func (c *catalog) outputSchema(tool string) json.RawMessage { return c.OutputSchema(tool) }

// openCatalog shows the catalog, fetching what it has not yet.
func (m *Model) openCatalog() {
	m.inCat = true
	m.catalog.Fetch(false)
}

// catalogKey gives a key to the open catalog: its own bindings, else the
// panes' global ones it passes (catview.Passed).
func (m *Model) catalogKey(name string, msg tea.KeyPressMsg) tea.Cmd {
	if !m.catalog.Takes(name) && slices.Contains(catview.Passed, name) {
		a, _ := paneBindings.Do(m, m.viewCtx(), name)
		return m.apply(a, nil)
	}
	a := m.catalog.Key(m.viewCtx(), name, msg)
	if a.Close {
		m.inCat = false
	}
	return m.apply(a, nil)
}

// catalogHost is what the catalog may ask of the session and the root.
type catalogHost struct{ m *Model }

func (h catalogHost) Info() session.Info                         { return h.m.info }
func (h catalogHost) Connected() bool                            { return h.m.s.Transport() != nil }
func (h catalogHost) List(method, field string) *session.Listing { return h.m.s.List(method, field) }
func (h catalogHost) WhyNoChange() string                        { return h.m.whyNoChange() }
func (h catalogHost) Subscribe(uri string)                       { h.m.s.Subscribe(uri) }
func (h catalogHost) Unsubscribe(uri string)                     { h.m.s.Unsubscribe(uri) }

// Find opens the input line over the catalog, empty; esc brings last back.
func (h catalogHost) Find(last string) view.Action {
	h.m.find.prompt = newFilterPrompt(h.m, targetCatalog, "")
	h.m.find.prompt.EscRestores(last)
	return view.Action{}
}

// Send makes the call in the session shown; when that session cannot
// send, a recording refuses (saying why) and an attached HTTP proxy's
// calls go to a live session of mcpscope's own. The catalog closes and
// the call's detail opens, where its answer shows when it comes.
func (h catalogHost) Send(mk func(s *session.Session) *session.Call) view.Action {
	m := h.m
	sent := func(to *Model) tea.Cmd {
		call := mk(to.s)
		to.inCat, to.focus = false, paneRequests
		m.catalog.SetFind("")
		to.setFlash("sent " + call.Method + " " + termsafe.Line(call.Name) + " (call " + call.Key + ")")
		to.landOn(call)
		return nil
	}
	why := m.cannotSend()
	switch {
	case why == "":
		return view.Action{Cmd: sent(m)}
	case m.recording():
		m.refuse("call", why+" — "+m.keyOf("replay")+" on a recorded call replays it against a live server")
		return view.Action{}
	}
	m.inCat = false // the call lands in the live session's panes
	return view.Action{Cmd: m.goLive("call", why, sent)}
}
