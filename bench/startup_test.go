package bench

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestStartupRow: the --version row is met up to 1.5× the baseline's CPU
// and not past it, and without a baseline shows mcpscope's figure alone.
func TestStartupRow(t *testing.T) {
	ms := time.Millisecond
	base := Start{CPU: 4 * ms, Wall: 5 * ms, Runs: 21}
	r := startupRow(Start{CPU: 6 * ms, Wall: 8 * ms, Runs: 21}, base, nil)
	if !r.Met || r.Skip != "" || r.Goal != "≤ 1.5× hello cobra" {
		t.Errorf("6 ms against 4 ms (1.5×): %+v", r)
	}
	for _, want := range []string{"6.00 ms CPU", "8.00 ms wall (median of 21)", "hello cobra 4.00 ms CPU, 5.00 ms wall: 1.50×"} {
		if !strings.Contains(r.Figure, want) {
			t.Errorf("figure %q lacks %q", r.Figure, want)
		}
	}
	if r := startupRow(Start{CPU: 6*ms + time.Microsecond, Runs: 21}, base, nil); r.Met {
		t.Errorf("over 1.5× is met: %+v", r)
	}
	r = startupRow(Start{CPU: 6 * ms, Wall: 8 * ms, Runs: 21}, Start{}, errNoGo)
	if r.Skip == "" || !strings.Contains(r.Skip, "needs Go") || !strings.Contains(r.Skip, "6.00 ms CPU") {
		t.Errorf("no baseline: %+v", r)
	}
	if r := startupRow(Start{CPU: 6 * ms}, Start{}, nil); r.Skip == "" || r.Met {
		t.Errorf("a baseline of 0 ms is judged: %+v", r)
	}
	if r := startupRow(Start{}, Start{}, errors.New("build failed")); !strings.Contains(r.Skip, "build failed") {
		t.Errorf("the build's error is not said: %+v", r)
	}
}

// TestSizeRow: the size row is met up to 30 MB (decimal) and not past it.
func TestSizeRow(t *testing.T) {
	r := sizeRow(BinaryGoalBytes, 3_700_000)
	if !r.Met || r.Goal != "≤ 30 MB" || !strings.Contains(r.Figure, "30.0 MB (30000000 bytes, this binary as built); hello cobra 3.7 MB") {
		t.Errorf("at the goal: %+v", r)
	}
	if r := sizeRow(BinaryGoalBytes+1, 0); r.Met || strings.Contains(r.Figure, "hello") {
		t.Errorf("one byte over, no baseline: %+v", r)
	}
}
