//go:build !unix

package bench

// syncDisks does nothing: Windows writes back per file (FlushFileBuffers),
// not the whole machine, and the rows measured there are only a guide.
func syncDisks() {}
