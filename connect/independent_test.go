package connect_test

import (
	"context"
	"strings"
	"testing"

	"mcpscope/connect"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/testkit/clienttest"
	"mcpscope/testkit/peers"
)

// Independent TypeScript implementations from npm (pinned in test/peers):
// tmcp over stdio and Streamable HTTP, and mcp-lite, which speaks only the
// 2025-03-26 and 2025-06-18 versions and answers server/discover with 400.
func TestIndependentTypeScriptPeers(t *testing.T) {
	for _, tc := range []struct {
		name, server, version string
		spec                  func(t *testing.T) connect.Spec
	}{
		{"tmcp-stdio", "tmcp-peer", "", func(t *testing.T) connect.Spec {
			cmd, args := peers.TMCPStdio(t)
			return connect.Spec{Command: append([]string{cmd}, args...)}
		}},
		{"tmcp-http", "tmcp-peer", "", func(t *testing.T) connect.Spec { return connect.Spec{URL: peers.StartTMCP(t)} }},
		{"mcp-lite-http", "mcp-lite-peer", "2025-", func(t *testing.T) connect.Spec { return connect.Spec{URL: peers.StartMCPLite(t)} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := tc.spec(t)
			sp.NoJournal = true
			s := clienttest.Connect(t, sp)
			in := s.Info()
			t.Logf("%s: era %s (%s), protocol %s", tc.name, in.Era, in.EraReason, in.ProtocolVersion)
			if in.ServerInfo.Name != tc.server || !strings.HasPrefix(in.ProtocolVersion, tc.version) {
				t.Fatalf("server %+v, protocol %s", in.ServerInfo, in.ProtocolVersion)
			}
			if tc.version == "2025-" && (in.Era != protocol.EraLegacy || in.ProtocolVersion >= session.LatestVersion) {
				t.Fatalf("mcp-lite negotiates an older version: era %s, protocol %s", in.Era, in.ProtocolVersion)
			}
			tools, err := s.ListAll(context.Background(), "tools/list", "tools")
			if err != nil || len(tools) == 0 {
				t.Fatalf("tools/list: %v", err)
			}
			if r := clienttest.ResultText(clienttest.Call(t, s.Call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "independent"}}))); r != "independent" {
				t.Fatalf("echo: %q", r)
			}
			if !strings.HasPrefix(tc.name, "tmcp") {
				return
			}
			c := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 3, "intervalMs": 20}})
			if r := clienttest.ResultText(clienttest.Call(t, c)); r != "done 3 steps" {
				t.Fatalf("slow: %q", r)
			}
			if p := c.Snapshot().Progress; p.Updates != 3 {
				t.Fatalf("progress: %+v", p)
			}
		})
	}
}
