package filelock_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"mcpscope/internal/filelock"
)

// Two opens of one file stand for two processes: flock and LockFileEx both
// lock per open file, so the second open is refused while the first holds
// the lock, and gets it once released.
func TestLockExcludes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	if err := filelock.Lock(a); err != nil {
		t.Fatalf("Lock: %v", err)
	}
	if err := filelock.TryLock(b); !errors.Is(err, filelock.ErrLocked) {
		t.Fatalf("TryLock while another open holds it: %v, want ErrLocked", err)
	}
	if err := filelock.Unlock(a); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	if err := filelock.TryLock(b); err != nil {
		t.Fatalf("TryLock once released: %v", err)
	}
}
