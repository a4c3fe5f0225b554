package cli

import (
	"os/exec"
	"strings"
	"testing"
)

// On a terminal, the progress line is erased before the result is printed
// (it was left in front of it: "slow: 1/2 step 1/2slow: finished…"). The
// call runs under script(1), whose pty is stdout and stderr both.
func TestProgressErasedBeforeResult(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("no script(1) to give the call a terminal")
	}
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
