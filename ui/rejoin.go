package ui

import (
	"context"
	"strings"

	"mcpscope/statestore"
	"mcpscope/ui/rejoin"
)

// detachSelected leaves the selected running call to the server; its
// record stays in the state store for `mcpscope rejoin` or the D view.
func (m *Model) detachSelected() {
	c := m.selectedCall()
	if c == nil {
		return
	}
	h, err := m.s.Detach(c)
	if err != nil {
		m.setFlash("detach: " + err.Error())
		return
	}
	m.refresh()
	m.setFlash("detached call " + c.Key + " as " + h + " — rejoin: " + m.s.RejoinCommandHere(h) + " (" + m.keyOf("rejoinable") + " lists them)")
}

// whyNoDetach is why detach cannot run now ("" when it may: the session
// then says why a particular call cannot be detached).
func (m *Model) whyNoDetach() string {
	if why := m.whyNoChange(); why != "" {
		return why
	}
	if strings.HasPrefix(m.info.Target, "stdio:") {
		return "a stdio server ends with mcpscope, so no call can be left running on it — run the call as a task (" +
			m.keyOf("form-task") + " in the tool's form) to keep working while it runs, or connect over HTTP to detach calls and rejoin them later"
	}
	return ""
}

// reconnectNow fires every pending stream resume at once.
func (m *Model) reconnectNow() {
	switch n := m.s.ReconnectNow(); n {
	case 0:
		m.setFlash("no stream is waiting to reconnect")
	case 1:
		m.setFlash("reconnecting 1 stream now")
	default:
		m.setFlash("reconnecting " + itoa(n) + " streams now")
	}
}

// openRejoin opens the detached-calls view (ui/rejoin).
func (m *Model) openRejoin() { m.open(rejoin.New(rejoinIntents{m})) }

// rejoinIntents is the part of the session the detached-calls view may
// read and send to.
type rejoinIntents struct{ m *Model }

func (ri rejoinIntents) Store() statestore.Store { return ri.m.opts.StateStore }

// CanRejoin: session.CanRejoin decides, for the TUI and the CLI alike.
func (ri rejoinIntents) CanRejoin(d statestore.Detached) (bool, string) {
	return ri.m.s.CanRejoin(ri.m.opts.StateStore, d)
}

// Rejoin takes the call into this session and shows it, followed, in the
// requests pane.
func (ri rejoinIntents) Rejoin(d statestore.Detached) (string, error) {
	m := ri.m
	c, err := m.s.Rejoin(context.Background(), d)
	if err != nil {
		return "", err
	}
	m.refresh()
	m.focus, m.req.follow = paneRequests, true
	m.fixScroll()
	return c.Key, nil
}

// httpTarget is the URL this session was opened on ("" for stdio and
// journals).
func (m *Model) httpTarget() string {
	if t := m.opts.Target; len(t) == 1 && (strings.HasPrefix(t[0], "http://") || strings.HasPrefix(t[0], "https://")) {
		return t[0]
	}
	return ""
}
