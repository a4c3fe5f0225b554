package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpscope/testkit/testservers"
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

// TestRecordFilter: record --filter prints only the frames the filter
// matches, judged as each frame arrives.
func TestRecordFilter(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	server := testservers.BuildStdio(t)
	// record runs until the server ends: it is stopped once it printed a
	// whole response (was: after 3 s, which a loaded machine spent before
	// the first one).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := &stopAtLine{want: []byte(`\"result\"`), stop: cancel}
	var errb bytes.Buffer
	code := Run(ctx, []string{"record", "--filter", "~k response", "--no-journal", "--", server}, out, &errb)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if code != exitOK || len(lines) == 0 || lines[0] == "" {
		t.Fatalf("exit %d, %d lines\n%s\n%s", code, len(lines), out.String(), errb.String())
	}
	for _, l := range lines {
		if !strings.Contains(l, `"dir":"in"`) || !strings.Contains(l, `\"result\"`) {
			t.Errorf("record --filter '~k response' printed %s", l)
		}
	}
	if code := Run(context.Background(), []string{"record", "--filter", "~x", "--no-journal", "--", "/no/such/server"}, out, &errb); code != exitUsage {
		t.Errorf("a bad filter: exit %d, want a usage error before anything starts", code)
	}
}

// stopAtLine is an output that calls stop once a whole line containing
// want was written to it.
type stopAtLine struct {
	mu   sync.Mutex
	b    bytes.Buffer
	want []byte
	stop func()
}

func (w *stopAtLine) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if i := bytes.Index(w.b.Bytes(), w.want); i >= 0 && bytes.IndexByte(w.b.Bytes()[i:], '\n') >= 0 {
		w.stop()
	}
	return len(p), nil
}

func (w *stopAtLine) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
