package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcpscope/testkit/testservers"
)

// TestDiffBaseline: --baseline writes a snapshot when there is none,
// passes while the server is unchanged, fails (exit 1) on drift with the
// change shown, and --update rewrites it.
func TestDiffBaseline(t *testing.T) {
	bin := testservers.BuildStdio(t)
	file := filepath.Join(t.TempDir(), "catalog.json")
	code, out, errs := run(t, "diff", "--baseline", file, "--", bin)
	if code != exitOK || !strings.Contains(out, "wrote the baseline") {
		t.Fatalf("first run: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs = run(t, "diff", "--baseline", file, "--", bin); code != exitOK || !strings.Contains(out, "no drift") {
		t.Fatalf("unchanged: exit %d\n%s\n%s", code, out, errs)
	}
	b, _ := os.ReadFile(file)
	os.WriteFile(file, []byte(strings.Replace(string(b), "Returns `message` unchanged", "Returns the message", 1)), 0o644)
	code, out, errs = run(t, "diff", "--baseline", file, "--", bin)
	if code != exitServerErr || !strings.Contains(out, "~ tool echo") || !strings.Contains(out, "/description") ||
		!strings.Contains(errs, "the catalogs differ: 1 change(s)") {
		t.Fatalf("drift: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = run(t, "diff", "--baseline", file, "--json", "--", bin)
	var r struct {
		Drift  bool `json:"drift"`
		Report struct {
			Changes []struct{ Kind, Name, Op string }
		} `json:"report"`
	}
	if err := json.Unmarshal([]byte(out), &r); code != exitServerErr || err != nil || !r.Drift || len(r.Report.Changes) != 1 {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, out)
	}
	if code, _, errs = run(t, "diff", "--baseline", file, "--update", "--", bin); code != exitOK || !strings.Contains(errs, "rewrote") {
		t.Fatalf("--update: exit %d\n%s", code, errs)
	}
	if code, out, _ = run(t, "diff", "--baseline", file, "--", bin); code != exitOK {
		t.Fatalf("after --update: exit %d\n%s", code, out)
	}
}

func TestDiffJournals(t *testing.T) {
	a, b := journalOf(t), journalOf(t)
	if code, out, errs := run(t, "diff", a, b); code != exitOK || !strings.Contains(out, "no drift") || !strings.Contains(out, "resources not recorded") {
		t.Fatalf("two recordings of one server: exit %d\n%s\n%s", code, out, errs)
	}
	for _, c := range []struct {
		argv []string
		says string
	}{
		{[]string{"diff", a, b, "c.jsonl"}, "diff compares two sides, got 3"},
		{[]string{"diff", "--update", a, b}, "--update rewrites the --baseline file: give --baseline FILE"},
		{[]string{"diff", "--baseline", "x.json", a, b}, "with --baseline, diff takes one side"},
		{[]string{"diff", a, "127.0.0.1:1/mcp"}, "has no scheme"},
	} {
		if code, _, errs := run(t, c.argv...); code != exitUsage || !strings.Contains(errs, c.says) {
			t.Errorf("%v: exit %d, want a usage error saying %q\n%s", c.argv, code, c.says, errs)
		}
	}
}

// TestDiffTwoCommands: "diff -- A -- B" would run "A -- B" as one command
// against the demo; it is refused (exit 2) before anything starts, with
// the two command lines that diff the commands.
func TestDiffTwoCommands(t *testing.T) {
	for _, argv := range [][]string{
		{"diff", "--", "node", "a.js", "--", "node", "b c.js"},
		{"diff", "--baseline", filepath.Join(t.TempDir(), "x.json"), "--", "node", "a.js", "--", "node", "b c.js"},
	} {
		code, out, errs := run(t, argv...)
		if code != exitUsage || out != "" || !strings.Contains(errs, "this line has a second --") ||
			!strings.Contains(errs, "mcpscope diff --baseline a.json --update -- node a.js\n") ||
			!strings.Contains(errs, "mcpscope diff a.json -- node 'b c.js'\n") {
			t.Errorf("%q: exit %d\n%s\n%s", argv, code, out, errs)
		}
	}
}
