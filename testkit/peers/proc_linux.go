package peers

import "syscall"

// setDeathSignal asks the kernel to kill the peer if the test binary dies
// without running its cleanups (a panic or a -timeout), so that no server is
// left behind holding a port.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
