package ui

import (
	tea "charm.land/bubbletea/v2"

	"mcpscope/ui/keys"
	"mcpscope/ui/view"
)

// paneBindings are the main panes' keys with what they do (the panes are
// the root's own view): keys, scope, help, footer word, handler and why
// one cannot run now. Global ones are also given to every view, which
// gives them its own meaning (up, help, copy…).
var paneBindings = view.Bindings[*Model]{
	{Binding: keys.Binding{Name: "quit", Scope: keys.Global, Keys: []string{"q", "ctrl+c"}, Help: "quit (q asks first when running calls would be lost, naming them; ctrl+c does not)"},
		Run: do((*Model).requestQuit)},
	{Binding: keys.Binding{Name: "help", Scope: keys.Global, Keys: []string{"?"}, Help: "help"},
		Run: func(*Model, view.Context) view.Action { return view.Action{Help: true} }},
	{Binding: keys.Binding{Name: "focus-next", Scope: keys.Global, Keys: []string{"tab"}, Help: "next pane", Short: "pane"},
		Run: do(func(m *Model) { m.focus = 1 - m.focus })},
	{Binding: keys.Binding{Name: "catalog", Scope: keys.Global, Keys: []string{"C"}, Help: "catalog (tools, resources, prompts)"},
		Run: do((*Model).openCatalog)},
	{Binding: keys.Binding{Name: "send-raw", Scope: keys.Global, Keys: []string{":"}, Help: "send a raw JSON-RPC message", Short: "send"},
		Run: cmd((*Model).openRawSend), Disabled: why((*Model).whyNoChange)},
	{Binding: keys.Binding{Name: "log-level", Scope: keys.Global, Keys: []string{"L"}, Help: "set the server's log level", Short: "log level"},
		Run: do((*Model).openLogLevel), Disabled: why((*Model).whyNoChange)},
	{Binding: keys.Binding{Name: "theme", Scope: keys.Global, Keys: []string{"T"}, Help: "next theme"},
		Run: do((*Model).nextTheme)},
	{Binding: keys.Binding{Name: "tasks", Scope: keys.Global, Keys: []string{"t"}, Help: "tasks the server runs for this session", Short: "tasks"},
		Run: do((*Model).openTasks)},
	{Binding: keys.Binding{Name: "rejoinable", Scope: keys.Global, Keys: []string{"D"}, Help: "detached calls that can be rejoined (this or another mcpscope)", Short: "detached"},
		Run: do((*Model).openRejoin)},
	{Binding: keys.Binding{Name: "listen", Scope: keys.Global, Keys: []string{"l"}, Help: "subscriptions/listen streams (2026-07-28): open, close, acks", Short: "listen"},
		Run: do((*Model).openListen)},
	{Binding: keys.Binding{Name: "roots", Scope: keys.Global, Keys: []string{"R"}, Help: "roots: change what roots/list is answered with; the server is told (notifications/roots/list_changed)", Short: "roots"},
		Run: do((*Model).openRoots), Disabled: why((*Model).whyNoRoots)},
	{Binding: keys.Binding{Name: "waterfall", Scope: keys.Global, Keys: []string{"w"}, Help: "waterfall: every call on one time axis", Short: "waterfall"},
		Run: do((*Model).openWaterfall)},
	{Binding: keys.Binding{Name: "reconnect", Scope: keys.Global, Keys: []string{"ctrl+r"}, Help: "reconnect now: fire pending stream resumes without waiting", Short: "reconnect"},
		Run: do((*Model).reconnectNow)},
	{Binding: keys.Binding{Name: "info", Scope: keys.Global, Keys: []string{"i"}, Help: "session info: server, instructions, capabilities, era, connection, journal", Short: "info"},
		Run: do((*Model).openInfo)},
	{Binding: keys.Binding{Name: "switch-session", Scope: keys.Global, Keys: []string{"o"}, Help: "switch between a recording (or attached proxy) and the live session its replays went to"},
		Run: cmd((*Model).switchSession)},
	{Binding: keys.Binding{Name: "up", Scope: keys.Global, Keys: []string{"up", "k"}, Help: "up"},
		Run: moveBy(func(int) int { return -1 })},
	{Binding: keys.Binding{Name: "down", Scope: keys.Global, Keys: []string{"down", "j"}, Help: "down"},
		Run: moveBy(func(int) int { return 1 })},
	{Binding: keys.Binding{Name: "page-up", Scope: keys.Global, Keys: []string{"pgup", "ctrl+b"}, Help: "page up"},
		Run: moveBy(func(page int) int { return -page })},
	{Binding: keys.Binding{Name: "page-down", Scope: keys.Global, Keys: []string{"pgdown", "ctrl+f"}, Help: "page down"},
		Run: moveBy(func(page int) int { return page })},
	{Binding: keys.Binding{Name: "top", Scope: keys.Global, Keys: []string{"home", "g"}, Help: "first"},
		Run: do(func(m *Model) { ls, _ := m.focused(); ls.follow, ls.sel = false, 0 })},
	{Binding: keys.Binding{Name: "follow", Scope: keys.Global, Keys: []string{"end", "G"}, Help: "last, and follow new rows", Short: "follow"},
		Run: do((*Model).followFocused)},
	{Binding: keys.Binding{Name: "open", Scope: keys.Global, Keys: []string{"enter"}, Help: "open the detail view", Short: "detail"},
		Run: do((*Model).openDetail)},
	{Binding: keys.Binding{Name: "copy", Scope: keys.Global, Keys: []string{"y"}, Help: "copy the selected message or result", Short: "copy"},
		Run: cmd((*Model).copySelected)},

	{Binding: keys.Binding{Name: "cancel-call", Scope: keys.Requests, Keys: []string{"c"}, Help: "cancel the selected call", Short: "cancel"},
		Run: cmd(func(m *Model) tea.Cmd {
			if c := m.selectedCall(); c != nil {
				return m.cancelCall(c)
			}
			return nil
		}),
		Disabled: why(func(m *Model) string {
			if m.recording() {
				return "this is a recording (" + m.journalName() + "): nothing runs to cancel"
			}
			return ""
		})},
	{Binding: keys.Binding{Name: "replay", Scope: keys.Requests, Keys: []string{"r"}, Help: "replay (new id, same params)", Short: "replay"},
		Run: cmd(func(m *Model) tea.Cmd { return m.replaySelected(nil) }), Disabled: why((*Model).whyNoReplay)},
	{Binding: keys.Binding{Name: "edit-replay", Scope: keys.Requests, Keys: []string{"e"}, Help: "edit the params, then replay", Short: "edit+replay"},
		Run: do((*Model).openEditReplay), Disabled: why((*Model).whyNoReplay)},
	{Binding: keys.Binding{Name: "copy-command", Scope: keys.Requests, Keys: []string{"Y"}, Help: "copy an equivalent mcpscope command line"},
		Run: cmd((*Model).copyCommand)},
	{Binding: keys.Binding{Name: "detach-call", Scope: keys.Requests, Keys: []string{"d"}, Help: "detach the selected call: leave it running on the server, rejoin later", Short: "detach"},
		Run: do((*Model).detachSelected), Disabled: why((*Model).whyNoDetach)},

	{Binding: keys.Binding{Name: "kind-next", Scope: keys.Notes, Keys: []string{"K"}, Help: "show one kind of row: all, log, progress, notify… (cycles; a / filter applies within it)", Short: "kind"},
		Run: do((*Model).nextKind)},
	{Binding: keys.Binding{Name: "pause", Scope: keys.Notes, Keys: []string{"space", "p"}, Help: "pause / resume the pane", Short: "pause"},
		Run: do((*Model).togglePause)},

	{Binding: keys.Binding{Name: "filter", Scope: keys.Panes, Keys: []string{"/", "f"}, Help: "filter the pane: a filter expression (~e, ~t echo, ~m tools/* & ~dur >1s…) or bare text", Short: "filter"},
		Run: do((*Model).openFilter)},
	{Binding: keys.Binding{Name: "filter-clear", Scope: keys.Panes, Keys: []string{"esc"}, Help: "clear the pane's filter"},
		Run: do((*Model).clearFilter)},
	{Binding: keys.Binding{Name: "filter-mode", Scope: keys.Panes, Keys: []string{"H"}, Help: "filter mode: hide the other rows, or show them and highlight the matches"},
		Run: do((*Model).toggleFilterMode)},
	{Binding: keys.Binding{Name: "match-next", Scope: keys.Panes, Keys: []string{"n"}, Help: "next match (highlight mode; the next row when hiding)"},
		Run: do(func(m *Model) { m.jumpMatch(1) })},
	{Binding: keys.Binding{Name: "match-prev", Scope: keys.Panes, Keys: []string{"N"}, Help: "previous match (highlight mode; the row before when hiding)"},
		Run: do(func(m *Model) { m.jumpMatch(-1) })},
}

// do, cmd and why fit the root's methods to a binding's handler and
// disabled reason.
func do(f func(m *Model)) func(*Model, view.Context) view.Action {
	return func(m *Model, _ view.Context) view.Action { f(m); return view.Action{} }
}

func cmd(f func(m *Model) tea.Cmd) func(*Model, view.Context) view.Action {
	return func(m *Model, _ view.Context) view.Action { return view.Action{Cmd: f(m)} }
}

func why(f func(m *Model) string) func(*Model, view.Context) string {
	return func(m *Model, _ view.Context) string { return f(m) }
}

// moveBy moves the focused pane's selection by d(page rows).
func moveBy(d func(page int) int) func(*Model, view.Context) view.Action {
	return do(func(m *Model) {
		ls, n := m.focused()
		m.move(ls, n, d(max(1, m.paneHeight(m.focus)-1)))
	})
}

// paneFooters are the names the footer shows over the panes, in order.
var paneFooters = map[keys.Scope][]string{
	keys.Requests: {"focus-next", "open", "cancel-call", "replay", "edit-replay", "copy", "filter", "catalog", "help", "quit", "detach-call", "tasks", "rejoinable"},
	keys.Notes:    {"focus-next", "open", "filter", "kind-next", "pause", "copy", "follow", "help", "quit"},
}

// DefaultKeys is the keymap: the panes' bindings and the views' (viewKeys),
// each view in its own package.
func DefaultKeys() *keys.Map {
	bs := paneBindings.Keys()
	for _, g := range viewKeys {
		bs = append(bs, g.Bindings...)
	}
	km := keys.New(bs)
	for sc, names := range paneFooters {
		km.SetFooter(sc, names...)
	}
	for _, g := range viewKeys {
		km.SetFooter(g.Scope, g.Footer...)
	}
	return km
}
