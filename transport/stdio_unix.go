//go:build unix

package transport

import (
	"os/exec"
	"syscall"
)

// procGroup is the server's process group: its own, so that the ladder's
// signals reach the server's children (npx → node), and a Ctrl-C in our
// terminal does not hit the server.
type procGroup struct{}

func (procGroup) setup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func (procGroup) started(*exec.Cmd) error { return nil }

// signal sends sig to the group, whose id is the leader's pid.
func (procGroup) signal(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }

func (procGroup) close() {}
