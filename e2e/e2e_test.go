// Package e2e holds the tests that build the mcpscope binary and run it as a
// person or a host would: in a tmux pane, killed with -9 and rejoined, under
// the official conformance suite, interrupted with a signal. Everything else
// runs in-process in the package it tests.
package e2e

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"mcpscope/statestore"
	"mcpscope/testkit/testservers"
	"mcpscope/testkit/waitfor"
)

// binary is the mcpscope binary, built once per test run.
func binary(t *testing.T) string {
	t.Helper()
	return testservers.BuildMCPScope(t)
}

// hangGuard bounds every wait in these tests. It only stops a hung test
// from hanging the run: nothing here waits on time to synchronise, and on a
// loaded 2-core machine running -race a step can take many seconds.
const hangGuard = 2 * time.Minute

// mcpscope is the command that runs the binary with args, its state (era
// cache, rejoin records, logins) under state.
func mcpscope(t *testing.T, state string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
	return cmd
}

// waitRecord polls the state store (another process writes it) until a
// record with progress appears.
func waitRecord(t *testing.T, store *statestore.FileStore) statestore.Detached {
	t.Helper()
	var rec statestore.Detached
	if !waitfor.Within(hangGuard, func() bool {
		l, _ := store.List()
		if len(l) == 1 && l[0].Progress.Updates >= 2 {
			rec = l[0]
			return true
		}
		return false
	}) {
		t.Fatalf("no call state with progress was persisted within %v", hangGuard)
	}
	return rec
}

// killAfterTaskCreated starts cmd, waits until it reports "task … created"
// on stderr (the task then has a rejoin record), and kills it with SIGKILL.
func killAfterTaskCreated(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	created := make(chan bool, 1)
	go func() {
		buf := make([]byte, 4096)
		var seen []byte
		for {
			n, err := stderr.Read(buf)
			seen = append(seen, buf[:n]...)
			if bytes.Contains(seen, []byte(" created")) {
				created <- true
				io.Copy(io.Discard, stderr)
				return
			}
			if err != nil {
				created <- false
				return
			}
		}
	}()
	select {
	case ok := <-created:
		if !ok {
			t.Fatal("the first mcpscope ended before creating the task")
		}
	case <-time.After(hangGuard):
		t.Fatalf("no task created within %v", hangGuard)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
}
