package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"mcpscope/testkit/peers"
	"mcpscope/testkit/testservers"
)

func TestReplayCommand(t *testing.T) {
	bin := testservers.BuildStdio(t)
	path := filepath.Join(t.TempDir(), "echo.jsonl")
	if code, _, errs := runIn(t, t.TempDir(), "call", "echo", "message=hi", "--journal", path, "--", bin); code != exitOK {
		t.Fatalf("recording: exit %d\n%s", code, errs)
	}
	code, out, errs := run(t, "replay", path, "--", bin)
	if code != exitOK || !strings.Contains(out, "tools/call echo") || !strings.Contains(out, "same") ||
		!strings.Contains(out, "0 differ") {
		t.Fatalf("replay against the same server: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = run(t, "replay", path, "--json", "--no-timing", "--", bin)
	var sum struct{ Same, Differ, Skipped int }
	if err := json.Unmarshal([]byte(out), &sum); code != exitOK || err != nil || sum.Same != 2 || sum.Skipped != 1 {
		t.Fatalf("--json: exit %d, %v %+v\n%s", code, err, sum, out)
	}
	if code, _, errs = run(t, "replay", path); code != exitUsage || !strings.Contains(errs, "recorded over stdio") ||
		!strings.Contains(errs, "never runs a command") {
		t.Fatalf("a stdio recording without a target: exit %d\n%s", code, errs)
	}
	if code, _, _ = run(t, "replay"); code != exitUsage {
		t.Fatalf("no journal: exit %d", code)
	}
}

// TestReplayDeclaresRecordedCapabilities: replay declares what the
// recorded client declared. server-everything lists more tools to a client
// that declares elicitation or sampling; a recording made declaring only
// roots replays against the same server with no difference, and says what
// it declared.
func TestReplayDeclaresRecordedCapabilities(t *testing.T) {
	node, args := peers.EverythingStdio(t)
	target := append([]string{"--", node}, args...)
	path := filepath.Join(t.TempDir(), "everything.jsonl")
	if code, _, errs := runIn(t, t.TempDir(), append([]string{"call", "echo", "message=hi", "--journal", path}, target...)...); code != exitOK {
		t.Fatalf("recording: exit %d\n%s", code, errs)
	}
	// An answer to roots/list (as a recording whose server asked for roots
	// holds) once made replay declare elicitation and sampling as well.
	code, out, errs := run(t, append([]string{"replay", path, "--no-timing", "--answer", `roots/list={"roots":[]}`}, target...)...)
	if code != exitOK || !strings.Contains(out, "declared roots (as the recorded client did)") || !strings.Contains(out, " 0 differ") {
		t.Fatalf("replay against the server it recorded: exit %d\n%s\n%s", code, out, errs)
	}
}
