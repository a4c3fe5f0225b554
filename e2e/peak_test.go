package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"mcpscope/testkit/peers"
)

// peakEnv names the file a measuring test binary writes its child's peak to.
const peakEnv = "MCPSCOPE_E2E_PEAK"

// TestMain lets this test binary stand between a test and a child whose
// peak memory it measures (see runMeasured).
func TestMain(m *testing.M) {
	if out := os.Getenv(peakEnv); out != "" {
		os.Exit(measure(out, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// measure runs args as a child and writes its peak resident set, in
// bytes, to out; it exits as the child did.
func measure(out string, args []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = os.Environ()
	for i, kv := range cmd.Env {
		if strings.HasPrefix(kv, peakEnv+"=") {
			cmd.Env = append(cmd.Env[:i], cmd.Env[i+1:]...)
			break
		}
	}
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintln(os.Stderr, "measure:", err)
		return 125
	}
	peak := peakRSS(cmd.ProcessState)
	if err := os.WriteFile(out, []byte(strconv.FormatInt(peak, 10)), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		return 125
	}
	return cmd.ProcessState.ExitCode()
}

// runMeasured runs cmd and returns its peak resident set in bytes. The
// child is started by a fresh copy of this test binary, not by the test:
// Linux counts into a child's peak the memory of the process that forked
// it (the mm it shared until exec), and the test process may be large by
// the time it gets here, which would hide the child's own peak.
func runMeasured(t *testing.T, cmd *exec.Cmd) (int64, error) {
	t.Helper()
	peers.POSIX(t, "getrusage for a child's peak memory")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "peak")
	cmd.Args = append([]string{self, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = self
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, peakEnv+"="+out)
	if err := cmd.Run(); err != nil {
		return 0, err
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the measuring copy of the test binary wrote no peak: %v", err)
	}
	peak, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return peak, nil
}
