//go:build !unix

package cli

import "testing"

// waitBlockedOn needs Linux's /proc/locks to see a waiter: it skips here.
func waitBlockedOn(t *testing.T, path string) {
	t.Skipf("no /proc/locks to see a process wait on %s: this test runs on Linux", path)
}
