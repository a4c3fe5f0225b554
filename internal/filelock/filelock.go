// Package filelock takes and releases an advisory lock on a whole open
// file, exclusive between processes: flock(2) on Unix, LockFileEx on
// Windows. A lock ends with Unlock or when the file is closed.
package filelock

import (
	"errors"
	"os"
)

// ErrLocked is TryLock's answer when another process holds the lock.
var ErrLocked = errors.New("the file is locked by another process")

// Lock waits until f is locked for this process.
func Lock(f *os.File) error { return lock(f, true) }

// TryLock locks f at once or fails with an error wrapping ErrLocked.
func TryLock(f *os.File) error { return lock(f, false) }

// Unlock releases f's lock.
func Unlock(f *os.File) error { return unlock(f) }
