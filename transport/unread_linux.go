//go:build linux

package transport

import (
	"os"
	"syscall"
	"unsafe"
)

// unread is how many bytes wait in the pipe whose write end is f, not yet
// read by the process at the other end (TIOCINQ, alias FIONREAD, works on
// either end of a pipe). SyscallConn leaves f in non-blocking mode, which
// Fd would not.
func unread(f *os.File) (int, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	var n int32
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
	}); err != nil || errno != 0 {
		return 0, false
	}
	return int(n), true
}
