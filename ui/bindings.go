package ui

import "mcpscope/ui/keys"

// DefaultKeys is the keymap: the only place keys are spelled.
func DefaultKeys() *keys.Map {
	g, r, n, d, c := keys.Global, keys.Requests, keys.Notes, keys.Detail, keys.Catalog
	f, e, ch, s := keys.Form, keys.Editor, keys.Chooser, keys.Search
	tk, rj, ls := keys.Tasks, keys.Rejoin, keys.Listen
	wf := scopeWaterfall
	p, fl, in := keys.Panes, keys.Filter, keys.Info
	return keys.New([]keys.Binding{
		{Name: "quit", Scope: g, Keys: []string{"q", "ctrl+c"}, Help: "quit"},
		{Name: "help", Scope: g, Keys: []string{"?"}, Help: "help"},
		{Name: "focus-next", Scope: g, Keys: []string{"tab"}, Help: "next pane"},
		{Name: "catalog", Scope: g, Keys: []string{"C"}, Help: "catalog (tools, resources, prompts)"},
		{Name: "send-raw", Scope: g, Keys: []string{":"}, Help: "send a raw JSON-RPC message"},
		{Name: "log-level", Scope: g, Keys: []string{"L"}, Help: "set the server's log level"},
		{Name: "theme", Scope: g, Keys: []string{"T"}, Help: "next theme"},
		{Name: "tasks", Scope: g, Keys: []string{"t"}, Help: "tasks the server runs for this session"},
		{Name: "rejoinable", Scope: g, Keys: []string{"D"}, Help: "detached calls that can be rejoined (this or another mcpscope)"},
		{Name: "listen", Scope: g, Keys: []string{"l"}, Help: "subscriptions/listen streams (2026-07-28): open, close, acks"},
		{Name: "waterfall", Scope: g, Keys: []string{"w"}, Help: "waterfall: every call on one time axis"},
		{Name: "reconnect", Scope: g, Keys: []string{"ctrl+r"}, Help: "reconnect now: fire pending stream resumes without waiting"},
		{Name: "info", Scope: g, Keys: []string{"i"}, Help: "session info: server, instructions, capabilities, era, connection, journal"},
		{Name: "switch-session", Scope: g, Keys: []string{"o"}, Help: "switch between a recording (or attached proxy) and the live session its replays went to"},
		{Name: "up", Scope: g, Keys: []string{"up", "k"}, Help: "up"},
		{Name: "down", Scope: g, Keys: []string{"down", "j"}, Help: "down"},
		{Name: "page-up", Scope: g, Keys: []string{"pgup", "ctrl+b"}, Help: "page up"},
		{Name: "page-down", Scope: g, Keys: []string{"pgdown", "ctrl+f"}, Help: "page down"},
		{Name: "top", Scope: g, Keys: []string{"home", "g"}, Help: "first"},
		{Name: "follow", Scope: g, Keys: []string{"end", "G"}, Help: "last, and follow new rows"},
		{Name: "open", Scope: g, Keys: []string{"enter"}, Help: "open the detail view"},
		{Name: "copy", Scope: g, Keys: []string{"y"}, Help: "copy the selected message or result"},

		{Name: "cancel-call", Scope: r, Keys: []string{"c"}, Help: "cancel the selected call"},
		{Name: "replay", Scope: r, Keys: []string{"r"}, Help: "replay (new id, same params)"},
		{Name: "edit-replay", Scope: r, Keys: []string{"e"}, Help: "edit the params, then replay"},
		{Name: "copy-command", Scope: r, Keys: []string{"Y"}, Help: "copy an equivalent mcpscope command line"},
		{Name: "detach-call", Scope: r, Keys: []string{"d"}, Help: "detach the selected call: leave it running on the server, rejoin later"},

		{Name: "kind-next", Scope: n, Keys: []string{"K"}, Help: "show one kind of row: all, log, progress, notify… (cycles; a / filter applies within it)"},
		{Name: "pause", Scope: n, Keys: []string{"space", "p"}, Help: "pause / resume the pane"},

		{Name: "filter", Scope: p, Keys: []string{"/", "f"}, Help: "filter the pane: a filter expression (~e, ~t echo, ~m tools/* & ~dur >1s…) or bare text"},
		{Name: "filter-clear", Scope: p, Keys: []string{"esc"}, Help: "clear the pane's filter"},
		{Name: "filter-mode", Scope: p, Keys: []string{"H"}, Help: "filter mode: hide the other rows, or show them and highlight the matches"},
		{Name: "match-next", Scope: p, Keys: []string{"n"}, Help: "next match (highlight mode; the next row when hiding)"},
		{Name: "match-prev", Scope: p, Keys: []string{"N"}, Help: "previous match (highlight mode; the row before when hiding)"},

		{Name: "detail-close", Scope: d, Keys: []string{"esc", "q"}, Help: "close"},
		{Name: "tab-next", Scope: d, Keys: []string{"tab"}, Help: "next tab"},
		{Name: "tab-prev", Scope: d, Keys: []string{"shift+tab"}, Help: "previous tab"},
		{Name: "search", Scope: d, Keys: []string{"/"}, Help: "search"},
		{Name: "search-next", Scope: d, Keys: []string{"n"}, Help: "next match"},
		{Name: "search-prev", Scope: d, Keys: []string{"N"}, Help: "previous match"},
		{Name: "wrap", Scope: d, Keys: []string{"w"}, Help: "soft-wrap long lines on / off"},
		{Name: "scroll-left", Scope: d, Keys: []string{"left", "h"}, Help: "scroll left (wrap off)"},
		{Name: "scroll-right", Scope: d, Keys: []string{"right", "l"}, Help: "scroll right (wrap off)"},
		{Name: "fold", Scope: d, Keys: []string{"space"}, Help: "fold / unfold the JSON object or array at the cursor (▌)"},
		{Name: "fold-all", Scope: d, Keys: []string{"-"}, Help: "fold every object and array below the top level"},
		{Name: "unfold-all", Scope: d, Keys: []string{"+", "="}, Help: "unfold everything"},
		{Name: "next-item", Scope: d, Keys: []string{"]"}, Help: "show the next row of the list (same tab)"},
		{Name: "prev-item", Scope: d, Keys: []string{"["}, Help: "show the previous row of the list (same tab)"},
		{Name: "result-view", Scope: d, Keys: []string{"v"}, Help: "response tab: the result rendered (text, Markdown, media, links) or its raw JSON"},
		{Name: "save-media", Scope: d, Keys: []string{"s"}, Help: "save the image, audio or blob at the cursor of a rendered response to a file"},

		{Name: "catalog-close", Scope: c, Keys: []string{"esc"}, Help: "clear the find, else back to the session"},
		{Name: "catalog-find", Scope: c, Keys: []string{"/", "f"}, Help: "find (fuzzy: names and titles, then descriptions), as you type"},
		{Name: "section-next", Scope: c, Keys: []string{"right", "l"}, Help: "next section"},
		{Name: "section-prev", Scope: c, Keys: []string{"left", "h"}, Help: "previous section"},
		{Name: "subscribe", Scope: c, Keys: []string{"s"}, Help: "subscribe / unsubscribe the resource"},
		{Name: "refresh", Scope: c, Keys: []string{"R"}, Help: "refresh the lists"},

		{Name: "form-next", Scope: f, Keys: []string{"tab", "down"}, Help: "next field"},
		{Name: "form-prev", Scope: f, Keys: []string{"shift+tab", "up"}, Help: "previous field"},
		{Name: "form-submit", Scope: f, Keys: []string{"enter"}, Help: "submit (accept); a new line in raw JSON"},
		{Name: "form-send", Scope: f, Keys: []string{"ctrl+s"}, Help: "submit, from raw JSON too"},
		{Name: "form-decline", Scope: f, Keys: []string{"ctrl+d"}, Help: "decline"},
		{Name: "form-cancel", Scope: f, Keys: []string{"esc"}, Help: "cancel"},
		{Name: "form-raw", Scope: f, Keys: []string{"ctrl+r"}, Help: "edit as raw JSON, or back to the fields"},
		{Name: "form-editor", Scope: f, Keys: []string{"ctrl+e"}, Help: "edit the JSON in $EDITOR"},
		{Name: "form-choice-next", Scope: f, Keys: []string{"right"}, Help: "next choice (a text field's cursor moves; alt+→ a word)"},
		{Name: "form-choice-prev", Scope: f, Keys: []string{"left"}, Help: "previous choice (a text field's cursor moves; alt+← a word)"},
		{Name: "form-clear", Scope: f, Keys: []string{"ctrl+u"}, Help: "clear the field (ctrl+w, alt+backspace delete a word; home, end)"},
		{Name: "form-task", Scope: f, Keys: []string{"ctrl+t"}, Help: "run the tool as a task (when it supports tasks)"},
		{Name: "form-timeout", Scope: f, Keys: []string{"ctrl+o"}, Help: "next idle timeout for the call (default, 10s … none)"},

		{Name: "editor-submit", Scope: e, Keys: []string{"ctrl+s"}, Help: "send"},
		{Name: "editor-decline", Scope: e, Keys: []string{"ctrl+d"}, Help: "decline"},
		{Name: "editor-cancel", Scope: e, Keys: []string{"esc"}, Help: "cancel"},
		{Name: "editor-external", Scope: e, Keys: []string{"ctrl+e"}, Help: "edit in $EDITOR ($VISUAL, else vi)"},
		{Name: "editor-clear", Scope: e, Keys: []string{"ctrl+u"}, Help: "clear (arrows, alt+←/→, ctrl+w, home/end edit in place)"},

		{Name: "choose", Scope: ch, Keys: []string{"enter"}, Help: "choose"},
		{Name: "choose-cancel", Scope: ch, Keys: []string{"esc", "q"}, Help: "cancel"},
		{Name: "choose-up", Scope: ch, Keys: []string{"up", "k"}, Help: "up"},
		{Name: "choose-down", Scope: ch, Keys: []string{"down", "j"}, Help: "down"},

		{Name: "task-get", Scope: tk, Keys: []string{"s"}, Help: "ask the task's status (tasks/get)"},
		{Name: "task-result", Scope: tk, Keys: []string{"r"}, Help: "fetch the result (tasks/result, waits for the task; tasks/get in the 2026 extension) and open it"},
		{Name: "task-cancel", Scope: tk, Keys: []string{"c"}, Help: "cancel the task (tasks/cancel)"},
		{Name: "tasks-close", Scope: tk, Keys: []string{"esc"}, Help: "back to the session"},

		{Name: "rejoin-here", Scope: rj, Keys: []string{"r"}, Help: "rejoin the call in this session (same server and MCP session only)"},
		{Name: "rejoin-forget", Scope: rj, Keys: []string{"x"}, Help: "forget the record (the server keeps running the call)"},
		{Name: "rejoin-refresh", Scope: rj, Keys: []string{"R"}, Help: "list the records again"},
		{Name: "rejoin-close", Scope: rj, Keys: []string{"esc"}, Help: "back to the session"},

		{Name: "listen-new", Scope: ls, Keys: []string{"n"}, Help: "open a listen stream: list changes, resource URIs, task ids"},
		{Name: "listen-close", Scope: ls, Keys: []string{"c"}, Help: "close the selected listen stream"},
		{Name: "listen-back", Scope: ls, Keys: []string{"esc"}, Help: "back to the session"},

		{Name: "waterfall-zoom-in", Scope: wf, Keys: []string{"+", "="}, Help: "zoom in (less time per column)"},
		{Name: "waterfall-zoom-out", Scope: wf, Keys: []string{"-"}, Help: "zoom out (more time per column)"},
		{Name: "waterfall-fit", Scope: wf, Keys: []string{"0"}, Help: "fit: the whole session in view, following it"},
		{Name: "waterfall-earlier", Scope: wf, Keys: []string{"left", "h"}, Help: "earlier (a quarter of the view)"},
		{Name: "waterfall-later", Scope: wf, Keys: []string{"right", "l"}, Help: "later (a quarter of the view); at the end, follow the clock"},
		{Name: "waterfall-page-earlier", Scope: wf, Keys: []string{"H", "shift+left"}, Help: "earlier by a whole view"},
		{Name: "waterfall-page-later", Scope: wf, Keys: []string{"L", "shift+right"}, Help: "later by a whole view"},
		{Name: "waterfall-close", Scope: wf, Keys: []string{"esc", "w"}, Help: "back to the session"},
		{Name: "filter-apply", Scope: fl, Keys: []string{"enter"}, Help: "keep the filter and go back to the list (it applies as you type, once valid)"},
		{Name: "filter-cancel", Scope: fl, Keys: []string{"esc"}, Help: "cancel: the filter as it was before"},
		{Name: "filter-up", Scope: fl, Keys: []string{"up"}, Help: "select the row above"},
		{Name: "filter-down", Scope: fl, Keys: []string{"down"}, Help: "select the row below"},

		{Name: "info-close", Scope: in, Keys: []string{"esc", "i"}, Help: "close"},

		{Name: "search-run", Scope: s, Keys: []string{"enter"}, Help: "search"},
		{Name: "search-cancel", Scope: s, Keys: []string{"esc"}, Help: "stop searching"},
		{Name: "search-backspace", Scope: s, Keys: []string{"backspace"}, Help: "delete a character"},
	})
}
