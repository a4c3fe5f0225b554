package cli

import (
	"os/exec"
	"strings"
	"testing"

	"mcpscope/testkit/peers"
)

// On a terminal, the progress line is erased before the result is printed
// (it was left in front of it: "slow: 1/2 step 1/2slow: finished…"). The
// call runs under script(1), whose pty is stdout and stderr both.
func TestProgressErasedBeforeResult(t *testing.T) {
	script := peers.Tool(t, "script") // a skip, or under MCPSCOPE_REQUIRE_PEERS=1 a failure, when missing
	cmd := exec.Command(script, "-qec", "mcpscope call slow seconds=2 steps=4 --no-journal", "/dev/null")
	cmd.Env = append(mcpscopeOnPath(t), "XDG_STATE_HOME="+t.TempDir(), "TERM=xterm")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mcpscope call slow: %v\n%q", err, out)
	}
	s := string(out)
	result := strings.Index(s, "finished")
	lastStep := strings.LastIndex(s[:max(result, 0)], "step ")
	if result < 0 || lastStep < 0 {
		t.Fatalf("no progress line, or no result:\n%q", s)
	}
	if between := s[lastStep:result]; !strings.Contains(between, "\r\x1b[K") {
		t.Errorf("the progress line was not erased before the result: %q", s[max(lastStep-20, 0):])
	}
}

// call --task on a server without tasks says that the call runs as a plain
// call, and still prints its result.
func TestCallTaskWithoutTasksSaysPlain(t *testing.T) {
	code, out, errb := runT(t, "call", "echo", "message=hi", "--task")
	if code != exitOK || !strings.Contains(out, "hi") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errb)
	}
	if !strings.Contains(errb, "--task: the server declares no tasks capability, so echo runs as a plain call") {
		t.Errorf("stderr does not say the call runs as a plain call:\n%s", errb)
	}
	if _, _, errb := runT(t, "call", "echo", "message=hi"); strings.Contains(errb, "plain call") {
		t.Errorf("without --task, a note about tasks: %s", errb)
	}
}

func TestServerHasTasks(t *testing.T) {
	for caps, want := range map[string]bool{
		`{}`: false, `{"tools":{}}`: false, `{"tasks":null}`: false,
		`{"tasks":{"requests":{"tools":{"call":{}}}}}`:        true,
		`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`: true,
		`{"extensions":{"io.modelcontextprotocol/other":{}}}`: false,
	} {
		if got := serverHasTasks([]byte(caps)); got != want {
			t.Errorf("serverHasTasks(%s) = %v, want %v", caps, got, want)
		}
	}
}

// A legacy elicitation nobody answered ends with the --answer hint, shell
// quoted, as the 2026 path's unanswered input does; with an answer given
// for it, no hint.
func TestLegacyElicitationHint(t *testing.T) {
	t.Setenv(asMain, "1") // the demo server is this binary, run as mcpscope demo
	code, out, errb := run(t, "call", "ask", "--era", "legacy", "--no-journal")
	if code != exitServerErr {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitServerErr, out, errb)
	}
	want := `the server needs an answer to elicitation/create, which headless mcpscope gives only from --answer: --answer 'elicitation/create={"action":"accept","content":{…}}'`
	if !strings.Contains(errb, want) {
		t.Errorf("stderr lacks the --answer hint:\n%s", errb)
	}
	code, out, errb = run(t, "call", "ask", "--era", "legacy", "--no-journal", "--answer", `elicitation/create={"action":"decline"}`)
	if strings.Contains(errb, "--answer") {
		t.Errorf("with an answer given: exit %d, a hint anyway:\n%s\n%s", code, out, errb)
	}
}
