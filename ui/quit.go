package ui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/ui/quitask"
	"mcpscope/ui/view"
)

// requestQuit quits, unless running calls would be lost: then it asks
// first, naming them (ui/quitask); q again quits. Calls that can be
// rejoined later are detached when the inspector exits (the command line
// prints how to rejoin each), so they are never a reason to ask. Ctrl-C
// quits at once, unasked (handleKey).
func (m *Model) requestQuit() {
	lost, detached := m.leaving()
	if len(lost) == 0 {
		m.quit = true
		return
	}
	m.open(quitask.New(lost, detached, func() view.Action { m.quit = true; return view.Action{} }))
}

// leaving is what quitting now does to the calls still running, in this
// session and the other one (the live session a recording's replays went
// to): lost, ending with mcpscope, or detached, left running on the server
// to rejoin. Calls another client made (a host's, through a proxy) are not
// this process's to lose, nor are the quick ones whose loss costs nothing
// (listings, ping, the handshake).
func (m *Model) leaving() (lost, detached []quitask.Call) {
	for _, mm := range []*Model{m, m.other} {
		if mm == nil || mm.s.Follows() {
			continue
		}
		for _, c := range mm.s.Calls() {
			sn := c.Snapshot()
			if sn.State.Ended() || sn.Adopted || costsNothing(sn.Method) {
				continue
			}
			qc := quitask.Call{Key: sn.Key, Method: sn.Method, Name: sn.Name}
			if mm.opts.DetachOnQuit && mm.s.Rejoinable(c) {
				detached = append(detached, qc)
				continue
			}
			qc.Why = mm.whyLost(sn)
			lost = append(lost, qc)
		}
	}
	return lost, detached
}

// costsNothing: a call of this method is quick and asks nothing of the
// server that is lost with it.
func costsNothing(method string) bool {
	return strings.HasSuffix(method, "/list") || method == "ping" || method == "initialize" ||
		method == session.ProbeMethod || method == "logging/setLevel"
}

// whyLost says why a running call cannot be left to rejoin.
func (m *Model) whyLost(sn session.CallSnapshot) string {
	switch {
	case !m.opts.DetachOnQuit:
		return "a call of the live session the recording's replays went to: it ends with mcpscope"
	case strings.HasPrefix(m.info.Target, "stdio:"):
		return "a stdio server ends with mcpscope, and its calls with it"
	case sn.Method == "subscriptions/listen":
		return "a listen stream ends with mcpscope: its notifications stop"
	case m.info.Era == protocol.EraModern:
		return "a " + protocol.ModernVersion + " stream cannot be resumed: only a task can be rejoined (run it as a task: " +
			m.keyOf("form-task") + " in the tool's form)"
	case m.opts.StateStore == nil:
		return "no state store to keep it in"
	}
	return "its stream carries no SSE event ids (the server keeps no event store, or has sent nothing yet), so it cannot be resumed"
}

// Unfinished names the calls of s still running that quitting loses (what
// the quit panel lists): "#KEY method name", for the command line to say
// once the inspector has exited and the rejoinable ones are detached.
func Unfinished(s *session.Session) []string {
	var out []string
	if s.Follows() {
		return nil
	}
	for _, c := range s.Calls() {
		sn := c.Snapshot()
		if sn.State.Ended() || sn.Adopted || costsNothing(sn.Method) {
			continue
		}
		out = append(out, strings.TrimRight("#"+sn.Key+" "+sn.Method+" "+sn.Name, " "))
	}
	return out
}

// typeahead reads raw terminal bytes as key presses (Options.Typeahead).
func typeahead(b []byte) []tea.KeyPressMsg {
	var out []tea.KeyPressMsg
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == 0x1b:
			if i+1 < len(b) && (b[i+1] == '[' || b[i+1] == 'O') {
				// A sequence (an arrow, a function key): skipped whole.
				for i += 2; i < len(b) && (b[i] < 0x40 || b[i] > 0x7e); i++ {
				}
				continue
			}
			out = append(out, tea.KeyPressMsg{Code: tea.KeyEscape})
		case c == '\r' || c == '\n':
			out = append(out, tea.KeyPressMsg{Code: tea.KeyEnter})
		case c == '\t':
			out = append(out, tea.KeyPressMsg{Code: tea.KeyTab})
		case c == 0x7f || c == 0x08:
			out = append(out, tea.KeyPressMsg{Code: tea.KeyBackspace})
		case c >= 1 && c <= 26:
			out = append(out, tea.KeyPressMsg{Code: rune('a' + c - 1), Mod: tea.ModCtrl})
		case c >= 0x20 && c < 0x7f:
			out = append(out, tea.KeyPressMsg{Code: rune(c), Text: string(rune(c))})
		}
	}
	return out
}
