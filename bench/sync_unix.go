//go:build unix

package bench

import "syscall"

// syncDisks writes back what the file systems hold dirty.
func syncDisks() { syscall.Sync() }
