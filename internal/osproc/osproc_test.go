package osproc_test

import (
	"os"
	"os/exec"
	"testing"

	"mcpscope/internal/osproc"
)

func TestAlive(t *testing.T) {
	if !osproc.Alive(os.Getpid()) {
		t.Fatal("Alive(our own pid) = false")
	}
	if osproc.Alive(0) || osproc.Alive(-1) {
		t.Fatal("Alive of pid 0 or -1 = true: those name no single process")
	}
	// A child that has exited and been reaped is gone.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatalf("run the test binary as a child: %v", err)
	}
	if osproc.Alive(cmd.Process.Pid) {
		t.Skipf("pid %d was reused at once by another process: cannot tell", cmd.Process.Pid)
	}
}
