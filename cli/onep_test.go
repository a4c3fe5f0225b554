package cli

import (
	"runtime"
	"testing"
)

// TestOneP: oneP runs on one P until its restore, unless GOMAXPROCS in the
// environment names a number, which it then leaves alone.
func TestOneP(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(before)
	runtime.GOMAXPROCS(2)

	t.Setenv("GOMAXPROCS", "")
	restore := oneP()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("GOMAXPROCS %d under oneP, want 1", n)
	}
	restore()
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Fatalf("GOMAXPROCS %d after restore, want 2 again", n)
	}

	t.Setenv("GOMAXPROCS", "2")
	restore = oneP()
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Fatalf("GOMAXPROCS %d under oneP with GOMAXPROCS=2 in the environment, want 2", n)
	}
	restore()
}
