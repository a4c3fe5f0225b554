//go:build !linux

package bench

import (
	"errors"
	"os"
	"syscall"
)

// openPTY is Linux's alone here: the paint rows are skipped elsewhere.
func openPTY(cols, rows int) (master, slave *os.File, err error) {
	return nil, nil, errors.ErrUnsupported
}

func ptyAttr() *syscall.SysProcAttr { return nil }

func killGroup(p *os.Process) { _ = p.Kill() }
