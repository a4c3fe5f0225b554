//go:build unix

package osproc

import (
	"errors"
	"syscall"
)

// alive sends signal 0: nothing is delivered, but the kernel says whether
// the pid exists (EPERM: it does, and is someone else's).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
