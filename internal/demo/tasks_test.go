package demo

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	mcpconnect "mcpscope/connect"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/taskfollow"
	"mcpscope/testkit/clienttest"
)

// serveHTTPTest serves a demo as ServeHTTP does, on an httptest server,
// and returns its /mcp URL.
func serveHTTPTest(t *testing.T) string {
	t.Helper()
	d := New(Options{})
	h, ts := newHTTPHandler(d)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		d.Close()
		ts.wait(wait)
		closeSessions(d.Server)
		srv.Close()
	})
	return srv.URL + "/mcp"
}

// modernClient is mcpscope's own 2026-07-28 client (it declares the tasks
// extension on every request) on the demo over HTTP.
func modernClient(t *testing.T, url string) *session.Session {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	s := clienttest.Connect(t, mcpconnect.Spec{URL: url, NoJournal: true, Era: "modern"})
	if s.Era() != protocol.EraModern {
		t.Fatalf("era %s", s.Era())
	}
	return s
}

// Over HTTP in the 2026 era the demo advertises the tasks extension, and a
// long slow call (or one asking for a task) is answered at once with a
// task, whose progress shows as its status message and whose result
// tasks/get carries at the end; a short one stays a plain call.
func TestTasksOverHTTP(t *testing.T) {
	s := modernClient(t, serveHTTPTest(t))
	var caps struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if err := json.Unmarshal(s.Info().Capabilities, &caps); err != nil || caps.Extensions[tasksExtension] == nil {
		t.Fatalf("server/discover's capabilities lack the tasks extension: %s", s.Info().Capabilities)
	}

	plain := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 0.2, "steps": 2}})
	if res := clienttest.Call(t, plain); plain.Snapshot().TaskID != "" || !strings.Contains(clienttest.ResultText(res), "finished 2 steps") {
		t.Fatalf("a short slow call: %s (task %q)", res, plain.Snapshot().TaskID)
	}

	long := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 600, "steps": 600}})
	start := time.Now()
	created := clienttest.Call(t, long)
	id := long.Snapshot().TaskID
	if id == "" || !strings.Contains(string(created), `"resultType":"task"`) || time.Since(start) > 30*time.Second {
		t.Fatalf("slow seconds=600 answered %s after %s; want a task at once", created, time.Since(start))
	}
	if _, err := s.Call("tasks/cancel", map[string]any{"taskId": id}).Wait(testCtx(t)); err != nil {
		t.Fatalf("tasks/cancel: %v", err)
	}
	var tk protocol.Task
	if err := json.Unmarshal(clienttest.Call(t, s.Call("tasks/get", map[string]any{"taskId": id})), &tk); err != nil || tk.Status != "cancelled" {
		t.Fatalf("after tasks/cancel: %+v %v", tk, err)
	}

	asked := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 0.6, "steps": 3, "task": "always"}})
	clienttest.Call(t, asked)
	id = asked.Snapshot().TaskID
	if id == "" {
		t.Fatal(`slow task=always made no task`)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var seen []string
	res, err := taskfollow.Follow(ctx, s, id, func(tk protocol.Task) { seen = append(seen, tk.Status+" "+tk.StatusMessage) })
	if err != nil || !strings.Contains(clienttest.ResultText(res), "finished 3 steps in") {
		t.Fatalf("following the task: %s %v (statuses %v)", res, err, seen)
	}
	if strings.Contains(clienttest.ResultText(res), "no progressToken") {
		t.Fatalf("the task's call ran without a progress token: %s", res)
	}
	if _, err := s.Call("tasks/get", map[string]any{"taskId": "nope"}).Wait(ctx); err == nil || !strings.Contains(err.Error(), "unknown task") {
		t.Fatalf("tasks/get of an unknown task: %v", err)
	}
}

// A task's status message follows its progress.
func TestTaskStatusMessage(t *testing.T) {
	s := modernClient(t, serveHTTPTest(t))
	c := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 60, "steps": 600, "task": "always"}})
	clienttest.Call(t, c)
	id := c.Snapshot().TaskID
	defer s.Call("tasks/cancel", map[string]any{"taskId": id})
	deadline := time.Now().Add(wait)
	for {
		var tk protocol.Task
		_ = json.Unmarshal(clienttest.Call(t, s.Call("tasks/get", map[string]any{"taskId": id})), &tk)
		if strings.HasPrefix(tk.StatusMessage, "step ") && strings.HasSuffix(tk.StatusMessage, "/600") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the status message never showed a step: %+v", tk)
		}
		timer := time.NewTimer(taskPollInterval)
		<-timer.C
	}
}

// Without the extension declared (any client of the initialize era, or
// one that did not opt in) the demo never answers with a task.
func TestTaskFor(t *testing.T) {
	meta := `"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	for params, want := range map[string]bool{
		`{"name":"slow","arguments":{"seconds":600},` + meta + `}`:                                              true,
		`{"name":"slow","arguments":{"seconds":1,"task":"always"},` + meta + `}`:                                true,
		`{"name":"slow","arguments":{},` + meta + `}`:                                                           false,
		`{"name":"slow","arguments":{"seconds":600,"task":"never"},` + meta + `}`:                               false,
		`{"name":"slow","arguments":{"seconds":600}}`:                                                           false,
		`{"name":"slow","arguments":{"seconds":"x"},` + meta + `}`:                                              false,
		`{"name":"echo","arguments":{"message":"x","task":"always"},` + meta + `}`:                              false,
		`{"name":"slow","arguments":{"seconds":600},"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}`: false,
	} {
		if _, got := taskFor(json.RawMessage(params)); got != want {
			t.Errorf("%s: task %v, want %v", params, got, want)
		}
	}
}
