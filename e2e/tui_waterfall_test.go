package e2e

import (
	"regexp"
	"strings"
	"testing"
)

// TestE2EWaterfall runs the real binary on the demo server in a 120×40
// tmux pane: a multi-round call (ask: input_required, the person answers,
// round 2) and a call with progress (slow), then the waterfall (w) shows
// them on one time axis — the person's wait drawn apart, round 2 marked,
// progress steps marked, the running call growing until it ends — zooms,
// fits, opens the multi-round call's detail and closes. Every step waits
// for text on the captured screen.
func TestE2EWaterfall(t *testing.T) {
	tm := startTUI(t, 120, 40)

	// A multi-round call: the server asks, the person answers, round 2.
	tm.openTool("Ask the user (elicitation)", "ask")
	tm.keys("Enter")
	tm.waitFor("The server asks (elicitation) (MRTR round 1 of call", "Your name*")
	tm.fillField("Your name", "Ada")
	tm.keys("Enter")
	tm.waitRe(`tools/call ask · ok`) // the call landed on its detail
	tm.keys("Escape")
	tm.waitFor("Notifications") // the panes again (a key right after Escape would read as alt+key)
	tm.waitRe(`↳ round 2 of #\d+\s+ok`)

	// A call with progress, still running when the waterfall opens.
	tm.openTool("Slow task with progress", "slow")
	tm.keys("C-u")
	tm.text("3") // seconds: long enough to be running when the waterfall opens
	tm.keys("Tab", "C-u")
	tm.text("4") // steps
	tm.keys("Enter")
	tm.waitRe(`call \d+ · tools/call slow · `)
	tm.keys("Escape")
	tm.waitRe(`slow\s+streaming`)

	tm.keys("w")
	tm.waitRe(`Waterfall · \d+ calls · \d+ms per column · fit`, `tools/call slow +[^\n]*… pending`)
	// The ask row is one row: its first round, the person's answer (┄),
	// round 2 (2), then ok. Its retry has no row of its own.
	s := tm.waitRe(`#\d+ tools/call ask +[^\n]*┄+2[^\n]*✓ ok`)
	if n := strings.Count(s, "tools/call ask"); n != 1 {
		t.Fatalf("the multi-round call should be one row, found %d:\n%s", n, s)
	}
	// The slow call's bar grows and ends with its progress steps marked.
	tm.waitRe(`tools/call slow +[^\n]*•[^\n]*✓ ok`)

	// Zoom in, then fit again.
	tm.keys("+")
	tm.waitRe(`Waterfall · \d+ calls · \d+ms per column · follows now`)
	tm.keys("0")
	tm.waitRe(`per column · fit`)

	// Enter on the multi-round row opens the round it came to.
	tm.keys("k")
	s = tm.waitRe(`▸#\d+ tools/call ask`)
	if !regexp.MustCompile(`waiting on you \d+(ms|\.\ds)`).MatchString(s) {
		t.Fatalf("the selected row's line should give the person's share:\n%s", s)
	}
	tm.keys("Enter")
	tm.waitRe(`call \d+ · tools/call ask · ok · [^\n]*MRTR round 2 of #\d+`)
	tm.keys("Escape")
	tm.waitFor("Waterfall ·")
	tm.keys("w")
	tm.waitFor("Requests", "Notifications")
	tm.keys("q")
}
