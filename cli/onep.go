package cli

import (
	"os"
	"runtime"
)

// oneP runs the Go scheduler on one P, unless GOMAXPROCS in the
// environment says how many, and returns what puts the old setting back
// (defer oneP()()). The proxy and record hand work between goroutines
// under a flood; each caller says why one P serves it better.
func oneP() (restore func()) {
	if os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	prev := runtime.GOMAXPROCS(1)
	return func() { runtime.GOMAXPROCS(prev) }
}
