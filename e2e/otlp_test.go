package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"mcpscope/testkit/otlptest"
	"mcpscope/testkit/peers"
)

// collectorHasExport checks that a collector received exactly the spans
// export --format otlp writes for one of the journals under dir (the one
// whose trace it got), with a tools/call echo span among them, and
// returns that journal.
func collectorHasExport(t *testing.T, col *peers.Collector, dir string, env []string) string {
	t.Helper()
	got := otlptest.Read(t, col.Received(t))
	if len(got.Spans) == 0 {
		t.Fatal("the collector received no spans")
	}
	journals, _ := filepath.Glob(filepath.Join(dir, "state", "mcpscope", "journal", "*.jsonl"))
	for _, j := range journals {
		cmd := exec.Command(binary(t), "export", "--format", "otlp", j)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("export %s: %v", j, err)
		}
		want := otlptest.Read(t, out)
		if len(want.Spans) == 0 || string(want.Spans[0].TraceId) != string(got.Spans[0].TraceId) {
			continue
		}
		if d := otlptest.Diff(got, want); d != "" {
			t.Fatalf("the collector received other spans than the export of %s writes:\n%s", j, d)
		}
		for _, s := range got.Spans {
			if s.Name == "tools/call echo" {
				return j
			}
		}
		t.Fatalf("no tools/call echo span among the %d received", len(got.Spans))
	}
	t.Fatalf("no journal under %s has the trace the collector received (%d journals)", dir, len(journals))
	return ""
}

// mcpscope attach --otlp sends the attached proxy's session, from its
// start (calls made before attaching too) to its end, as the spans export
// writes for the proxy's journal: the proxy itself was started without
// --otlp, as a host's config starts it.
func TestE2EAttachOTLP(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: skipped in -short mode")
	}
	col := peers.StartCollector(t)
	dir := t.TempDir()
	env := attachEnv(t, dir)
	h := startHost(t, env, "otlp-host")
	h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"scripted-host","version":"1"}}}`)
	if a := h.answer(1); a.Error != nil {
		t.Fatalf("initialize: %s", a.raw)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if a := h.call(2, "echo", `{"message":"before-attach"}`); a.Error != nil {
		t.Fatalf("echo: %s", a.raw)
	}
	tm := pane(t, dir, env, 120, 40, "attach", "otlp-host", "--otlp", col.Endpoint)
	tm.waitRe(`attached: proxy otlp-host`, `H\s+2\s+tools/call\s+echo`)
	if a := h.call(3, "echo", `{"message":"while-attached"}`); a.Error != nil {
		t.Fatalf("echo: %s", a.raw)
	}
	tm.waitRe(`H\s+3\s+tools/call\s+echo\s+ok`)
	tm.keys("i")
	tm.waitRe(`opentelemetry\s+→ http://127\.0\.0\.1:\d+/v1/traces · \d+ spans sent · 0 dropped`)
	tm.keys("Escape")
	// The panel's own lines say "disconnected" too: wait for it to close,
	// or the q below reaches it with the Escape as alt+q.
	tm.waitUntil("the info panel to close", func(s string) bool { return !strings.Contains(s, "Session info") })
	h.in.Close() // the host goes: the proxy ends, and its session with it
	tm.waitRe(`disconnected`)
	tm.keys("q")
	tm.waitFor("EXITED 0")
	collectorHasExport(t, col, dir, env)
}

// mcpscope open --otlp: a replay's live session sends its spans, as the
// export of its own journal writes them (the recording's spans are the
// export's to write, not sent again).
func TestE2EOpenOTLP(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: skipped in -short mode")
	}
	col := peers.StartCollector(t)
	dir := t.TempDir()
	env := attachEnv(t, dir)
	path := filepath.Join(dir, "session.jsonl")
	rec := exec.Command(binary(t), "call", "echo", "message=recorded-hello", "--journal", path)
	rec.Env = env
	if out, err := rec.CombinedOutput(); err != nil || !strings.Contains(string(out), "recorded-hello") {
		t.Fatalf("record: %v\n%s", err, out)
	}
	tm := pane(t, dir, env, 120, 40, "open", path, "--otlp", col.Endpoint)
	tm.waitRe(`recording: offline · session\.jsonl`, `3\s+tools/call\s+echo\s+ok`)
	tm.selectReq("tools/call")
	tm.keys("r")
	tm.waitFor("yes, start it and replay")
	tm.keys("j", "Enter")
	tm.waitRe(`replayed call 3 as \d+ — in a live session`, `tools/call\s+echo\s+ok`)
	tm.keys("q")
	tm.waitFor("EXITED 0")
	j := collectorHasExport(t, col, dir, env)
	if j == path {
		t.Fatalf("the recording's own spans were sent")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "stderr.log")); strings.Contains(string(b), "dropped") {
		t.Fatalf("spans were dropped: %s", b)
	}
}
