package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"mcpscope/testkit/otlptest"
	"mcpscope/testkit/peers"
	"mcpscope/testkit/testservers"
)

// liveMatchesExport checks that what the collector received is what
// export --format otlp writes for journal, and that it holds a span
// named want.
func liveMatchesExport(t *testing.T, dir string, col *peers.Collector, journal, want string) {
	t.Helper()
	got := otlptest.Read(t, col.Received(t))
	code, exported, errs := runIn(t, dir, "export", "--format", "otlp", journal)
	if code != exitOK {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	if d := otlptest.Diff(got, otlptest.Read(t, []byte(exported))); d != "" {
		t.Fatalf("the collector received other spans than the export writes:\n%s", d)
	}
	var names []string
	for _, s := range got.Spans {
		if s.Name == want {
			return
		}
		names = append(names, s.Name)
	}
	t.Fatalf("no %s span among %q", want, names)
}

// TestOTLPLiveClient: the conformance client with --otlp sends the
// collector its session's spans, as export writes them.
func TestOTLPLiveClient(t *testing.T) {
	col := peers.StartCollector(t)
	url := testservers.StartHTTP(t, testservers.HTTPOpts{})
	dir := t.TempDir()
	journal := filepath.Join(dir, "client.jsonl")
	t.Setenv("MCP_CONFORMANCE_SCENARIO", "")
	code, out, errs := runIn(t, dir, "client", "initialize", "--otlp", col.Endpoint, "--journal", journal, url)
	if code != exitOK {
		t.Fatalf("client: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	liveMatchesExport(t, dir, col, journal, "tools/list")
}

var handleRE = regexp.MustCompile(`(?m)mcpscope rejoin (?:--state \S+ )?(\S+)$`)

// TestOTLPLiveRejoin: rejoin with --otlp sends the collector the rejoined
// session's spans (a task's: tasks/get, tasks/result), as export writes
// them for its journal. (A call rejoined from its SSE stream has no request
// in the rejoin's journal, so neither the export nor the live exporter has
// a span for it.)
func TestOTLPLiveRejoin(t *testing.T) {
	col := peers.StartCollector(t)
	url := peers.StartEverythingHTTP(t, "streamableHttp")
	dir := t.TempDir()
	code, out, errs := runIn(t, dir, "call", "simulate-research-query", "topic=tides", "--task", "--detach", "--no-journal", url)
	m := handleRE.FindStringSubmatch(out + errs)
	if code != exitOK || m == nil {
		t.Fatalf("call --detach: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	journal := filepath.Join(dir, "rejoin.jsonl")
	code, out, errs = runIn(t, dir, "rejoin", m[1], "--otlp", col.Endpoint, "--journal", journal)
	if code != exitOK || !strings.Contains(out, "tides") {
		t.Fatalf("rejoin %s: exit %d\nstdout: %s\nstderr: %s", m[1], code, out, errs)
	}
	liveMatchesExport(t, dir, col, journal, "tasks/result")
}
