package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"mcpscope/artifact/diff"
)

// TestRunDiffSnapshots: runDiff, without cobra, compares two snapshot
// files, prints the changed tool, and returns the drift (exit 1); the same
// file on both sides is no drift.
func TestRunDiffSnapshots(t *testing.T) {
	dir := t.TempDir()
	snap := func(name, description string) string {
		path := filepath.Join(dir, name)
		s := &diff.Snapshot{Format: diff.Format, Source: name,
			Tools: []json.RawMessage{json.RawMessage(`{"name":"echo","description":"` + description + `","inputSchema":{"type":"object"}}`)}}
		if err := writeBaseline(path, s); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a, b := snap("a.json", "Returns the message"), snap("b.json", "Returns it shouted")
	var out, errw bytes.Buffer
	err := runDiff(context.Background(), &diffOptions{cmdPath: "mcpscope diff", own: []string{a, b}}, &out, &errw)
	var drift *driftError
	if !errors.As(err, &drift) || drift.changes != 1 || exitCode(err) != exitServerErr || !strings.Contains(out.String(), "~ tool echo") {
		t.Fatalf("two snapshots that differ: %v (exit %d)\n%s", err, exitCode(err), out.String())
	}
	out.Reset()
	if err := runDiff(context.Background(), &diffOptions{cmdPath: "mcpscope diff", own: []string{a, a}}, &out, &errw); err != nil {
		t.Fatalf("a snapshot against itself: %v\n%s", err, out.String())
	}
	err = runDiff(context.Background(), &diffOptions{cmdPath: "mcpscope diff", own: []string{a, filepath.Join(dir, "none.json")}}, &out, &errw)
	if exitCode(err) != exitUsage {
		t.Fatalf("a missing side: %v (exit %d), want a usage error", err, exitCode(err))
	}
}
