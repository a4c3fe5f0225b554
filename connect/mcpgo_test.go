package connect_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"mcpscope/connect"
	"mcpscope/session"
	"mcpscope/testkit/clienttest"
	"mcpscope/testkit/testservers"
	"mcpscope/transport"
)

// mcpscope against github.com/mark3labs/mcp-go v1.2.1, an implementation
// independent of the SDK authors, over each of its transports: stdio,
// stateful and stateless Streamable HTTP, and HTTP+SSE. Its quirks
// (peers.md): it answers server/discover, may drop progress in a race on
// modern HTTP, answers after notifications/cancelled.
func TestMCPGo(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spec  func(t *testing.T) connect.Spec
		sse   bool
		exact bool // every progress notification arrives
	}{
		{"stdio", func(t *testing.T) connect.Spec {
			return connect.Spec{Command: []string{testservers.BuildMCPGo(t)}}
		}, false, true},
		{"http-stateful", func(t *testing.T) connect.Spec { return connect.Spec{URL: testservers.StartMCPGoHTTP(t, false)} }, false, false},
		{"http-stateless", func(t *testing.T) connect.Spec { return connect.Spec{URL: testservers.StartMCPGoHTTP(t, true)} }, false, false},
		{"http+sse", func(t *testing.T) connect.Spec { return connect.Spec{URL: testservers.StartMCPGoSSE(t)} }, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := tc.spec(t)
			sp.NoJournal = true
			s := clienttest.Connect(t, sp)
			in := s.Info()
			if in.ServerInfo.Name != "mcp-go-peer" {
				t.Fatalf("server %+v (era %s: %s)", in.ServerInfo, in.Era, in.EraReason)
			}
			if _, isSSE := s.Transport().(*transport.LegacySSE); isSSE != tc.sse {
				t.Fatalf("transport %s", s.Transport().Describe())
			}
			tools, err := s.ListAll(context.Background(), "tools/list", "tools")
			if err != nil || len(tools) != 4 {
				t.Fatalf("tools/list: %d tools, %v", len(tools), err)
			}
			if r := clienttest.ResultText(clienttest.Call(t, s.Call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "from mcpscope"}}))); r != "from mcpscope" {
				t.Fatalf("echo: %q", r)
			}
			c := s.Call("tools/call", map[string]any{"name": "fail", "arguments": map[string]any{"message": "x"}})
			clienttest.Call(t, c)
			if !c.Snapshot().IsError {
				t.Fatal("an isError result was not seen as one")
			}
			c = s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 4, "intervalMs": 30}})
			if r := clienttest.ResultText(clienttest.Call(t, c)); r != "done 4 steps" {
				t.Fatalf("slow: %q", r)
			}
			// mcp-go sends notifications from another goroutine: the last
			// may come after the result (kept, flagged late). None is lost
			// where the transport cannot drop them.
			progress := func() int {
				n := 0
				for _, it := range s.Store().Since(0, 0) {
					if it.CallKey == c.Key && it.Env != nil && it.Env.Method == "notifications/progress" {
						n++
					}
				}
				return n
			}
			if tc.exact {
				clienttest.WaitFor(t, s, func() bool { return progress() == 4 })
			} else if n := progress(); n > 4 {
				t.Fatalf("%d progress notifications for 4 steps", n)
			}
			slow := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 100, "intervalMs": 50}})
			if err := s.Cancel(slow, "test"); err != nil {
				t.Fatal(err)
			}
			if _, err := slow.Wait(context.Background()); !errors.Is(err, session.ErrCancelled) {
				t.Fatalf("cancelled: %v", err)
			}
			if r := clienttest.ResultText(clienttest.Call(t, s.Call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "after"}}))); !strings.Contains(r, "after") {
				t.Fatalf("after the cancel: %q", r)
			}
		})
	}
}
