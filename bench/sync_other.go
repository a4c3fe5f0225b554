//go:build !unix

package bench

import "time"

// syncDisks does nothing: Windows writes back per file (FlushFileBuffers),
// not the whole machine, and the rows measured there are only a guide.
func syncDisks() {}

// selfCPU is not read here: the rows that need it say so.
func selfCPU() (time.Duration, bool) { return 0, false }
