package ui

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/internal/termsafe"
	"mcpscope/session"
	"mcpscope/ui/keys"
)

// listenMethod is the 2026-07-28 request that opens a listen stream.
const listenMethod = "subscriptions/listen"

// listenView lists the session's subscriptions/listen streams (open ones
// and, greyed, ended ones) with what each asked for, what the server
// acknowledged, how many notifications it carried and where a dropped
// stream was re-listened; it opens and closes streams.
type listenView struct {
	list []*session.Call
	sel  int
}

// openListen opens the listen view in the modern era; elsewhere it says
// why there is nothing to open.
func (m *Model) openListen() {
	if era := m.s.Era(); era != session.EraModern {
		if era == "" {
			era = "undecided"
		}
		m.setFlash("listen streams are 2026-07-28 (modern era); this session's era is " + era +
			": the server sends notifications unasked (list_changed; resources/updated after " + m.keyOf("subscribe") + " in the catalog)")
		return
	}
	v := &listenView{}
	v.refresh(m)
	v.sel = max(0, len(v.list)-1)
	m.push(v)
}

// refresh lists the listen calls again; a new one (opened here or a
// re-listen) is selected.
func (v *listenView) refresh(m *Model) {
	n := len(v.list)
	v.list = v.list[:0]
	for _, c := range m.h.calls {
		if c.Method == listenMethod {
			v.list = append(v.list, c)
		}
	}
	if len(v.list) > n {
		v.sel = len(v.list) - 1
	}
	v.sel = clamp(v.sel, 0, len(v.list)-1)
}

func (v *listenView) scope() keys.Scope { return keys.Listen }

func (v *listenView) selected() *session.Call {
	if len(v.list) == 0 {
		return nil
	}
	return v.list[clamp(v.sel, 0, len(v.list)-1)]
}

func (v *listenView) key(m *Model, name string, _ tea.KeyPressMsg) (bool, tea.Cmd) {
	c := v.selected()
	switch name {
	default:
		listKey(m, name, &v.sel, len(v.list))
	case "listen-back":
		return true, nil
	case "open":
		if c != nil {
			d := &detail{call: c}
			d.refresh(m)
			m.push(d)
		}
	case "listen-new":
		if m.cannotChange("listen") {
			return false, nil
		}
		m.push(newListenForm(m))
	case "listen-close":
		if c == nil {
			return false, nil
		}
		if c.Snapshot().State.Ended() {
			m.setFlash("listen stream " + c.Key + " has already ended")
			return false, nil
		}
		if sn := c.Snapshot(); sn.Adopted || m.recording() {
			m.refuse("close", "listen stream "+termsafe.Line(sn.Key)+" is not this session's to close")
			return false, nil
		}
		if err := m.s.Cancel(c, "closed in the inspector"); err != nil {
			m.setFlash("close: " + err.Error())
			return false, nil
		}
		m.refresh()
		m.setFlash("closed listen stream " + c.Key)
	}
	return false, nil
}

// newListenForm asks which notifications a new listen stream wants.
func newListenForm(m *Model) *form {
	yes := func(name, title, desc string) *field {
		return &field{name: name, title: title, desc: desc, kind: fBool, choice: 1,
			choices: []json.RawMessage{json.RawMessage("false"), json.RawMessage("true")}, labels: []string{"no", "yes"}}
	}
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
		m.setFlash("listening as call " + c.Key + ": " + strings.Join(filterItems(lf), ", "))
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

// filterItems names what a filter asks for, one word or "uri …" per item.
func filterItems(f session.ListenFilter) []string {
	var out []string
	if f.ToolsListChanged {
		out = append(out, "tools")
	}
	if f.PromptsListChanged {
		out = append(out, "prompts")
	}
	if f.ResourcesListChanged {
		out = append(out, "resources")
	}
	for _, u := range f.ResourceSubscriptions {
		out = append(out, "uri "+termsafe.Line(u))
	}
	for _, t := range f.TaskIDs {
		out = append(out, "task "+termsafe.Line(t))
	}
	if len(out) == 0 {
		out = append(out, "nothing")
	}
	return out
}

// listenFilter reads the filter out of a listen request's params or an
// acknowledgement's params (both {"notifications": {...}}).
func listenFilter(raw json.RawMessage) (session.ListenFilter, bool) {
	var p struct {
		Notifications *session.ListenFilter `json:"notifications"`
	}
	if json.Unmarshal(raw, &p) != nil || p.Notifications == nil {
		return session.ListenFilter{}, false
	}
	return *p.Notifications, true
}

// listenInfo is what the view says about one listen call.
type listenInfo struct {
	sn        session.CallSnapshot
	asked     []string
	acked     []string // nil until the acknowledgement arrives
	ackErr    bool     // an acknowledgement arrived but was unreadable
	missing   []string // asked for but not acknowledged
	notes     int      // notifications demultiplexed to it (not the acknowledgement)
	next      string   // the call that re-listened after a drop
	hasAck    bool
	lastNotif string
}

func (m *Model) listenInfo(c *session.Call) listenInfo {
	li := listenInfo{sn: c.Snapshot()}
	asked, _ := listenFilter(c.Params)
	li.asked = filterItems(asked)
	if li.sn.Ack != nil {
		li.hasAck = true
		if ack, ok := listenFilter(li.sn.Ack); ok {
			li.acked = filterItems(ack)
			for _, a := range li.asked {
				if a != "nothing" && !slices.Contains(li.acked, a) {
					li.missing = append(li.missing, a)
				}
			}
		} else {
			li.ackErr = true
		}
	}
	if cn := m.h.notes[c.Key]; cn != nil {
		li.notes, li.lastNotif = cn.n, cn.last
	}
	if n := c.Next(); n != nil {
		li.next = n.Key
	}
	return li
}

func (v *listenView) render(m *Model, w, h int) string {
	open := 0
	for _, c := range v.list {
		if !c.Snapshot().State.Ended() {
			open++
		}
	}
	l := []string{m.th.Title.Render(fmt.Sprintf(" Listen streams %d open, %d in all — %s opens one, %s closes the selected",
		open, len(v.list), m.keyOf("listen-new"), m.keyOf("listen-close")))}
	if len(v.list) == 0 {
		l = append(l, m.th.Faint.Render("   no listen streams yet — "+m.keyOf("listen-new")+" opens one (subscriptions/listen, 2026-07-28)"))
	}
	l = append(l, m.th.Faint.Render(fmt.Sprintf("  %-6s %-10s %-7s %-6s %s", "call", "state", "ack", "notes", "asked for")))
	prev := map[string]string{} // re-listen → the dropped call it replaces
	for _, c := range v.list {
		if n := c.Next(); n != nil {
			prev[n.Key] = c.Key
		}
	}
	room := max(1, h-9)
	top := clamp(v.sel-room+1, 0, max(0, len(v.list)-room))
	for i := top; i < len(v.list) && i < top+room; i++ {
		li := m.listenInfo(v.list[i])
		ack := "waiting"
		switch {
		case li.ackErr:
			ack = "?"
		case li.hasAck && len(li.missing) == 0:
			ack = "all"
		case li.hasAck:
			ack = "partial"
		}
		row := fmt.Sprintf(" %-6s %-10s %-7s %-6d %s", "#"+shorten(li.sn.Key, 5), shorten(string(li.sn.State), 10), ack, li.notes,
			strings.Join(li.asked, ", "))
		if p := prev[li.sn.Key]; p != "" {
			row += " (re-listen of #" + p + ")"
		}
		if li.next != "" {
			row += " → re-listened as #" + li.next
		}
		row = fit(row, w-1)
		switch {
		case i == v.sel:
			l = append(l, m.th.Selected.Render(pad("▸"+ansi.Strip(row), w)))
		case li.sn.State.Ended():
			l = append(l, m.th.Faint.Render(" "+row))
		default:
			l = append(l, " "+row)
		}
	}
	c := v.selected()
	if c == nil {
		return strings.Join(l, "\n")
	}
	li := m.listenInfo(c)
	l = append(l, "", " asked for     "+strings.Join(li.asked, ", "))
	switch {
	case li.ackErr:
		l = append(l, m.th.Warn.Render(" acknowledged  (unreadable: "+termsafe.Line(shorten(string(li.sn.Ack), 60))+")"))
	case !li.hasAck:
		l = append(l, m.th.Faint.Render(" acknowledged  (not yet)"))
	default:
		l = append(l, " acknowledged  "+m.th.OK.Render(strings.Join(li.acked, ", ")))
		if len(li.missing) > 0 {
			l = append(l, " not acked     "+m.th.Warn.Render(strings.Join(li.missing, ", ")+" — the server will not send these"))
		}
	}
	notes := itoa(li.notes) + " notification(s)"
	if li.lastNotif != "" {
		notes += ", last " + termsafe.Line(li.lastNotif)
	}
	l = append(l, " received      "+notes)
	switch {
	case li.next != "":
		l = append(l, m.th.Warn.Render(" dropped       re-listened as #"+li.next))
	case li.sn.State.Ended():
		end := string(li.sn.State)
		if e := li.sn.Err(); e != nil {
			end += ": " + termsafe.Line(e.Error())
		}
		l = append(l, m.th.Faint.Render(" ended         "+end))
	}
	return strings.Join(l, "\n")
}
