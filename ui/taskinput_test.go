package ui

import (
	"strings"
	"testing"
	"time"

	"mcpscope/session"
	"mcpscope/transport"
)

// A call that became a 2026 task which now asks for input says so on its
// row (input), and the status line says which task and how to follow it
// when it starts to ask (issue 40); once it works again the row is the
// call's own state again.
func TestTaskAskingForInputShown(t *testing.T) {
	f := newFake()
	s := session.New(f, session.Options{Timeout: -1, MaxTimeout: -1, Now: func() time.Time { return at(1) }})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	m := newTestModel(t, s, 80, 24)
	c := s.Call("tools/call", map[string]any{"name": "review", "arguments": map[string]any{"topic": "ui"}})
	f.sentWith(t, `"name":"review"`)
	inject := func(sec float64, data string) { f.sink(msg(sec, transport.In, data)) } // at a fixed time: a golden
	status := func(st string) string {
		return `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"task-7","status":"` + st + `","createdAt":"2026-03-01T12:00:01Z","pollInterval":100}}`
	}
	inject(1.5, `{"jsonrpc":"2.0","id":`+c.Key+`,"result":{"task":{"taskId":"task-7","status":"working","createdAt":"2026-03-01T12:00:01Z","pollInterval":100}}}`)
	refresh(m)
	if sc := screen(m); strings.Contains(sc, "input") {
		t.Fatalf("a working task shows input:\n%s", sc)
	}
	inject(2, status("input_required"))
	refresh(m)
	got := screen(m)
	if !strings.Contains(got, "review       input") || !strings.Contains(got, "task task-7 asks for input: t lists it, r there follows it") {
		t.Fatalf("the task asking for input is not shown:\n%s", got)
	}
	checkSize(t, got, 80, 24)
	golden(t, "task-input-80x24", got)

	inject(3, status("working"))
	refresh(m)
	if sc := screen(m); !strings.Contains(sc, "review       ok") {
		t.Fatalf("the row after the task works again:\n%s", sc)
	}
}
