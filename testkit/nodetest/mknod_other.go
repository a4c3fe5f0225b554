//go:build !unix

package nodetest

import "errors"

// Windows has neither FIFOs nor device nodes in its file system (its named
// pipes live under \\.\pipe\): the tests that need one skip.
func mkfifo(string) error { return errors.ErrUnsupported }

func mknodNull(string) error { return errors.ErrUnsupported }
