//go:build unix

package nodetest

import "syscall"

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }

// mknodNull makes a character device with /dev/null's numbers (1, 3).
func mknodNull(path string) error { return syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|3) }
