package replay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/artifact/replay"
	"mcpscope/connect"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/testkit/recordtest"
	"mcpscope/testkit/testservers"
)

// script is a session whose answers do not change from run to run.
func script(ctx context.Context, t testing.TB, s *session.Session) {
	t.Helper()
	recordtest.Lists(ctx, t, s)
	recordtest.Tool(ctx, t, s, "echo", map[string]any{"message": "hello"})
	recordtest.Tool(ctx, t, s, "fail", map[string]any{"message": "on purpose"})
	recordtest.Tool(ctx, t, s, "no-such-tool", map[string]any{})
	recordtest.Call(ctx, t, s, "resources/read", map[string]any{"uri": "demo://readme"})
	recordtest.Call(ctx, t, s, "prompts/get", map[string]any{"name": "greeting", "arguments": map[string]string{"name": "Ada"}})
	recordtest.Tool(ctx, t, s, "delay", map[string]any{"ms": 100})
}

// server is the Go SDK test server (the demo's catalog and test tools),
// changed by change when not nil, over Streamable HTTP.
func server(t *testing.T, change func(*mcp.Server)) string {
	t.Helper()
	srv := testservers.Everything()
	if change != nil {
		change(srv)
	}
	return testservers.StartHTTPServer(t, testservers.HTTPOpts{Server: srv}).URL
}

func run(t *testing.T, path, url string, o replay.Options) *replay.Summary {
	t.Helper()
	rec, err := replay.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := connect.Connect(ctx, connect.Spec{URL: url, NoJournal: true, NoState: true, Answers: rec.Answers})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sum, err := replay.Run(ctx, s, rec, o)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func describe(sum *replay.Summary) string {
	var b strings.Builder
	for _, r := range sum.Results {
		fmt.Fprintf(&b, "#%d %s %s: %s %s", r.Seq, r.Method, r.Name, r.Status, r.Reason)
		for _, d := range r.Differences {
			fmt.Fprintf(&b, " [%s %s %v]", d.What, d.Detail, d.Fields)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestSameServer: replayed against the server it was recorded from, a
// session shows no difference.
func TestSameServer(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	path := recordtest.Record(t, "same", connect.Spec{URL: server(t, nil)}, script)
	sum := run(t, path, server(t, nil), replay.Options{Tolerance: 2 * time.Second})
	if sum.Differ != 0 || sum.Same < 9 {
		t.Fatalf("%d same, %d differ:\n%s", sum.Same, sum.Differ, describe(sum))
	}
}

// TestChangedServer: against a server that changed, each difference is
// reported where it is: a result, a tool now missing (an error), a slower
// tool beyond the tolerance.
func TestChangedServer(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	path := recordtest.Record(t, "before", connect.Spec{URL: server(t, nil)}, script)
	changed := server(t, func(s *mcp.Server) {
		mcp.AddTool(s, &mcp.Tool{Name: "echo", InputSchema: &jsonschema.Schema{Type: "object"}},
			func(_ context.Context, _ *mcp.CallToolRequest, in struct {
				Message string `json:"message"`
			}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.ToUpper(in.Message)}}}, nil, nil
			})
		mcp.AddTool(s, &mcp.Tool{Name: "delay", InputSchema: &jsonschema.Schema{Type: "object"}},
			func(_ context.Context, _ *mcp.CallToolRequest, in struct {
				MS int `json:"ms"`
			}) (*mcp.CallToolResult, any, error) {
				time.Sleep(time.Duration(in.MS)*time.Millisecond + 600*time.Millisecond)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("delay: answered after %dms", in.MS)}}}, nil, nil
			})
		s.RemoveTools("fail")
	})
	sum := run(t, path, changed, replay.Options{Tolerance: 400 * time.Millisecond})
	got := map[string]string{}
	for _, r := range sum.Results {
		if r.Status == "differs" {
			var what []string
			for _, d := range r.Differences {
				what = append(what, d.What)
			}
			got[r.Name] = strings.Join(what, ",")
		}
	}
	want := map[string]string{"echo": "result", "fail": "error", "delay": "timing"}
	for k, v := range want {
		if !strings.HasPrefix(got[k], v) {
			t.Errorf("%s: differences %q, want %q", k, got[k], v)
		}
	}
	// tools/list differs too: the changed echo and the missing fail.
	if len(got) != len(want)+1 || got[""] != "result" {
		t.Errorf("differences: %v\n%s", got, describe(sum))
	}
}

// TestDestructive: a tool that declares destructiveHint is skipped unless
// allowed (--yes, or a person says yes).
func TestDestructive(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	wipes := 0
	srv := func() string {
		return server(t, func(s *mcp.Server) {
			mcp.AddTool(s, &mcp.Tool{Name: "wipe", InputSchema: &jsonschema.Schema{Type: "object"},
				Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)}},
				func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					wipes++
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wiped"}}}, nil, nil
				})
		})
	}
	path := recordtest.Record(t, "wipe", connect.Spec{URL: srv()}, func(ctx context.Context, t testing.TB, s *session.Session) {
		recordtest.Tool(ctx, t, s, "wipe", map[string]any{})
		recordtest.Tool(ctx, t, s, "echo", map[string]any{"message": "x"})
	})
	wipes = 0
	status := func(sum *replay.Summary) string {
		for _, r := range sum.Results {
			if r.Name == "wipe" {
				return r.Status
			}
		}
		return ""
	}
	if st := status(run(t, path, srv(), replay.Options{NoTiming: true})); st != "skipped" || wipes != 0 {
		t.Errorf("without --yes: %s, %d wipes", st, wipes)
	}
	asked := ""
	if st := status(run(t, path, srv(), replay.Options{NoTiming: true, Ask: func(tool string) bool { asked = tool; return false }})); st != "skipped" || asked != "wipe" {
		t.Errorf("asked %q and refused: %s", asked, st)
	}
	if st := status(run(t, path, srv(), replay.Options{NoTiming: true, Yes: true})); st != "same" || wipes != 1 {
		t.Errorf("with --yes: %s, %d wipes", st, wipes)
	}
}

func ptr[T any](v T) *T { return &v }

// TestMRTR: a 2026-07-28 call that asked for input (input_required, then a
// retry with the answer) is replayed as one call: the live session answers
// with what the recorded client answered, and the final results agree.
func TestMRTR(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	url := testservers.StartHTTP(t, testservers.HTTPOpts{Stateless: true})
	answer := json.RawMessage(`{"action":"accept","content":{"name":"Ada","age":36,"colour":"green"}}`)
	path := recordtest.Record(t, "ask", connect.Spec{URL: url, Answers: map[string]json.RawMessage{"elicitation/create": answer}},
		func(ctx context.Context, t testing.TB, s *session.Session) {
			if s.Info().Era != protocol.EraModern {
				t.Fatalf("era %s", s.Info().Era)
			}
			res, err := recordtest.Tool(ctx, t, s, "ask", map[string]any{"message": "who?"})
			if err != nil || !strings.Contains(string(res), "Ada") {
				t.Fatalf("ask: %s %v", res, err)
			}
		})
	sum := run(t, path, testservers.StartHTTP(t, testservers.HTTPOpts{Stateless: true}), replay.Options{NoTiming: true})
	var ask []string
	for _, r := range sum.Results {
		if r.Name == "ask" {
			ask = append(ask, r.Status)
		}
	}
	if strings.Join(ask, ",") != "same,skipped" || sum.Differ != 0 {
		t.Fatalf("ask rounds: %v\n%s", ask, describe(sum))
	}
}
