package ui

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"mcpscope/internal/termsafe"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/taskfollow"
	"mcpscope/ui/tasks"
	"mcpscope/ui/view"
)

// taskIntents is the part of the session the tasks view (ui/tasks) may
// read and send to.
type taskIntents struct{ m *Model }

func (m *Model) openTasks() { m.open(tasks.New(taskIntents{m})) }

func (ti taskIntents) Tasks() []protocol.Task { return ti.m.s.Tasks() }
func (ti taskIntents) Era() string            { return ti.m.s.Era() }
func (ti taskIntents) CannotSend() string     { return ti.m.cannotSend() }

func (ti taskIntents) Ask(method string, t protocol.Task) view.Action {
	c := ti.m.s.Call(method, map[string]any{"taskId": t.TaskID})
	what := "asked the status of task "
	if method == "tasks/cancel" {
		what = "asked to cancel task "
	}
	return view.Flash(what + termsafe.Line(t.TaskID) + " (call " + c.Key + ")")
}

func (ti taskIntents) Follow(t protocol.Task) view.Action {
	return view.Action{Cmd: ti.m.followTask(t)}
}

func (ti taskIntents) Open(t protocol.Task) view.Action {
	m := ti.m
	calls := m.s.Calls()
	for i := len(calls) - 1; i >= 0; i-- {
		if (calls[i].Method == "tasks/get" || calls[i].Method == "tasks/result") && protocol.TaskIDOf(calls[i].Params()) == t.TaskID {
			m.showCall(calls[i], 1)
			return view.Action{}
		}
	}
	if c := m.s.Lookup(t.CallKey); c != nil && t.CallKey != "" {
		m.showCall(c, 1)
		return view.Action{}
	}
	return view.Flash("task " + termsafe.Line(t.TaskID) + ": no call of this session shows it yet; " +
		m.keyOf("task-get") + " asks its status, " + m.keyOf("task-result") + " fetches its result")
}

func (ti taskIntents) WhyNotGlobal(name string) string {
	return paneBindings.Why(ti.m, ti.m.viewCtx(), name)
}

// Global runs a pane binding over the tasks view; the catalog, drawn under
// the views, closes the view first.
func (ti taskIntents) Global(name string) view.Action {
	a, _ := paneBindings.Do(ti.m, ti.m.viewCtx(), name)
	if name == "catalog" {
		a = view.Close().Then(a)
	}
	return a
}

// Result asks tasks/result, which blocks until the task ends: no idle
// timeout. The 2026 extension has none: tasks/get carries the result once
// completed.
func (ti taskIntents) Result(t protocol.Task) view.Action {
	m := ti.m
	c := m.s.CallWith("tasks/result", map[string]any{"taskId": t.TaskID}, session.CallOptions{Timeout: -1})
	if m.s.Era() == protocol.EraModern {
		c = m.s.Call("tasks/get", map[string]any{"taskId": t.TaskID})
	}
	m.refresh()
	m.req.follow = true
	m.showCall(c, 1)
	return view.Flash("fetching the result of task " + termsafe.Line(t.TaskID) + " (call " + c.Key + ")")
}

// followTask polls a 2026 extension task in the background until it ends
// (the extension has no blocking tasks/result); what it asks for on the way
// is put to the user like any server request.
func (m *Model) followTask(t protocol.Task) tea.Cmd {
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
		_, err := taskfollow.Follow(context.Background(), s, taskID, nil)
		if err != nil {
			return taskFollowedMsg{taskID, "task " + id + ": " + termsafe.Line(err.Error())}
		}
		return taskFollowedMsg{taskID, "task " + id + " completed: " + open + " opens its result"}
	}
}

// noteAskingTasks keeps the set of tasks that ask for input, and says so
// when one starts to: an input_required task said nothing anywhere but in
// the tasks view (issue 40).
func (m *Model) noteAskingTasks() {
	var now map[string]bool
	for _, t := range m.s.Tasks() {
		if t.Status != "input_required" {
			continue
		}
		if now == nil {
			now = map[string]bool{}
		}
		now[t.TaskID] = true
		if m.asking[t.TaskID] {
			continue
		}
		id := termsafe.Line(t.TaskID)
		switch {
		case m.resp != nil || m.following[t.TaskID]:
			m.setFlash("task " + id + " asks for input: its question is put to you")
		default:
			m.setFlash("task " + id + " asks for input: " + m.keyOf("tasks") + " lists it, " + m.keyOf("task-result") + " there follows it")
		}
	}
	m.asking = now
}

// taskWord is the state a call's row shows for the task it made while the
// task asks for input, "" otherwise.
func (m *Model) taskWord(sn *session.CallSnapshot) string {
	if sn.TaskID != "" && m.asking[sn.TaskID] && sn.State == session.StateOK {
		return "input"
	}
	return ""
}
