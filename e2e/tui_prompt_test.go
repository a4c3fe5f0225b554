package e2e

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// On a terminal, headless prompt prints the prompt's messages rendered
// (each under its role) and --json the result's JSON; headless call shows
// a structuredContent beside the tool's outputSchema at 120 columns.
func TestE2EHeadlessPromptAndSchemaRendered(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + dir + "/state", "XDG_CONFIG_HOME=" + dir + "/config"}
	tm := pane(t, dir, env, 120, 30, "prompt", "greeting", "name=Ada", "--no-journal", "--", bin, "demo")
	sc := tm.waitFor("EXITED 0")
	for _, want := range []string{"Greet Ada", "▸ user", "Please greet Ada in a casual style, in one sentence."} {
		if !strings.Contains(sc, want) {
			t.Errorf("no %q in the prompt's rendering on a terminal:\n%s", want, sc)
		}
	}
	if strings.Contains(sc, `"role"`) {
		t.Errorf("the prompt shows as JSON on a terminal:\n%s", sc)
	}
	js := pane(t, dir, env, 120, 30, "prompt", "greeting", "name=Ada", "--json", "--no-journal", "--", bin, "demo")
	if sc := js.waitFor("EXITED 0"); !strings.Contains(sc, `"role": "user"`) || strings.Contains(sc, "▸ user") {
		t.Errorf("--json on a terminal should print the prompt's JSON:\n%s", sc)
	}
	call := pane(t, dir, env, 120, 30, "call", "echo", "message=beside", "--no-journal", "--", bin, "demo")
	sc = call.waitFor("EXITED 0")
	if !regexp.MustCompile(`structuredContent\s+│ outputSchema \(the tool's\)`).MatchString(sc) ||
		!regexp.MustCompile(`"message": "beside"\s+│ `).MatchString(sc) || !strings.Contains(sc, "✓ keeps to the tool's outputSchema") {
		t.Errorf("the call's structuredContent is not beside its outputSchema at 120 columns:\n%s", sc)
	}
}

// A recorded prompts/get opens with its response rendered like a tool
// result: the description, the message under its role, as text.
func TestE2EPromptResponseRendered(t *testing.T) {
	dir := t.TempDir()
	env := attachEnv(t, dir)
	path := filepath.Join(dir, "prompt.jsonl")
	rec := exec.Command(binary(t), "prompt", "greeting", "name=Ada", "--journal", path)
	rec.Env = env
	if out, err := rec.CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, out)
	}
	tm := pane(t, dir, env, 120, 40, "open", path)
	tm.waitRe(`prompts/get\s+greeting\s+ok`)
	tm.selectReq("prompts/get")
	tm.keys("Enter")
	tm.waitFor("request │ response")
	tm.keys("Tab")
	sc := tm.waitFor("rendered result — v shows the raw JSON", "Greet Ada", "▸ user", "Please greet Ada in a casual style, in one sentence.")
	if strings.Contains(sc, `"role"`) {
		t.Errorf("the rendered prompt shows its JSON:\n%s", sc)
	}
	tm.keys("v")
	tm.waitFor(`"role": "user"`)
	tm.keys("q")
}
