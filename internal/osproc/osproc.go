// Package osproc asks the operating system about processes by pid, the
// same question on Unix and Windows.
package osproc

// Alive reports whether a process with this pid exists and has not exited.
// One that belongs to another user counts as alive. A pid may have been
// reused since the process a caller means ended: then it looks alive too,
// so callers use Alive only to skip a wait, never to end something.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	return alive(pid)
}
