//go:build unix && !linux

package peers

import "syscall"

func setDeathSignal(*syscall.SysProcAttr) {}
