//go:build unix

package e2e

import (
	"os"
	"syscall"
)

// The signals that pause a process and resume it (the fault suite pauses
// a holder past its lease).
var sigStop, sigCont os.Signal = syscall.SIGSTOP, syscall.SIGCONT

// peakRSS is the child's peak resident set in bytes (getrusage counts
// KiB on Linux).
func peakRSS(ps *os.ProcessState) int64 {
	return int64(ps.SysUsage().(*syscall.Rusage).Maxrss) << 10
}
