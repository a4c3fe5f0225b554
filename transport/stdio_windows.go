package transport

import (
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// procGroup is a job object holding the server and every process it
// starts: Windows has no process groups to signal, and ending only the
// server would leave its children (npx → node) running with its pipes.
// The job is marked kill-on-close, so the tree also ends when mcpscope
// does, however it ends.
type procGroup struct {
	mu  sync.Mutex
	job windows.Handle // 0 before started and after close
}

// setup starts the server in a console process group of its own, so that
// a Ctrl-C in our console does not reach it (as Setpgid does on Unix).
func (g *procGroup) setup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// started puts the running server in a new job. What it starts from now on
// is in the job too; a child it started in the moment before (Go's os/exec
// cannot start a process suspended) is not.
func (g *procGroup) started(cmd *exec.Cmd) error {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return fmt.Errorf("create a job object to hold its process tree: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("make its job object end the process tree when closed: %w", err)
	}
	// The pid is still ours: os/exec holds a handle until Wait.
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err == nil {
		err = windows.AssignProcessToJobObject(job, p)
		windows.CloseHandle(p)
	}
	if err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("put pid %d in a job object to hold its process tree: %w", cmd.Process.Pid, err)
	}
	g.mu.Lock()
	g.job = job
	g.mu.Unlock()
	return nil
}

// signal ends the whole job whatever sig is: Windows cannot send another
// process a signal, and ending it is what SIGTERM, SIGINT, SIGHUP and
// SIGKILL do to a server that does not catch them. Its exit code is 1.
func (g *procGroup) signal(_ int, sig syscall.Signal) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.job == 0 {
		return nil
	}
	if err := windows.TerminateJobObject(g.job, 1); err != nil {
		return fmt.Errorf("end its job object (for %s): %w", stdioSignalName(sig), err)
	}
	return nil
}

// close closes the job handle, which ends what is left of the tree
// (kill-on-close): a child still running after the server exited.
func (g *procGroup) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.job != 0 {
		windows.CloseHandle(g.job)
		g.job = 0
	}
}
