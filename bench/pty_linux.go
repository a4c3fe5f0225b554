//go:build linux

package bench

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openPTY allocates a pseudo-terminal of cols×rows from /dev/ptmx: the
// master, which the bench reads and writes, and the slave, which a child
// gets as its terminal.
func openPTY(cols, rows int) (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	var n int
	raw, err := master.SyscallConn() // not Fd(): that would put the master in blocking mode
	if err == nil {
		cerr := raw.Control(func(fd uintptr) {
			if err = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); err == nil { // unlockpt
				n, err = unix.IoctlGetInt(int(fd), unix.TIOCGPTN) // ptsname
			}
		})
		if err == nil {
			err = cerr
		}
	}
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("set up the pseudo-terminal: %w", err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	raw, err = slave.SyscallConn()
	if err == nil {
		cerr := raw.Control(func(fd uintptr) {
			err = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)})
		})
		if err == nil {
			err = cerr
		}
	}
	if err != nil {
		master.Close()
		slave.Close()
		return nil, nil, fmt.Errorf("size the pseudo-terminal: %w", err)
	}
	return master, slave, nil
}

// ptyAttr makes the child a session leader with the pseudo-terminal (its
// stdin) as its controlling terminal, as a shell would start it.
func ptyAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true, Setctty: true} }

// killGroup kills the process group a session leader started (the child
// and what it spawned and did not move elsewhere).
func killGroup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }
