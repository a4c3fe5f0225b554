// Package shelltest pastes command lines mcpscope printed into a real
// shell, for tests that check what the line would run.
package shelltest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"mcpscope/testkit/peers"
)

// Canary is the file a hostile word tries to create: Words fails the test
// when it exists after the paste.
const Canary = "pwned"

// Words runs `printf '%s\0' LINE` in sh ("bash", "dash") in dir and returns
// the words LINE reads as. It fails t when the shell rejects the line or
// ran anything in it (a file named Canary appeared in dir). bash is
// required through peers.Tool: missing, the test skips, or fails under
// MCPSCOPE_REQUIRE_PEERS=1.
func Words(t testing.TB, sh, dir, line string) []string {
	t.Helper()
	bin := sh
	if sh == "bash" {
		bin = peers.Tool(t, "bash")
	}
	cmd := exec.Command(bin, "-c", `printf '%s\0' `+line)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s -c \"printf … %s\": %v", sh, line, err)
	}
	if _, err := os.Stat(filepath.Join(dir, Canary)); err == nil {
		t.Fatalf("pasting %s into %s ran something (%s exists)", line, sh, Canary)
	}
	if len(out) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

// Hostile are words a server, a journal or a config file may put in a
// command line mcpscope prints; each tries to run `touch pwned`, to hide
// from or drive the terminal, or to pass as a flag.
var Hostile = []string{
	"k';touch pwned;'", "$(touch pwned)", "`touch pwned`", "a\ntouch pwned", "x\r\ntouch pwned",
	"\x1b]52;c;dG91Y2ggcHduZWQ=\x07", "\x1b[2J", "-rf", "--journal=/tmp/pwned", `it's "quoted" \n`,
	"tab\there", "\u202etxt.exe", "\xff\xfe", "~", "*", "a b", "!!", "#comment", "{a,b}", "\u0085\u009b",
	"\u2028", "",
}
