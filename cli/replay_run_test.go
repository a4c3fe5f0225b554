package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"mcpscope/connect"
	"mcpscope/testkit/testservers"
)

// TestRunReplayStdioNeedsACommand: runReplay, without cobra, refuses to
// replay a stdio recording when no command is given (exit 2, before
// anything connects), and a journal that does not exist is a usage error.
func TestRunReplayStdioNeedsACommand(t *testing.T) {
	bin := testservers.BuildStdio(t)
	path := filepath.Join(t.TempDir(), "echo.jsonl")
	if code, _, errs := runIn(t, t.TempDir(), "call", "echo", "message=hi", "--journal", path, "--", bin); code != exitOK {
		t.Fatalf("recording: exit %d\n%s", code, errs)
	}
	connected := false
	o := &replayOptions{cmdPath: "mcpscope replay", file: path,
		spec: func(string, []string) (connect.Spec, error) { connected = true; return connect.Spec{}, nil }}
	var out, errw bytes.Buffer
	err := runReplay(context.Background(), o, strings.NewReader(""), &out, &errw)
	if exitCode(err) != exitUsage || !strings.Contains(err.Error(), "recorded over stdio") || connected {
		t.Fatalf("a stdio recording without a command: %v (exit %d, spec asked: %v)", err, exitCode(err), connected)
	}
	o.file = filepath.Join(t.TempDir(), "none.jsonl")
	if err := runReplay(context.Background(), o, strings.NewReader(""), &out, &errw); exitCode(err) != exitUsage || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("a missing journal: %v (exit %d)", err, exitCode(err))
	}
}
