//go:build unix

package bench

import (
	"syscall"
	"time"
)

// syncDisks writes back what the file systems hold dirty.
func syncDisks() { syscall.Sync() }

// selfCPU is the user and system CPU this process has used, its children
// not counted.
func selfCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
