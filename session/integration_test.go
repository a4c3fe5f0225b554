package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/testkit/testservers"
	"mcpscope/transport"
)

// start spawns the Go SDK test server binary over stdio and initializes.
func startStdio(t *testing.T, args ...string) (*session.Session, string) {
	t.Helper()
	bin := testservers.BuildStdio(t)
	jpath := filepath.Join(t.TempDir(), "journal.jsonl")
	j, err := journal.Create(jpath, "test")
	if err != nil {
		t.Fatal(err)
	}
	tr := transport.NewStdio(transport.StdioOptions{Command: bin, Args: args, Grace: 500 * time.Millisecond})
	s := session.New(tr, session.Options{Journal: j})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := s.Initialize(ctx); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return s, jpath
}

func startHTTP(t *testing.T, o testservers.HTTPOpts) *session.Session {
	t.Helper()
	return httpSession(t, testservers.StartHTTP(t, o))
}

func waitCall(t *testing.T, c *session.Call) (json.RawMessage, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.Wait(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%s %s never ended: %+v", c.Method, c.Name, c.Snapshot())
	}
	return res, err
}

func toolText(t *testing.T, res json.RawMessage) string {
	t.Helper()
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatalf("not a tool result: %v: %.200s", err, res)
	}
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// exercise runs the common checks against an initialized session.
func exercise(t *testing.T, s *session.Session) {
	in := s.Info()
	if in.ServerInfo.Name == "" || in.ProtocolVersion != session.LatestVersion {
		t.Fatalf("info after initialize: %+v", in)
	}
	res, err := waitCall(t, s.Call("tools/list", nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"echo", "slow", "big"} {
		if !strings.Contains(string(res), `"name":"`+name+`"`) {
			t.Fatalf("tools/list lacks %s: %.300s", name, res)
		}
	}
	res, err = waitCall(t, s.Call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "hi there"}}))
	if err != nil || !strings.Contains(toolText(t, res), "hi there") {
		t.Fatalf("echo: %v %s", err, res)
	}

	// Progress correlates by the auto-assigned token.
	c := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 0.3, "steps": 3}})
	if _, err := waitCall(t, c); err != nil {
		t.Fatal(err)
	}
	if sn := c.Snapshot(); sn.State != session.StateOK || sn.Progress.Updates != 3 || sn.Progress.Total != 3 {
		t.Fatalf("slow: want ok with 3 progress updates of total 3, got %s %+v", sn.State, sn.Progress)
	}
	items := 0
	for _, it := range s.Store().Since(0, 0) {
		if it.CallKey == c.Key {
			items++
		}
	}
	if items != 5 { // request, 3 progress, response
		t.Fatalf("want 5 items correlated with the slow call, got %d", items)
	}

	// Cancel: the call ends at once as cancelled; a late answer is flagged.
	c = s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 30, "steps": 30}})
	waitProgress(t, c)
	if err := s.Cancel(c, "test"); err != nil {
		t.Fatal(err)
	}
	_, err = waitCall(t, c)
	if !errors.Is(err, session.ErrCancelled) || c.Snapshot().State != session.StateCancelled {
		t.Fatalf("cancel: %v %s", err, c.Snapshot().State)
	}
	// The session still works after a cancel.
	if _, err := waitCall(t, s.Call("ping", nil)); err != nil {
		t.Fatal(err)
	}

	// Unknown tool → JSON-RPC error or isError result, never a hang.
	res, err = waitCall(t, s.Call("tools/call", map[string]any{"name": "no-such-tool"}))
	var rpc *journal.RPCError
	if err == nil && !strings.Contains(string(res), `"isError":true`) || err != nil && !errors.As(err, &rpc) {
		t.Fatalf("unknown tool: %v %s", err, res)
	}
}

func waitProgress(t *testing.T, c *session.Call) {
	t.Helper()
	deadline := time.After(2 * time.Minute) // a hang guard: -race on a loaded machine is slow
	st := c.Session().Store()
	for c.Snapshot().Progress.Updates == 0 {
		select {
		case <-st.Changed():
		case <-deadline:
			t.Fatalf("no progress for %s", c.Name)
		case <-c.Done():
			t.Fatalf("call ended before progress: %+v", c.Snapshot())
		}
	}
}

func TestGoSDKStdio(t *testing.T) {
	s, jpath := startStdio(t)
	exercise(t, s)

	// The journal reads back into an offline session with the same calls.
	live := s.Calls()
	s.Close()
	off, _, err := session.Load(jpath)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(off.Calls()), len(live); got != want {
		t.Fatalf("journal has %d calls, live session had %d", got, want)
	}
	if off.Store().Len() != s.Store().Len() {
		t.Fatalf("journal has %d frames, live store %d", off.Store().Len(), s.Store().Len())
	}
	for i, c := range off.Calls() {
		a, b := c.Snapshot(), live[i].Snapshot()
		if a.Method != b.Method || (b.State.Ended() && a.State != b.State && b.State != session.StateCancelled) {
			t.Fatalf("call %d: journal %s %s, live %s %s", i, a.Method, a.State, b.Method, b.State)
		}
	}
	if off.Info().ServerInfo.Name != s.Info().ServerInfo.Name {
		t.Fatalf("server info not rebuilt from journal")
	}
}

func TestGoSDKHTTPEventStore(t *testing.T) {
	s := startHTTP(t, testservers.HTTPOpts{EventStore: true})
	if s.Info().SessionID == "" {
		t.Fatal("no Mcp-Session-Id recorded")
	}
	exercise(t, s)
}

func TestGoSDKHTTPJSONResponse(t *testing.T) {
	s := startHTTP(t, testservers.HTTPOpts{JSONResponse: true})
	res, err := waitCall(t, s.Call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "json"}}))
	if err != nil || !strings.Contains(toolText(t, res), "json") {
		t.Fatalf("echo over JSON responses: %v %s", err, res)
	}
}

// A server that prints a banner on stdout: the banner is kept as garbage and
// the session goes on.
func TestBannerOnStdout(t *testing.T) {
	s, _ := startStdio(t, "--banner", "Welcome to my server! v1.2")
	garbage := 0
	for _, it := range s.Store().Since(0, 0) {
		if it.Frame.Kind == transport.Garbage && strings.Contains(string(it.Frame.Data), "Welcome") {
			garbage++
		}
	}
	if garbage != 1 {
		t.Fatalf("want the banner kept as one garbage frame, got %d", garbage)
	}
	if _, err := waitCall(t, s.Call("ping", nil)); err != nil {
		t.Fatal(err)
	}
}

// A server killed mid-call: every pending call ends with an error at once.
func TestServerDiesMidCall(t *testing.T) {
	s, _ := startStdio(t)
	slow := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 60, "steps": 60}})
	waitProgress(t, slow)
	die := s.Call("tools/call", map[string]any{"name": "die"})
	for _, c := range []*session.Call{slow, die} {
		_, err := waitCall(t, c)
		var f *session.Failure
		if !errors.As(err, &f) || !strings.Contains(f.Error(), "exited") {
			t.Fatalf("%s: want a synthetic error naming the exit, got %v", c.Name, err)
		}
	}
	var exitAt time.Time
	for _, it := range s.Store().Since(0, 0) {
		if it.Frame.Meta.Event == transport.EvExited {
			exitAt = it.Frame.Time
		}
	}
	if exitAt.IsZero() {
		t.Fatal("no exited event")
	}
	if d := slow.Snapshot().Ended.Sub(exitAt); d > time.Second {
		t.Fatalf("pending call ended %s after the process exit; want within 1s", d)
	}
	// New calls fail fast too.
	if _, err := waitCall(t, s.Call("ping", nil)); err == nil {
		t.Fatal("ping after exit succeeded")
	}
}

func TestTwentyMegabyteResponse(t *testing.T) {
	s, _ := startStdio(t)
	res, err := waitCall(t, s.Call("tools/call", map[string]any{"name": "big", "arguments": map[string]any{"megabytes": 20}}))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(toolText(t, res)); n < 20<<20 {
		t.Fatalf("want 20 MiB of text, got %d bytes", n)
	}
}

func TestIdleTimeoutResetsOnProgress(t *testing.T) {
	s, _ := startStdio(t)
	// Each step is 0.1s apart, far below the 3s idle timeout (a loaded
	// machine stalls a process for a second at times), for 4s total: only
	// the reset on progress lets it finish.
	c := s.CallWith("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 4, "steps": 40}},
		session.CallOptions{Timeout: 3 * time.Second})
	if _, err := waitCall(t, c); err != nil {
		t.Fatalf("progress should keep the call alive: %v", err)
	}
	// Without progress tokens nothing resets it.
	c = s.CallWith("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 5, "steps": 5}},
		session.CallOptions{Timeout: 300 * time.Millisecond, NoProgressToken: true})
	_, err := waitCall(t, c)
	var f *session.Failure
	if !errors.As(err, &f) || !strings.HasPrefix(f.Reason, "timed out") {
		t.Fatalf("want a timeout, got %v", err)
	}
	// Hard maximum wins over progress (the idle limit is a minute: a stall
	// must not end the call first).
	c = s.CallWith("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 5, "steps": 50}},
		session.CallOptions{Timeout: time.Minute, MaxTimeout: 400 * time.Millisecond})
	_, err = waitCall(t, c)
	if !errors.As(err, &f) || !strings.Contains(f.Reason, "hard limit") {
		t.Fatalf("want the hard limit, got %v", err)
	}
}
