// Package clienttest holds what tests of mcpscope's client need in more than
// one package: connect to a real server through connect.Connect, wait for
// calls, answer server requests. Test code only.
package clienttest

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpscope/connect"
	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/testkit/waitfor"
)

// Connect connects as the command line would, with a fresh state directory
// (no shared era cache or rejoin state between tests). The session closes
// with the test.
func Connect(t *testing.T, sp connect.Spec) *session.Session {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	s, err := TryConnect(sp)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TryConnect is Connect's connect without the test's hands on it: the
// state directory stays, and an error is returned.
func TryConnect(sp connect.Spec) (*session.Session, error) {
	if sp.Grace == 0 {
		sp.Grace = 500 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return connect.Connect(ctx, sp)
}

// Call waits up to a minute for c's final round and fails the test on an
// error.
func Call(t *testing.T, c *session.Call) json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.WaitFinal(ctx)
	if err != nil {
		t.Fatalf("%s %s: %v", c.Method, c.Name, err)
	}
	return res
}

// WaitFor waits up to 30 s for cond, checking it each time the session's
// store changes.
func WaitFor(t *testing.T, s *session.Session, cond func() bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for !cond() {
		select {
		case <-s.Store().Changed():
		case <-deadline:
			t.Fatal("condition not met within 30s")
		}
	}
}

// Responder answers server requests and MRTR input requests with answer
// (nil: refuses them) and records what it was asked. It declares form
// elicitation.
type Responder struct {
	answer func(r session.ServerRequest) (json.RawMessage, *journal.RPCError)
	mu     sync.Mutex
	asked  []session.ServerRequest
}

// NewResponder makes a Responder.
func NewResponder(answer func(r session.ServerRequest) (json.RawMessage, *journal.RPCError)) *Responder {
	return &Responder{answer: answer}
}

func (r *Responder) Respond(_ context.Context, req session.ServerRequest) (json.RawMessage, *journal.RPCError) {
	r.mu.Lock()
	r.asked = append(r.asked, req)
	r.mu.Unlock()
	if r.answer == nil {
		return nil, &journal.RPCError{Code: -32601, Message: "not answered in this test"}
	}
	return r.answer(req)
}

// Capabilities implements session.Capable.
func (r *Responder) Capabilities() json.RawMessage {
	return json.RawMessage(`{"elicitation":{"form":{}}}`)
}

// Requests is what the responder was asked, in order.
func (r *Responder) Requests() []session.ServerRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]session.ServerRequest(nil), r.asked...)
}

// ResultText is the text content of a tools/call result.
func ResultText(res json.RawMessage) string {
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(res, &r)
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// SyncBuffer is a bytes.Buffer safe to write from a command and read from
// the test.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// WaitText waits up to 30 s until b holds want.
func WaitText(t *testing.T, b *SyncBuffer, want string) {
	t.Helper()
	if !waitfor.Within(30*time.Second, func() bool { return strings.Contains(b.String(), want) }) {
		t.Fatalf("no %q within 30s; got:\n%s", want, b.String())
	}
}

// StartReportTask calls the report tool of the ts-v2-tasks peer
// (test/peers) and returns the task it created.
func StartReportTask(t *testing.T, s *session.Session, steps, intervalMs int) string {
	t.Helper()
	c := s.Call("tools/call", map[string]any{"name": "report", "arguments": map[string]any{"topic": "tides", "steps": steps, "intervalMs": intervalMs}})
	res := Call(t, c)
	id := c.Snapshot().TaskID
	if journal.ResultType(res) != "task" || id == "" {
		t.Fatalf("want a CreateTaskResult, got %s", res)
	}
	return id
}
