package e2e

import (
	"strings"
	"testing"
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
