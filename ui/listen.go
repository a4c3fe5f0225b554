package ui

import (
	"encoding/json"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"mcpscope/internal/termsafe"
	"mcpscope/protocol"
	"mcpscope/session"
	formview "mcpscope/ui/form"
	"mcpscope/ui/listen"
	"mcpscope/ui/view"
)

// openListen opens the listen view (ui/listen) in the modern era; elsewhere
// it says why there is nothing to open.
func (m *Model) openListen() {
	if era := m.s.Era(); era != protocol.EraModern {
		if era == "" {
			era = "undecided"
		}
		m.setFlash("listen streams are 2026-07-28 (modern era); this session's era is " + era +
			": the server sends notifications unasked (list_changed; resources/updated after " + m.keyOf("subscribe") + " in the catalog)")
		return
	}
	m.open(listen.New(listenIntents{m}))
}

// listenIntents is the part of the session the listen view may read and
// send to.
type listenIntents struct{ m *Model }

func (li listenIntents) Streams() []*session.Call {
	return slices.Clone(li.m.h.streams)
}

func (li listenIntents) Notes(key string) (int, string) {
	if cn := li.m.h.notes[key]; cn != nil {
		return cn.n, cn.last
	}
	return 0, ""
}

func (li listenIntents) WhyNoNew() string { return li.m.whyNoChange() }

func (li listenIntents) New() view.Action {
	li.m.push(newListenForm(li.m))
	return view.Action{}
}

func (li listenIntents) Open(c *session.Call) view.Action {
	li.m.showCall(c, 0)
	return view.Action{}
}

func (li listenIntents) Close(c *session.Call) view.Action {
	m := li.m
	sn := c.Snapshot()
	if sn.State.Ended() {
		return view.Flash("listen stream " + c.Key + " has already ended")
	}
	if sn.Adopted || m.recording() {
		return view.Flash("close: listen stream " + termsafe.Line(sn.Key) + " is not this session's to close")
	}
	if err := m.s.Cancel(c, "closed in the inspector"); err != nil {
		return view.Flash("close: " + err.Error())
	}
	m.refresh()
	return view.Flash("closed listen stream " + c.Key)
}

// newListenForm asks which notifications a new listen stream wants.
func newListenForm(m *Model) *form {
	yes := func(name, title, desc string) *field { return formview.YesNo(name, title, true).WithDesc(desc) }
	taskDesc := "comma-separated task ids (the tasks extension)"
	if ts := m.s.Tasks(); len(ts) > 0 {
		var ids []string
		for _, t := range ts {
			ids = append(ids, termsafe.Line(t.TaskID))
		}
		taskDesc += "; this session knows " + shorten(strings.Join(ids, ", "), 80)
	}
	f := &form{title: "Open a listen stream (subscriptions/listen) — space toggles, enter opens, esc cancels",
		fields: []*field{
			yes("tools", "tools list", "notifications/tools/list_changed"),
			yes("prompts", "prompts list", "notifications/prompts/list_changed"),
			yes("resources", "resources list", "notifications/resources/list_changed"),
			withDesc(newTextField("uris", "resource URIs", "", false), "comma-separated URIs for notifications/resources/updated"),
			withDesc(newTextField("tasks", "task ids", "", false), taskDesc),
		}}
	f.onSubmit = func(m *Model, args json.RawMessage) tea.Cmd {
		var a struct {
			Tools, Prompts, Resources bool
			URIs                      string `json:"uris"`
			Tasks                     string `json:"tasks"`
		}
		_ = json.Unmarshal(args, &a)
		lf := session.ListenFilter{ToolsListChanged: a.Tools, PromptsListChanged: a.Prompts, ResourcesListChanged: a.Resources,
			ResourceSubscriptions: splitList(a.URIs), TaskIDs: splitList(a.Tasks)}
		c := m.s.Listen(lf)
		m.setFlash("listening as call " + c.Key + ": " + strings.Join(listen.Items(lf), ", "))
		return nil
	}
	return f
}

// splitList is a comma-separated field's non-empty, trimmed items.
func splitList(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
