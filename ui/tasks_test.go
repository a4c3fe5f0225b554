package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"mcpscope/testkit/peers"
)

// A 2026 extension task that asks for input, against the TypeScript SDK v2
// peer: r in the tasks view follows it, the elicitation it asks for is put
// to the user as a form naming the task, the answer goes out with
// tasks/update, and enter opens the tasks/get that carries the result.
func TestTaskInputRequiredTUI(t *testing.T) {
	url := peers.StartTSv2Tasks(t)
	r := NewResponder(nil, true)
	s, m := modernModel(t, url, r, 140)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	c := s.Call("tools/call", map[string]any{"name": "review", "arguments": map[string]any{"topic": "ui", "holdMs": 0}})
	if _, err := c.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	id := c.Snapshot().TaskID
	press(m, "tasks")
	if !strings.Contains(screen(m), id[:8]) {
		t.Fatalf("the task is not listed:\n%s", screen(m))
	}
	followed := make(chan tea.Msg, 1)
	cmd := m.Press("task-result")
	if cmd == nil {
		t.Fatalf("r did not start following:\n%s", screen(m))
	}
	go func() { followed <- cmd() }()

	prompt := make(chan tea.Msg, 1)
	go func() { prompt <- waitPrompt(r)() }()
	select {
	case msg := <-prompt:
		m.Update(msg)
	case <-ctx.Done():
		t.Fatalf("no prompt for the task's input request:\n%s", screen(m))
	}
	// Prompts wait while a view is open; the status bar says so.
	if sc := screen(m); !strings.Contains(sc, "1 waiting") {
		t.Fatalf("the waiting prompt is not flagged:\n%s", sc)
	}
	press(m, "tasks-close")
	sc := screen(m)
	if !strings.Contains(sc, "Publish the review of ui?") || !strings.Contains(sc, "task "+id) || !strings.Contains(sc, "tasks/update") {
		t.Fatalf("the prompt does not say which task asks:\n%s", sc)
	}
	for i := 0; i < 3 && !strings.Contains(screen(m), "[true]"); i++ {
		press(m, "form-choice-next")
	}
	press(m, "form-submit")
	select {
	case msg := <-followed:
		m.Update(msg)
	case <-ctx.Done():
		t.Fatalf("following the task did not end:\n%s", screen(m))
	}
	if sc := screen(m); !strings.Contains(sc, "completed") {
		t.Fatalf("no completion flash:\n%s", sc)
	}
	press(m, "tasks")
	press(m, "task-open")
	waitStoreFor(t, m, "the result in the detail", func() bool { return strings.Contains(screen(m), "review: ui approved") })
	n := 0
	for _, c := range s.Calls() {
		if c.Method == "tasks/update" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d tasks/update calls, want one", n)
	}
}
