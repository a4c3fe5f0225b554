package cli

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcpscope/internal/loopback"
	"mcpscope/testkit/testservers"
)

// TestBenchRowsPrint runs the goal-row sections of mcpscope bench tiny
// and checks that every row prints with its goal and a verdict (the
// figures themselves are the bench's business, not a test's).
func TestBenchRowsPrint(t *testing.T) {
	bin := testservers.BuildMCPScope(t)
	cmd := exec.Command(bin, "bench", "--only", "journal,record,proxy", "--frames", "2000", "--pings", "20", "--rounds", "1")
	cmd.Env = append(cmd.Environ(), "XDG_STATE_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	text := string(out)
	// Each proxy row's yardstick, measured in the same rounds (bench
	// relay). Its sign is a measurement, not behaviour: since the server
	// runs in a process of its own, 20 pings through the relay can beat
	// 20 straight to it on a loaded machine.
	yardsticks := map[string]*regexp.Regexp{
		"proxy, 20 sequential pings":                           regexp.MustCompile(`a bare TCP relay [+-]\d+\.\d µs \(pairs .*a Go HTTP relay without a journal [+-]\d+\.\d µs`),
		"proxy CPU a request":                                  regexp.MustCompile(`a Go HTTP relay without a journal \d+ µs`),
		"proxy throughput":                                     regexp.MustCompile(`the relay writing a file \d+\.\d\d×, the relay journaling \d+\.\d\d×\)`),
		"proxy CPU, the same flood":                            regexp.MustCompile(`the relay writing a file +-?\d+\.\d\d s`),
		"proxy CPU over a relay journaling it":                 regexp.MustCompile(`the relay journaling +-?\d+\.\d\d s`),
		"proxy CPU a request over an HTTP relay journaling it": regexp.MustCompile(`the relay journaling \d+ µs: +\d+\.\d\d×`),
		// The read-back rows' floor: the loop that only finds the strings.
		"Go line loop": regexp.MustCompile(`a loop that only finds the strings +\d+\.\d\d s: +\d+\.\d % of its speed \(Go line loop: \d+\.\d %\)`),
	}
	for _, row := range []string{"journal, HTTP", "journal, stdio", "Go line loop", "export --format har", "export --format otlp",
		"export --format jsonl", "journal --filter '~m tools/call'", "diff HTTP stdio", "record of a 2000-notification flood",
		"proxy, 20 sequential pings", "proxy's own share, the same pings", "proxy CPU a request", "proxy throughput", "proxy CPU, the same flood",
		"proxy CPU over a relay journaling it", "proxy CPU a request over an HTTP relay journaling it"} {
		line := ""
		for _, l := range strings.Split(text, "\n") {
			if strings.Contains(l, row) {
				line = l
				break
			}
		}
		if line == "" {
			t.Fatalf("no row %q in:\n%s", row, text)
		}
		if strings.Contains(line, "failed:") {
			t.Fatalf("row %q failed: %s", row, line)
		}
		if strings.HasPrefix(row, "record") || (strings.HasPrefix(row, "proxy") && !strings.HasPrefix(row, "proxy CPU a request")) {
			if !strings.Contains(line, "(pairs ") {
				t.Fatalf("row %q lacks its pairs' spread: %s", row, line)
			}
		}
		if yard := yardsticks[row]; yard != nil && !yard.MatchString(line) {
			t.Fatalf("row %q lacks its yardstick %q: %s", row, yard, line)
		}
		if !strings.Contains(line, "skipped:") && !strings.Contains(line, "goal ") ||
			!strings.HasSuffix(line, ": met") && !strings.HasSuffix(line, ": NOT met") && !strings.Contains(line, "skipped:") {
			t.Fatalf("row %q lacks its goal and verdict: %s", row, line)
		}
	}
}

// TestBenchStartupRowsPrint: the start-up section builds both baselines
// (hello cobra, and the dependencies' floor from the packages the binary
// links) and prints each row with its figure, goal and verdict.
func TestBenchStartupRowsPrint(t *testing.T) {
	bin := testservers.BuildMCPScope(t)
	cmd := exec.Command(bin, "bench", "--only", "startup", "--starts", "2")
	cmd.Env = append(cmd.Environ(), "XDG_STATE_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`--version CPU \(user\+sys\) +\d+\.\d\d ms CPU.*hello cobra \d+\.\d\d ms CPU.*: \d+\.\d\d× +goal ≤ 1\.5× hello cobra: (met|NOT met)\n`),
		regexp.MustCompile(`--version CPU over its dependencies +\d+\.\d\d ms CPU; the dependencies' floor .* \d+\.\d\d ms CPU \(\d+\.\d\d× hello cobra\): \d+\.\d\d× +goal ≤ \d\.\d× the dependencies' floor: (met|NOT met)\n`),
		regexp.MustCompile(`binary size +\d+\.\d MB .* +goal ≤ 30 MB: (met|NOT met)\n`),
	} {
		if !want.Match(out) {
			t.Errorf("no row matching %s in:\n%s", want, out)
		}
	}
}

func TestBenchRejectsBadSizes(t *testing.T) {
	var out, errb strings.Builder
	if code := Main([]string{"bench", "--only", "journal", "--frames", "0"}, &out, &errb); code != 2 {
		t.Fatalf("exit %d, want 2 (usage): %s", code, errb.String())
	}
}

// TestBenchListenersStopOnSIGTERM checks that the proxy rows' children
// that listen (the ping server and the bare relay) end on SIGTERM, which
// is how the bench stops them: one that served on held every bench run up
// for the wait before its SIGKILL.
func TestBenchListenersStopOnSIGTERM(t *testing.T) {
	bin := testservers.BuildMCPScope(t)
	for _, c := range []struct {
		name  string
		after []string // after --listen ADDR
	}{{"pong", nil}, {"relay", []string{"127.0.0.1:9"}}, {"relay", []string{"--http", "http://127.0.0.1:9"}}} {
		t.Run(c.name, func(t *testing.T) {
			addr, err := loopback.FreeAddr()
			if err != nil {
				t.Fatal(err)
			}
			args := append([]string{"bench", c.name, "--listen", addr}, c.after...)
			cmd := exec.Command(bin, args...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			var werr error
			go func() { werr = cmd.Wait(); close(exited) }()
			t.Cleanup(func() { cmd.Process.Kill(); <-exited })
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := loopback.Wait(ctx, addr, cmd.Process.Pid, exited); err != nil {
				t.Fatalf("%v did not listen: %v", args, err)
			}
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
				if werr != nil {
					t.Fatalf("%v ended with %v on SIGTERM, want exit 0", args, werr)
				}
			case <-ctx.Done():
				t.Fatalf("%v still running a minute after SIGTERM", args)
			}
		})
	}
}
