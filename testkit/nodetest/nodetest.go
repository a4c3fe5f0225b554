// Package nodetest makes the files that are not regular files for tests of
// the commands that write to a path the user names (see package userfile):
// a FIFO with a reader, a character device, and checks that they stayed
// what they were.
package nodetest

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"
)

// FIFO is a named pipe with a reader collecting what is written to it.
type FIFO struct {
	Path string
	f    *os.File

	mu   sync.Mutex
	got  []byte
	more *sync.Cond
	err  error
}

// sentinel marks the end of what a test waits for (see Bytes).
const sentinel = "\x00nodetest-end\x00"

// NewFIFO makes a FIFO at path and reads it until the test ends. Its
// reader holds the FIFO open read-write, so a writer can open it at once
// and the reader never sees an end of file between writers.
func NewFIFO(t testing.TB, path string) *FIFO {
	t.Helper()
	if err := mkfifo(path); errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("mkfifo %s: %s has no named pipes in the file system", path, runtime.GOOS)
	} else if err != nil {
		t.Fatalf("mkfifo %s: %v", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := &FIFO{Path: path, f: f}
	p.more = sync.NewCond(&p.mu)
	go func() {
		buf := make([]byte, 1<<16)
		for {
			n, err := f.Read(buf)
			p.mu.Lock()
			p.got = append(p.got, buf[:n]...)
			if err != nil {
				p.err = err
			}
			p.more.Broadcast()
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { f.Close() })
	return p
}

// LoneFIFO makes a FIFO at path that nobody reads.
func LoneFIFO(t testing.TB, path string) {
	t.Helper()
	if err := mkfifo(path); errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("mkfifo %s: %s has no named pipes in the file system", path, runtime.GOOS)
	} else if err != nil {
		t.Fatalf("mkfifo %s: %v", path, err)
	}
}

// Bytes returns everything written to the FIFO so far by writers that
// have finished: it writes a sentinel behind their bytes and waits for the
// reader to reach it (a minute at most, a hang guard).
func (p *FIFO) Bytes(t testing.TB) []byte {
	t.Helper()
	if _, err := p.f.Write([]byte(sentinel)); err != nil {
		t.Fatal(err)
	}
	stop := time.AfterFunc(time.Minute, func() {
		p.mu.Lock()
		p.err = os.ErrDeadlineExceeded
		p.more.Broadcast()
		p.mu.Unlock()
	})
	defer stop.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if i := bytes.Index(p.got, []byte(sentinel)); i >= 0 {
			out := bytes.Clone(p.got[:i])
			p.got = p.got[i+len(sentinel):]
			return out
		}
		if p.err != nil {
			t.Fatalf("reading the FIFO %s: %v", p.Path, p.err)
		}
		p.more.Wait()
	}
}

// CharDevice makes a character device at path with /dev/null's numbers
// (1, 3): writes to it vanish. It needs root and CAP_MKNOD; without them
// the test is skipped.
func CharDevice(t testing.TB, path string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no device nodes in the file system")
	}
	if os.Geteuid() != 0 {
		t.Skip("making a character device needs root")
	}
	if err := mknodNull(path); err != nil {
		t.Skipf("mknod %s: %v", path, err)
	}
}

// Symlink makes a symlink at path to target.
func Symlink(t testing.TB, target, path string) {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		if runtime.GOOS == "windows" {
			t.Skipf("%v: on Windows a symlink needs Developer Mode or an administrator", err)
		}
		t.Fatal(err)
	}
}

// Still fails the test unless path is still a node of type typ (fs.ModeNamedPipe,
// fs.ModeSymlink, fs.ModeCharDevice|fs.ModeDevice), not replaced.
func Still(t testing.TB, path string, typ fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if fi.Mode().Type() != typ {
		t.Fatalf("%s is now %v, want %v: it was replaced", path, fi.Mode().Type(), typ)
	}
}
