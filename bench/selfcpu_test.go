//go:build unix

package bench

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSelfCPUReportsAndClears: with SelfCPUEnv set, a process's report is
// its own CPU (this test has used some), read back once: the next run
// cannot read the last one's.
func TestSelfCPUReportsAndClears(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(SelfCPUEnv, dir)
	ReportSelfCPU("serve")
	c, ok := reportedCPU(dir, "serve")
	if !ok || c <= 0 {
		t.Fatalf("reported %v (%v), want this process's CPU, above 0", c, ok)
	}
	if _, err := os.Stat(filepath.Join(dir, "serve")); !os.IsNotExist(err) {
		t.Fatalf("the report is still there after it was read: %v", err)
	}
	if _, ok := reportedCPU(dir, "serve"); ok {
		t.Fatal("a report read twice")
	}
}
