//go:build unix

package peers

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the peer in its own process group, so that stopping it
// also stops whatever it started.
func setProcAttr(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setDeathSignal(cmd.SysProcAttr)
}

func terminateGroup(cmd *exec.Cmd) { signalGroup(cmd, syscall.SIGTERM) }

func killGroup(cmd *exec.Cmd) { signalGroup(cmd, syscall.SIGKILL) }

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	// The group id is the peer's pid (Setpgid with Pgid 0). ESRCH once it
	// is gone is expected.
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
