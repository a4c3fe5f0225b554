package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcpscope/internal/testservers"
)

// journalOf records a short session with the Go SDK test server through
// the command line (call slow, which lists tools first) and returns the
// journal's path.
func journalOf(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "session.jsonl")
	code, _, errs := runIn(t, t.TempDir(), "call", "slow", "seconds=0.2", "steps=2", "--journal", path, "--", testservers.BuildStdio(t))
	if code != exitOK {
		t.Fatalf("recording: exit %d\n%s", code, errs)
	}
	return path
}

func TestJournalFilter(t *testing.T) {
	path := journalOf(t)
	code, out, errs := run(t, "journal", path)
	if code != exitOK || !strings.Contains(out, "tools/call slow") || !strings.Contains(out, "tools/list") {
		t.Fatalf("journal: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = run(t, "journal", path, "--filter", "~t slow & ~k progress")
	if code != exitOK || !strings.Contains(out, "tools/call slow") || strings.Contains(out, "tools/list") ||
		!strings.Contains(out, "in message       2") || !strings.Contains(out, "filter   ~t slow & ~k progress") {
		t.Fatalf("journal --filter: exit %d\n%s", code, out)
	}
	code, _, errs = run(t, "journal", path, "--filter", "~t slow & (~k progress")
	if code != exitUsage || !strings.Contains(errs, "column 11") || !strings.Contains(errs, "\n"+strings.Repeat(" ", 2+10)+"^") {
		t.Fatalf("a filter that does not parse: exit %d, want the column and a caret under it:\n%s", code, errs)
	}
}

func TestExportCommand(t *testing.T) {
	path := journalOf(t)
	orig, _ := os.ReadFile(path)
	code, out, errs := run(t, "export", path)
	if code != exitOK || out != string(orig) {
		t.Fatalf("export (jsonl): exit %d, %d bytes for a %d-byte journal\n%s", code, len(out), len(orig), errs)
	}
	file := filepath.Join(t.TempDir(), "trace.json")
	code, _, errs = run(t, "export", path, "--format", "otlp", "-o", file, "--filter", "~m tools/call")
	b, _ := os.ReadFile(file)
	if st, err := os.Stat(file); code != exitOK || err != nil || st.Mode().Perm() != 0o600 || strings.Count(string(b), `"spanId"`) != 1 {
		t.Fatalf("export --format otlp -o: exit %d, %s\n%.300s", code, errs, b)
	}
	if code, _, errs = run(t, "export", path, "--format", "har"); code != exitUsage || !strings.Contains(errs, "stdio") {
		t.Fatalf("HAR of a stdio session: exit %d\n%s", code, errs)
	}
	if code, _, errs = run(t, "export", path, "--format", "pcap"); code != exitUsage || !strings.Contains(errs, "har, jsonl, otlp") {
		t.Fatalf("unknown format: exit %d\n%s", code, errs)
	}
}
