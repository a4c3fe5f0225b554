// Package tasks is the tasks view (t): the tasks the server reported in
// this session (from tools/call task results, tasks/get, tasks/list and
// status notifications), refreshed whenever the store changes; from it a
// task's detail is opened (enter), its status asked, its result fetched or
// followed, or it is cancelled.
package tasks

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/internal/termsafe"
	"mcpscope/protocol"
	"mcpscope/themes"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
	"mcpscope/ui/widget"
)

// Scope is where the view's keys are looked up.
const Scope keys.Scope = "tasks"

// Session is what the view reads of the session and the intents it sends.
type Session interface {
	Tasks() []protocol.Task
	Era() string
	// CannotSend is why nothing can be asked of the server ("" when it can).
	CannotSend() string
	// Ask sends method (tasks/get, tasks/cancel) about the task and says so.
	Ask(method string, t protocol.Task) view.Action
	// Result fetches the task's result (tasks/result, which waits for the
	// task) and opens it.
	Result(t protocol.Task) view.Action
	// Follow polls a 2026 extension task until it ends.
	Follow(t protocol.Task) view.Action
	// Open opens the task's detail: the newest call of this session about
	// it (tasks/get, which in the 2026 extension carries the result, or
	// tasks/result), else the call that created it. It sends nothing.
	Open(t protocol.Task) view.Action
	// Global runs a global binding the view gives no meaning of its own
	// as it runs over the panes (C opens the catalog, w the waterfall…).
	Global(name string) view.Action
	// WhyNotGlobal is why that global binding cannot run now ("" when it
	// can), for the footer and ?.
	WhyNotGlobal(name string) string
}

// passed are the global bindings the view gives no meaning of its own:
// here they do what they do over the panes. The catalog is drawn under
// the views, so C closes this one first.
var passed = []string{"catalog", "send-raw", "log-level", "theme", "rejoinable", "listen", "waterfall", "reconnect", "info", "switch-session", "roots"}

// View is the list and its selection.
type View struct {
	s    Session
	list []protocol.Task
	sel  int
}

// New opens the view on the newest task.
func New(s Session) *View {
	v := &View{s: s}
	v.Refresh(view.Context{})
	v.sel = max(0, len(v.list)-1)
	return v
}

// Keys is the view's part of the keymap.
var Keys = view.Group{Scope: Scope, Bindings: bindings.Keys(),
	Footer: []string{"task-open", "task-get", "task-result", "task-cancel", "copy", "tasks-close", "help"}}

var bindings = view.Bindings[*View]{
	{Binding: keys.Binding{Name: "task-open", Scope: Scope, Keys: []string{"enter"}, Help: "open the task's detail: its newest tasks/get or tasks/result, else the call that created it (sends nothing)", Short: "detail"},
		Run: withTask(func(v *View, t protocol.Task) view.Action { return v.s.Open(t) })},
	{Binding: keys.Binding{Name: "task-get", Scope: Scope, Keys: []string{"s"}, Help: "ask the task's status (tasks/get)", Short: "status"},
		Run: withTask(func(v *View, t protocol.Task) view.Action { return v.s.Ask("tasks/get", t) })},
	{Binding: keys.Binding{Name: "task-result", Scope: Scope, Keys: []string{"r"}, Help: "fetch the result (tasks/result, waits for the task; tasks/get in the 2026 extension) and open it", Short: "result"},
		Run: withTask(func(v *View, t protocol.Task) view.Action {
			if v.s.Era() == protocol.EraModern {
				return v.s.Follow(t)
			}
			return v.s.Result(t)
		})},
	{Binding: keys.Binding{Name: "task-cancel", Scope: Scope, Keys: []string{"c"}, Help: "cancel the task (tasks/cancel)", Short: "cancel"},
		Run: withTask(func(v *View, t protocol.Task) view.Action { return v.s.Ask("tasks/cancel", t) })},
	{Binding: keys.Binding{Name: "tasks-close", Scope: Scope, Keys: []string{"esc"}, Help: "back to the session", Short: "back"},
		Run: func(*View, view.Context) view.Action { return view.Close() }},
	{Binding: keys.Binding{Name: "tasks"}, Run: func(*View, view.Context) view.Action { return view.Close() }},
	{Binding: keys.Binding{Name: "copy"},
		Run: withTask(func(_ *View, t protocol.Task) view.Action {
			return view.Action{Copy: &view.Copy{Text: t.TaskID, What: "task id"}}
		})},
}

// withTask runs f on the selected task; nothing when there is none.
func withTask(f func(v *View, t protocol.Task) view.Action) func(*View, view.Context) view.Action {
	return func(v *View, _ view.Context) view.Action {
		if t, ok := v.selected(); ok {
			return f(v, t)
		}
		return view.Action{}
	}
}

// Refresh takes in the tasks the session knows now.
func (v *View) Refresh(view.Context) {
	v.list = v.s.Tasks()
	v.sel = widget.Clamp(v.sel, 0, len(v.list)-1)
}

func (v *View) Scope() keys.Scope { return Scope }

func (v *View) selected() (protocol.Task, bool) {
	if len(v.list) == 0 {
		return protocol.Task{}, false
	}
	return v.list[widget.Clamp(v.sel, 0, len(v.list)-1)], true
}

// Disabled: what asks the server cannot, with nothing connected; a
// global binding passed to the panes, for the panes' reason.
func (v *View) Disabled(_ view.Context, name string) string {
	if slices.Contains(passed, name) {
		return v.s.WhyNotGlobal(name)
	}
	if _, ok := v.selected(); !ok || !v.sends(name) {
		return ""
	}
	return v.s.CannotSend()
}

// sends reports the bindings that ask something of the server.
func (v *View) sends(name string) bool {
	return name == "task-get" || name == "task-cancel" || name == "task-result"
}

func (v *View) Key(c view.Context, name string, _ tea.KeyPressMsg) view.Action {
	if slices.Contains(passed, name) {
		return v.s.Global(name) // a disabled one flashes its own label and reason
	}
	if why := v.Disabled(c, name); why != "" {
		return view.Flash("task: " + why) // nothing can be asked of the server
	}
	if a, ok := bindings.Do(v, c, name); ok {
		return a
	}
	return view.ListKey(name, &v.sel, len(v.list))
}

func (v *View) Render(c view.Context, w, h int) string {
	th := c.Theme
	l := []string{th.Title.Render(fmt.Sprintf(" Tasks %d", len(v.list)))}
	if len(v.list) == 0 {
		l = append(l, th.Faint.Render("   no tasks yet — run a tool as a task from the catalog form ("+c.KeyOf("form-task")+")"))
	}
	idW := min(28, max(10, w/5))
	// Narrow: the creation time gives way, so the poll interval is never cut.
	createdW := 24
	if room := w - (idW + 31); room < createdW+10 {
		createdW = 0
	}
	col := func(s string) string {
		if createdW == 0 {
			return ""
		}
		return fmt.Sprintf(" %-*s", createdW, widget.Shorten(s, createdW))
	}
	l = append(l, th.Faint.Render(fmt.Sprintf("  %-*s %-14s%s %-7s %-5s %s", idW, "task", "status", col("created"), "poll", "call", "message")))
	room := max(1, h-3)
	top := widget.Clamp(v.sel-room+1, 0, max(0, len(v.list)-room))
	for i := top; i < len(v.list) && i < top+room; i++ {
		t := v.list[i]
		poll := ""
		if t.PollInterval > 0 {
			poll = widget.Num(float64(t.PollInterval)/1000) + "s"
		}
		call := "—"
		if t.CallKey != "" {
			call = "#" + t.CallKey
		}
		st := fmt.Sprintf("%-14s", widget.Shorten(termsafe.Line(t.Status), 14))
		row := fmt.Sprintf(" %-*s %s%s %-7s %-5s %s", idW, widget.Shorten(termsafe.Line(t.TaskID), idW), style(th, t).Render(st),
			col(termsafe.Line(t.CreatedAt)), poll, widget.Shorten(call, 5), termsafe.Line(t.StatusMessage)+asks(t))
		if i == v.sel {
			l = append(l, th.Selected.Render(widget.Pad("▸"+ansi.Strip(row), w)))
		} else {
			l = append(l, " "+row)
		}
	}
	return strings.Join(l, "\n")
}

// asks names what an input_required task waits for (tasks extension).
func asks(t protocol.Task) string {
	if len(t.InputRequests) == 0 {
		return ""
	}
	var l []string
	for k, r := range t.InputRequests {
		l = append(l, termsafe.Line(k)+" ("+termsafe.Line(r.Method)+")")
	}
	sort.Strings(l)
	return " — asks " + strings.Join(l, ", ")
}

func style(th themes.Theme, t protocol.Task) lipgloss.Style {
	switch t.Status {
	case "completed":
		return th.OK
	case "failed":
		return th.Error
	case "cancelled":
		return th.Cancelled
	case "input_required":
		return th.Warn
	}
	return th.Info
}
