package ui

import (
	"context"
	"fmt"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/internal/termsafe"
	"mcpscope/session"
	"mcpscope/ui/keys"
)

// tasksView lists the tasks the server reported in this session (from
// tools/call task results, tasks/get, tasks/list and status
// notifications), refreshed whenever the store changes.
type tasksView struct {
	list []session.Task
	sel  int
}

func (m *Model) openTasks() {
	v := &tasksView{}
	v.refresh(m)
	v.sel = max(0, len(v.list)-1)
	m.push(v)
}

func (v *tasksView) refresh(m *Model) {
	v.list = m.s.Tasks()
	v.sel = clamp(v.sel, 0, len(v.list)-1)
}

func (v *tasksView) scope() keys.Scope { return keys.Tasks }

func (v *tasksView) selected() (session.Task, bool) {
	if len(v.list) == 0 {
		return session.Task{}, false
	}
	return v.list[clamp(v.sel, 0, len(v.list)-1)], true
}

func (v *tasksView) key(m *Model, name string, _ tea.KeyPressMsg) (bool, tea.Cmd) {
	t, ok := v.selected()
	sends := name == "task-get" || name == "task-cancel" || name == "task-result" || name == "open" && m.s.Era() != session.EraModern
	if why := m.cannotSend(); ok && sends && why != "" {
		m.refuse("task", why) // nothing can be asked of the server
		return false, nil
	}
	switch name {
	default:
		listKey(m, name, &v.sel, len(v.list))
	case "tasks-close":
		return true, nil
	case "copy":
		if ok {
			return false, m.copyText(t.TaskID, "task id")
		}
	case "task-get":
		if ok {
			c := m.s.Call("tasks/get", map[string]any{"taskId": t.TaskID})
			m.setFlash("asked the status of task " + termsafe.Line(t.TaskID) + " (call " + c.Key + ")")
		}
	case "task-cancel":
		if ok {
			c := m.s.Call("tasks/cancel", map[string]any{"taskId": t.TaskID})
			m.setFlash("asked to cancel task " + termsafe.Line(t.TaskID) + " (call " + c.Key + ")")
		}
	case "task-result", "open":
		if !ok {
			return false, nil
		}
		if m.s.Era() == session.EraModern {
			if name == "task-result" {
				return false, m.followTask(t)
			}
			m.openLatestTaskGet(t)
			return false, nil
		}
		// tasks/result blocks until the task ends: no idle timeout. The 2026
		// extension has none: tasks/get carries the result once completed.
		c := m.s.CallWith("tasks/result", map[string]any{"taskId": t.TaskID}, session.CallOptions{Timeout: -1})
		if m.s.Era() == session.EraModern {
			c = m.s.Call("tasks/get", map[string]any{"taskId": t.TaskID})
		}
		m.refresh()
		m.req.follow = true
		d := &detail{call: c, tab: 1}
		d.refresh(m)
		m.push(d)
		m.setFlash("fetching the result of task " + termsafe.Line(t.TaskID) + " (call " + c.Key + ")")
	}
	return false, nil
}

func (v *tasksView) render(m *Model, w, h int) string {
	l := []string{m.th.Title.Render(fmt.Sprintf(" Tasks %d", len(v.list)))}
	if len(v.list) == 0 {
		l = append(l, m.th.Faint.Render("   no tasks yet — run a tool as a task from the catalog form ("+m.keyOf("form-task")+")"))
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
		return fmt.Sprintf(" %-*s", createdW, shorten(s, createdW))
	}
	l = append(l, m.th.Faint.Render(fmt.Sprintf("  %-*s %-14s%s %-7s %-5s %s", idW, "task", "status", col("created"), "poll", "call", "message")))
	room := max(1, h-3)
	top := clamp(v.sel-room+1, 0, max(0, len(v.list)-room))
	for i := top; i < len(v.list) && i < top+room; i++ {
		t := v.list[i]
		poll := ""
		if t.PollInterval > 0 {
			poll = fmtNum(float64(t.PollInterval)/1000) + "s"
		}
		call := "—"
		if t.CallKey != "" {
			call = "#" + t.CallKey
		}
		st := fmt.Sprintf("%-14s", shorten(termsafe.Line(t.Status), 14))
		row := fmt.Sprintf(" %-*s %s%s %-7s %-5s %s", idW, shorten(termsafe.Line(t.TaskID), idW), m.taskStyle(t).Render(st),
			col(termsafe.Line(t.CreatedAt)), poll, shorten(call, 5), termsafe.Line(t.StatusMessage)+asks(t))
		if i == v.sel {
			l = append(l, m.th.Selected.Render(pad("▸"+ansi.Strip(row), w)))
		} else {
			l = append(l, " "+row)
		}
	}
	return strings.Join(l, "\n")
}

// followTask polls a 2026 extension task in the background until it ends
// (the extension has no blocking tasks/result); what it asks for on the way
// is put to the user like any server request.
func (m *Model) followTask(t session.Task) tea.Cmd {
	id := termsafe.Line(t.TaskID)
	if m.following[t.TaskID] {
		m.setFlash("already following task " + id)
		return nil
	}
	if m.following == nil {
		m.following = map[string]bool{}
	}
	m.following[t.TaskID] = true
	m.setFlash("following task " + id + ": tasks/get at its poll interval until it ends")
	return awaitTask(m.s, t.TaskID, m.keyOf("open"))
}

// awaitTask waits, in the background, for the task to end.
func awaitTask(s *session.Session, taskID, open string) tea.Cmd {
	id := termsafe.Line(taskID)
	return func() tea.Msg {
		_, err := s.FollowTask(context.Background(), taskID, nil)
		if err != nil {
			return taskFollowedMsg{taskID, "task " + id + ": " + termsafe.Line(err.Error())}
		}
		return taskFollowedMsg{taskID, "task " + id + " completed: " + open + " opens its result"}
	}
}

// openLatestTaskGet opens the newest tasks/get of a task (in the 2026
// extension it carries the result), asking anew when there is none.
func (m *Model) openLatestTaskGet(t session.Task) {
	var c *session.Call
	calls := m.s.Calls()
	for i := len(calls) - 1; i >= 0 && c == nil; i-- {
		if calls[i].Method == "tasks/get" && session.TaskIDOf(calls[i].Params) == t.TaskID {
			c = calls[i]
		}
	}
	if c == nil {
		c = m.s.Call("tasks/get", map[string]any{"taskId": t.TaskID})
	}
	d := &detail{call: c, tab: 1}
	d.refresh(m)
	m.push(d)
}

// asks names what an input_required task waits for (tasks extension).
func asks(t session.Task) string {
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

func (m *Model) taskStyle(t session.Task) lipgloss.Style {
	switch t.Status {
	case "completed":
		return m.th.OK
	case "failed":
		return m.th.Error
	case "cancelled":
		return m.th.Cancelled
	case "input_required":
		return m.th.Warn
	}
	return m.th.Info
}

// listKey handles the keys every list overlay (tasks, detached calls,
// listen streams) shares: quit, help and moving the selection over n rows.
func listKey(m *Model, name string, sel *int, n int) {
	switch name {
	case "quit":
		m.quit = true
	case "help":
		m.push(newHelp(m))
	case "up":
		*sel = clamp(*sel-1, 0, n-1)
	case "down":
		*sel = clamp(*sel+1, 0, n-1)
	case "top":
		*sel = 0
	case "follow":
		*sel = max(0, n-1)
	}
}
