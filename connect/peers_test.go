package connect_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"mcpscope/connect"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/taskfollow"
	"mcpscope/testkit/clienttest"
	"mcpscope/testkit/peers"
	"mcpscope/transport"
)

// These run mcpscope's own code paths (flags → transport → era probe →
// session) against server-everything, a server written by others.

func everythingStdio(t *testing.T) connect.Spec {
	cmd, args := peers.EverythingStdio(t)
	return connect.Spec{Command: append([]string{cmd}, args...), NoJournal: true}
}

func everythingHTTP(t *testing.T) connect.Spec {
	return connect.Spec{URL: peers.StartEverythingHTTP(t, "streamableHttp"), NoJournal: true}
}

func exerciseEverything(t *testing.T, o connect.Spec) {
	s := clienttest.Connect(t, o)
	in := s.Info()
	if in.Era != protocol.EraLegacy || in.ServerInfo.Name == "" || in.ProtocolVersion == "" {
		t.Fatalf("want a legacy session with server info, got era %q (%s), server %q, version %q", in.Era, in.EraReason, in.ServerInfo.Name, in.ProtocolVersion)
	}
	for cmd, field := range map[string]string{"tools": "tools", "resources": "resources", "templates": "resourceTemplates", "prompts": "prompts"} {
		method := map[string]string{"tools": "tools/list", "resources": "resources/list", "templates": "resources/templates/list", "prompts": "prompts/list"}[cmd]
		items, err := s.ListAll(context.Background(), method, field)
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		if len(items) == 0 {
			t.Fatalf("%s: want a non-empty %s list", cmd, field)
		}
	}

	res := clienttest.Call(t, s.Call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "hello from mcpscope"}}))
	if !strings.Contains(string(res), "hello from mcpscope") {
		t.Fatalf("echo: %s", res)
	}

	c := s.Call("tools/call", map[string]any{"name": "trigger-long-running-operation", "arguments": map[string]any{"duration": 1, "steps": 4}})
	clienttest.Call(t, c)
	if sn := c.Snapshot(); sn.Progress.Updates != 4 || sn.Progress.Total != 4 {
		t.Fatalf("long-running operation: want 4 progress updates of total 4, got %+v", sn.Progress)
	}

	c = s.Call("tools/call", map[string]any{"name": "trigger-long-running-operation", "arguments": map[string]any{"duration": 30, "steps": 30}})
	clienttest.WaitFor(t, s, func() bool { return c.Snapshot().Progress.Updates > 0 })
	if err := s.Cancel(c, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(context.Background()); !errors.Is(err, session.ErrCancelled) {
		t.Fatalf("cancelled call: %v", err)
	}
	// The session goes on after a cancel.
	res = clienttest.Call(t, s.Call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "after cancel"}}))
	if !strings.Contains(string(res), "after cancel") {
		t.Fatalf("echo after cancel: %s", res)
	}
}

func TestEverythingStdio(t *testing.T) { exerciseEverything(t, everythingStdio(t)) }

func TestEverythingStreamableHTTP(t *testing.T) { exerciseEverything(t, everythingHTTP(t)) }

// A banner on stdout (a common mistake of real servers) is kept as garbage
// and the session works.
func TestEverythingWithBanner(t *testing.T) {
	o := everythingStdio(t)
	o.Command = []string{"sh", "-c", `echo "Starting server... (not JSON)"; exec "$0" "$@"`, o.Command[0], o.Command[1], o.Command[2]}
	s := clienttest.Connect(t, o)
	res := clienttest.Call(t, s.Call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "still fine"}}))
	if !strings.Contains(string(res), "still fine") {
		t.Fatalf("echo: %s", res)
	}
	found := false
	for _, it := range s.Store().Since(0, 0) {
		if it.Frame.Kind == transport.Garbage && strings.Contains(string(it.Frame.Data), "Starting server") {
			found = true
		}
	}
	if !found {
		t.Fatal("the banner was not kept as a garbage frame")
	}
}

// server-everything killed mid-call: the pending call ends with an error
// naming the exit, within a second of it.
func TestEverythingKilledMidCall(t *testing.T) {
	s := clienttest.Connect(t, everythingStdio(t))
	c := s.Call("tools/call", map[string]any{"name": "trigger-long-running-operation", "arguments": map[string]any{"duration": 60, "steps": 60}})
	clienttest.WaitFor(t, s, func() bool { return c.Snapshot().Progress.Updates > 0 })
	pid := 0
	for _, it := range s.Store().Since(0, 0) {
		if it.Frame.Meta.Event == transport.EvSpawned {
			pid = it.Frame.Meta.PID
		}
	}
	if pid == 0 {
		t.Fatal("no spawned event with a pid")
	}
	killed := time.Now()
	p, err := os.FindProcess(pid)
	if err == nil {
		err = p.Kill()
	}
	if err != nil {
		t.Fatalf("kill server-everything (pid %d): %v", pid, err)
	}
	_, err = c.Wait(context.Background())
	var f *session.Failure
	if !errors.As(err, &f) || !strings.Contains(f.Reason, "exited") {
		t.Fatalf("want a synthetic error naming the exit, got %v", err)
	}
	if d := c.Snapshot().Ended.Sub(killed); d > time.Second {
		t.Fatalf("the call ended %s after the kill; want within 1s", d)
	}
}

// 2025-11-25 experimental tasks against server-everything: create a task,
// follow its status, fetch the result; cancel another one.
func TestEverythingTasks(t *testing.T) {
	s := clienttest.Connect(t, everythingStdio(t))
	c := s.CallAsTask("tools/call", map[string]any{"name": "simulate-research-query", "arguments": map[string]any{"topic": "tides"}}, time.Minute)
	clienttest.Call(t, c)
	id := c.Snapshot().TaskID
	if id == "" {
		t.Fatalf("no task id in the CreateTaskResult: %s", c.Snapshot().Result)
	}
	var statuses []string
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := taskfollow.Follow(ctx, s, id, func(tk protocol.Task) { statuses = append(statuses, tk.Status) })
	if err != nil || !strings.Contains(string(res), "Research Report: tides") {
		t.Fatalf("tasks/result: %v %.200s", err, res)
	}
	if tk, _ := s.Task(id); tk.Status != "completed" || tk.CallKey != c.Key {
		t.Fatalf("task state after the result: %+v", tk)
	}
	if len(statuses) == 0 || statuses[len(statuses)-1] != "completed" {
		t.Fatalf("status changes seen: %v", statuses)
	}

	other := s.CallAsTask("tools/call", map[string]any{"name": "simulate-research-query", "arguments": map[string]any{"topic": "moons"}}, 0)
	clienttest.Call(t, other)
	oid := other.Snapshot().TaskID
	clienttest.Call(t, s.Call("tasks/cancel", map[string]any{"taskId": oid}))
	if tk, _ := s.Task(oid); tk.Status != "cancelled" {
		t.Fatalf("after tasks/cancel: %+v", tk)
	}
	list := clienttest.Call(t, s.Call("tasks/list", nil))
	if !strings.Contains(string(list), id) || !strings.Contains(string(list), oid) {
		t.Fatalf("tasks/list lacks our tasks: %.300s", list)
	}
}

// server-everything's sse mode end to end: Streamable HTTP is refused (404),
// mcpscope falls back to HTTP+SSE by itself, and calls with progress work.
func TestEverythingSSEFallback(t *testing.T) {
	s := clienttest.Connect(t, connect.Spec{URL: peers.StartEverythingHTTP(t, "sse"), NoJournal: true})
	if _, ok := s.Transport().(*transport.LegacySSE); !ok {
		t.Fatalf("want the HTTP+SSE transport after the fallback, got %s", s.Transport().Describe())
	}
	if in := s.Info(); in.Era != protocol.EraLegacy || in.ServerInfo.Name == "" {
		t.Fatalf("info: %+v", in)
	}
	res := clienttest.Call(t, s.Call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "over sse"}}))
	if !strings.Contains(string(res), "over sse") {
		t.Fatalf("echo: %s", res)
	}
	c := s.Call("tools/call", map[string]any{"name": "trigger-long-running-operation", "arguments": map[string]any{"duration": 1, "steps": 3}})
	clienttest.Call(t, c)
	if p := c.Snapshot().Progress; p.Updates != 3 {
		t.Fatalf("progress over sse: %+v", p)
	}
}
