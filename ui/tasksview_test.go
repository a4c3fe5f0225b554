package ui

import (
	"strings"
	"testing"
	"time"

	"mcpscope/session"
	"mcpscope/transport"
	"mcpscope/ui/detail"
	"mcpscope/ui/info"
	"mcpscope/ui/tasks"
)

// taskModel is a live session whose one tools/call became task-7.
func taskModel(t *testing.T) (*Model, *session.Session, *fakeTransport, *session.Call) {
	t.Helper()
	f := newFake()
	s := session.New(f, session.Options{Timeout: -1, MaxTimeout: -1, Now: func() time.Time { return at(1) }})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	m := newTestModel(t, s, 100, 30)
	c := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{}, "task": map[string]any{}})
	f.sentWith(t, `"name":"slow"`)
	f.sink(msg(1.5, transport.In, `{"jsonrpc":"2.0","id":`+c.Key+`,"result":{"task":{"taskId":"task-7","status":"working","createdAt":"2026-03-01T12:00:01Z","pollInterval":100}}}`))
	refresh(m)
	return m, s, f, c
}

// Enter in the tasks view opens the task's detail (the call that created
// it) and sends nothing; r still fetches the result as a new call (issue
// 40, item 7).
func TestTasksEnterOpensTheTask(t *testing.T) {
	m, s, _, c := taskModel(t)
	press(m, "tasks")
	if _, ok := topView[*tasks.View](m); !ok {
		t.Fatalf("t did not open the tasks view:\n%s", screen(m))
	}
	n := len(s.Calls())
	press(m, "task-open")
	if got := len(s.Calls()); got != n {
		t.Fatalf("enter sent %d new calls, want none", got-n)
	}
	if _, ok := topView[*detail.View](m); !ok {
		t.Fatalf("enter did not open a detail:\n%s", screen(m))
	}
	if sc := screen(m); !strings.Contains(sc, "call "+c.Key+" · tools/call") || !strings.Contains(sc, "tools/call") || !strings.Contains(sc, "task task-7") {
		t.Fatalf("the detail is not the call that created task-7:\n%s", sc)
	}
	press(m, "detail-close")
	if _, ok := topView[*tasks.View](m); !ok {
		t.Fatalf("esc from the detail did not go back to the tasks view:\n%s", screen(m))
	}
	press(m, "task-result")
	var fetched bool
	for _, k := range s.Calls()[n:] {
		fetched = fetched || k.Method == "tasks/result"
	}
	if !fetched {
		t.Fatalf("r did not fetch the result")
	}
}

// The global keys work over the tasks view as over the panes: C opens the
// catalog (closing the view, which would hide it), i the info over it.
func TestTasksViewPassesGlobalKeys(t *testing.T) {
	m, _, _, _ := taskModel(t)
	press(m, "tasks", "info")
	if _, ok := topView[*info.View](m); !ok {
		t.Fatalf("i over the tasks view did not open the info:\n%s", screen(m))
	}
	press(m, "info-close")
	if _, ok := topView[*tasks.View](m); !ok {
		t.Fatalf("closing the info did not go back to the tasks view:\n%s", screen(m))
	}
	press(m, "catalog")
	if !m.inCat || m.top() != nil {
		t.Fatalf("C over the tasks view did not show the catalog:\n%s", screen(m))
	}
	if sc := screen(m); !strings.Contains(sc, "Catalog") {
		t.Fatalf("the catalog is not drawn:\n%s", sc)
	}
}

// Over the tasks view ? gives a passed global key's reason as over the
// panes: a recording cannot change its roots.
func TestTasksViewGlobalKeyReasons(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 120, 40)
	press(m, "tasks")
	if why := m.disabled("roots"); !strings.Contains(why, "answers no roots/list") {
		t.Fatalf("R over the tasks view of a recording: reason %q", why)
	}
	press(m, "roots")
	if sc := screen(m); !strings.Contains(sc, "roots: this session answers no roots/list") {
		t.Fatalf("R over the tasks view of a recording does not say why:\n%s", sc)
	}
}
