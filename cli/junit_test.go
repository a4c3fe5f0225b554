package cli

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcpscope/artifact/diff"
	"mcpscope/artifact/replay"
	"mcpscope/internal/testservers"
)

// readJUnit parses a JUnit file back, as a CI system would.
func readJUnit(t *testing.T, path string) junitSuites {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var j junitSuites
	if err := xml.Unmarshal(b, &j); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b)
	}
	if j.XMLName.Local != "testsuites" || len(j.Suites) != 1 || len(j.Suites[0].Cases) != j.Tests {
		t.Fatalf("shape: %+v", j)
	}
	return j
}

// TestDiffJUnit: diff --junit writes a test case per tool, resource,
// template and prompt, failing those that changed, with the change.
func TestDiffJUnit(t *testing.T) {
	bin := testservers.BuildStdio(t)
	dir := t.TempDir()
	base := filepath.Join(dir, "catalog.json")
	if code, _, errs := run(t, "diff", "--baseline", base, "--", bin); code != exitOK {
		t.Fatalf("writing the baseline: exit %d\n%s", code, errs)
	}
	// The baseline had a tool the demo lacks now (named with a terminal
	// escape), and echo's input was looser.
	var snap map[string]any
	b, _ := os.ReadFile(base)
	if err := json.Unmarshal(b, &snap); err != nil {
		t.Fatal(err)
	}
	tools := snap["tools"].([]any)
	items := 0
	for _, k := range []string{"tools", "resources", "resourceTemplates", "prompts"} {
		if l, ok := snap[k].([]any); ok {
			items += len(l)
		}
	}
	snap["tools"] = append(tools, map[string]any{"name": "gone\x1b[31m", "inputSchema": map[string]any{"type": "object"}})
	b, _ = json.Marshal(snap)
	if err := os.WriteFile(base, b, 0o644); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "junit.xml")
	code, out, errs := run(t, "diff", "--baseline", base, "--junit", report, "--", bin)
	if code != exitServerErr {
		t.Fatalf("drift: exit %d\n%s\n%s", code, out, errs)
	}
	j := readJUnit(t, report)
	if j.Tests != items+1 || j.Failures != 1 || j.Suites[0].Failures != 1 {
		t.Fatalf("tests %d (want %d), failures %d", j.Tests, items+1, j.Failures)
	}
	for _, c := range j.Suites[0].Cases {
		if c.Failure == nil {
			continue
		}
		if c.Classname != "mcpscope.diff.tool" || strings.ContainsRune(c.Name+c.Failure.Message+c.Failure.Text, 0x1b) ||
			!strings.Contains(c.Failure.Message, "removed tool gone") || c.Failure.Type != "breaking" {
			t.Fatalf("failure: %+v %+v", c, c.Failure)
		}
	}
}

// TestReplayJUnit: replay --junit writes a case per replayed call: the
// same pass, a skipped one is skipped, one that differs fails with its
// differences, server text sanitised.
func TestReplayJUnit(t *testing.T) {
	sum := &replay.Summary{Results: []replay.Result{
		{Seq: 1, Method: "initialize", Status: "skipped", Reason: "the handshake"},
		{Seq: 3, Method: "tools/call", Name: "echo", Status: "same"},
		{Seq: 5, Method: "tools/call", Name: "add\x1b]0;x\x07", Status: "differs", Differences: []replay.Difference{
			{What: "error", Detail: "now -32602: bad\x1b[2J input"},
			{What: "result", Fields: []diff.Field{{Path: "/content/0/text", Op: "changed", Before: []byte(`"3"`), After: []byte(`"4"`)}}},
		}},
	}}
	path := filepath.Join(t.TempDir(), "replay.xml")
	if err := writeJUnit(path, replayJUnit(sum)); err != nil {
		t.Fatal(err)
	}
	j := readJUnit(t, path)
	if j.Tests != 3 || j.Failures != 1 || j.Skipped != 1 {
		t.Fatalf("counts: %+v", j)
	}
	f := j.Suites[0].Cases[2].Failure
	if f == nil || !strings.Contains(f.Message, "error: now -32602: bad") ||
		!strings.Contains(f.Text, `result: ~ /content/0/text "3" → "4"`) ||
		strings.ContainsAny(j.Suites[0].Cases[2].Name+f.Message+f.Text, "\x1b\x07") {
		t.Fatalf("failure: %+v", f)
	}
	if j.Suites[0].Cases[0].Skipped == nil || j.Suites[0].Cases[1].Failure != nil {
		t.Fatalf("cases: %+v", j.Suites[0].Cases)
	}
	if err := writeJUnit(filepath.Join(t.TempDir(), "no", "such", "dir.xml"), replayJUnit(sum)); err == nil ||
		!strings.Contains(err.Error(), "--junit") {
		t.Fatalf("an unwritable path: %v", err)
	}
}
