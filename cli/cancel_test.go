package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/testkit/clienttest"
	"mcpscope/testkit/testservers"
	"mcpscope/testkit/waitfor"
)

// A headless call given up (its --timeout, or Ctrl-C) tells the server
// before mcpscope closes the transport: notifications/cancelled reaches the
// server over stdio, Streamable HTTP and HTTP+SSE. In the 2026-07-28 era
// over HTTP, giving up is closing the response, and nothing is POSTed.
func TestHeadlessCancelReachesTheServer(t *testing.T) {
	type target struct {
		name   string
		start  func(t *testing.T) (argv []string, received func() string)
		modern bool
	}
	targets := []target{
		{name: "stdio", start: func(t *testing.T) ([]string, func() string) {
			log := filepath.Join(t.TempDir(), "received.log")
			return []string{"--", testservers.BuildStdio(t), "-request-log", log}, func() string {
				b, _ := os.ReadFile(log)
				return string(b)
			}
		}},
		{name: "streamable-http", start: func(t *testing.T) ([]string, func() string) {
			var log clienttest.SyncBuffer
			h := testservers.StartHTTPServer(t, testservers.HTTPOpts{RequestLog: &log})
			return []string{"--era", "legacy", h.URL}, log.String
		}},
		{name: "http+sse", start: func(t *testing.T) ([]string, func() string) {
			var log clienttest.SyncBuffer
			h := testservers.StartSSE(t, testservers.HTTPOpts{RequestLog: &log})
			return []string{h.URL}, log.String
		}},
		{name: "modern-http", modern: true, start: func(t *testing.T) ([]string, func() string) {
			var log clienttest.SyncBuffer
			h := testservers.StartHTTPServer(t, testservers.HTTPOpts{Stateless: true, RequestLog: &log})
			return []string{"--era", "modern", h.URL}, log.String
		}},
	}
	for _, tg := range targets {
		t.Run(tg.name+"/timeout", func(t *testing.T) {
			target, received := tg.start(t)
			// --timeout bounds the handshake too: leave it room under a
			// loaded -race run, so the call is what times out.
			code, out, errb := runIn(t, t.TempDir(), append([]string{"call", "delay", "ms=20000", "--timeout", "2s", "--no-journal"}, target...)...)
			if code != exitTimeout {
				t.Fatalf("exit %d, want %d (timeout)\n%s\n%s", code, exitTimeout, out, errb)
			}
			if !strings.Contains(received(), "tools/call") {
				t.Fatalf("the handshake timed out, not the call (the test's bound is too tight for this machine):\n%s", errb)
			}
			checkCancelled(t, tg.modern, received)
		})
		t.Run(tg.name+"/interrupt", func(t *testing.T) {
			target, received := tg.start(t)
			t.Setenv("XDG_STATE_HOME", t.TempDir())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out, errb clienttest.SyncBuffer
			done := make(chan int, 1)
			go func() {
				done <- Run(ctx, append([]string{"call", "delay", "ms=20000", "--no-journal"}, target...), &out, &errb)
			}()
			waitReceived(t, received, "tools/call")
			cancel() // Ctrl-C
			select {
			case code := <-done:
				if code != exitInterrupt {
					t.Fatalf("exit %d, want %d (interrupted)\n%s", code, exitInterrupt, errb.String())
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the interrupted call did not end")
			}
			checkCancelled(t, tg.modern, received)
		})
	}
}

// checkCancelled: the server heard notifications/cancelled for the call
// (legacy), or no such POST at all (modern HTTP cancels by closing).
func checkCancelled(t *testing.T, modern bool, received func() string) {
	t.Helper()
	if modern {
		if strings.Contains(received(), "notifications/cancelled") {
			t.Fatalf("2026-07-28 over HTTP cancels by closing the response; the server got a notification:\n%s", received())
		}
		return
	}
	// The server logs what it read; the cancel went out before the
	// transport closed, but the log line may trail the exit by a moment.
	waitReceived(t, received, "notifications/cancelled")
}

func waitReceived(t *testing.T, received func() string, want string) {
	t.Helper()
	// a hang guard: -race on a loaded machine is slow
	if !waitfor.Within(2*time.Minute, func() bool { return strings.Contains(received(), want) }) {
		t.Fatalf("the server never received %s; it got:\n%s", want, received())
	}
}

// Calls that end leave no state behind: 20 quick calls that carry event ids
// (so each writes a rejoin record while it runs) leave no record and no
// half-written file once their commands have returned.
func TestQuickCallsLeaveNoState(t *testing.T) {
	h := testservers.StartHTTPServer(t, testservers.HTTPOpts{EventStore: true})
	state := t.TempDir()
	for i := range 20 {
		code, out, errb := runIn(t, state, "call", "slow", "seconds=0.2", "steps=2", "--no-journal", "--era", "legacy", h.URL)
		if code != exitOK {
			t.Fatalf("call %d: exit %d\n%s\n%s", i, code, out, errb)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(state, "mcpscope", "calls"))
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if len(left) > 0 {
		t.Fatalf("finished calls left state behind: %v", left)
	}
}
