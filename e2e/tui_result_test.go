package e2e

import (
	"strings"
	"testing"

	"mcpscope/testkit/peers"
)

// Headless call on a terminal prints the rendering the response tab shows
// (Markdown rendered, structuredContent under its heading); with --json
// it prints the result's JSON. Both in a real tmux pane (a terminal).
func TestE2EHeadlessCallRendersOnATerminal(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + dir + "/state", "XDG_CONFIG_HOME=" + dir + "/config"}
	tm := pane(t, dir, env, 100, 30, "call", "echo", "message=# Title\n\nsome **bold** text", "--no-journal", "--", bin, "demo")
	sc := tm.waitFor("EXITED 0")
	for _, want := range []string{"Title", "some bold text", "structuredContent", `"message": "# Title\n\nsome **bold** text"`} {
		if !strings.Contains(sc, want) {
			t.Errorf("no %q in the rendering on a terminal:\n%s", want, sc)
		}
	}
	if strings.Contains(sc, "# Title\n") || strings.Contains(sc, "some **bold** text\n") {
		t.Errorf("the Markdown is shown as its source:\n%s", sc)
	}
	js := pane(t, dir, env, 100, 30, "call", "echo", "message=# Title", "--json", "--no-journal", "--", bin, "demo")
	sc = js.waitFor("EXITED 0")
	if !strings.Contains(sc, `"content": [`) || !strings.Contains(sc, `"text": "# Title"`) || strings.Contains(sc, "structuredContent\n") {
		t.Errorf("--json on a terminal should print the result's JSON:\n%s", sc)
	}
}

// In a real terminal: the catalog shows the selected tool's schemas and
// annotations beside the list at 120 columns and under it at 80; a call's
// response shows rendered, v switches to the raw JSON and back.
func TestE2ESchemaPaneAndRenderedResponse(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{120, 40}, {80, 24}} {
		tm := startTUI(t, sz.w, sz.h)
		tm.keys("C")
		tm.waitFor("Catalog", "Slow task with progress")
		tm.selectRow("Slow task with progress")
		sc := tm.waitFor("input", "seconds", "annotations", "read-only · idempotent")
		beside := strings.Contains(selectedLine(sc), "│ ")
		if beside != (sz.w >= 110) {
			t.Errorf("%dx%d: schemas beside the list = %v:\n%s", sz.w, sz.h, beside, sc)
		}
		if sz.w < 110 {
			continue
		}
		tm.keys("Escape")
		tm.waitFor("Notifications")
		tm.openTool("Echo", "echo")
		tm.fillField("message", "**loud** hello")
		tm.keys("Enter")
		sc = tm.waitFor("tools/call echo · ok", "rendered result — v shows the raw JSON", "loud hello", "structuredContent")
		if strings.Contains(sc, `"jsonrpc": "2.0"`) {
			t.Errorf("the rendered view shows the envelope:\n%s", sc)
		}
		tm.keys("v")
		tm.waitFor(`"jsonrpc": "2.0"`, `"text": "**loud** hello"`)
		tm.keys("v")
		tm.waitFor("rendered result — v shows the raw JSON")
	}
}

// Against the TypeScript SDK's 2026-07-28 server, whose confirm tool asks
// again (MRTR) until the answer is {confirm: true}: → sets the boolean
// true and the call completes in one retry; esc on the form ends the call
// instead of starting another round (issue 21: → sent false, and esc only
// brought round after round).
func TestE2EConfirmFormTS2026(t *testing.T) {
	dir := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + dir + "/state", "XDG_CONFIG_HOME=" + dir + "/config"}
	cmd, args := peers.TSv2Stdio(t)
	tm := pane(t, dir, env, 120, 40, append([]string{"--no-journal", "--", cmd}, args...)...)
	tm.waitFor("tools/list")
	tm.openTool("confirm", "confirm")
	tm.keys("Enter") // action: its default, deploy
	tm.waitFor("The server asks (elicitation) (MRTR round 1", "confirm*")
	tm.keys("Right")
	tm.waitUntil("confirm set to true", func(s string) bool { return strings.Contains(selectedLine(s), "[true]") })
	tm.keys("Enter")
	sc := tm.waitFor("confirmed: deploy")
	if strings.Contains(sc, "MRTR round 2 of") && strings.Contains(sc, "The server asks") {
		t.Fatalf("a second round was asked:\n%s", sc)
	}
	tm.keys("Escape")
	tm.waitFor("Notifications")
	tm.openTool("confirm", "confirm")
	tm.keys("Enter")
	tm.waitFor("The server asks (elicitation) (MRTR round 1")
	tm.keys("Escape")
	sc = tm.waitFor("elicitation cancelled: the call ends, no retry sent")
	if strings.Contains(sc, "The server asks (elicitation)") {
		t.Fatalf("esc brought another round:\n%s", sc)
	}
}
