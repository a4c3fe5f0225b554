//go:build unix

package cli

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcpscope/testkit/waitfor"
)

// waitBlockedOn waits until some process waits for an flock on path
// (/proc/locks lists a blocked waiter with "->").
func waitBlockedOn(t *testing.T, path string) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	ino := fmt.Sprintf(":%d ", st.Ino)
	waitfor.Until(t, "somebody to wait on the lease lock", 60*time.Second, func() bool {
		b, err := os.ReadFile("/proc/locks")
		if err != nil {
			t.Skipf("no /proc/locks: %v", err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "->") && strings.Contains(l, ino) {
				return true
			}
		}
		return false
	})
}
