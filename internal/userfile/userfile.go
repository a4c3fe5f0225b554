// Package userfile writes to a path the user named (export -o, --journal,
// --baseline, a host's config file) the way a shell's > would, only safer:
// a regular file is replaced atomically (a temporary file beside it,
// renamed into place, so a failed write leaves the old file whole), while
// a device, a FIFO or a socket is opened and written through: renaming a
// file over /dev/null or a FIFO would replace the node itself, for every
// other program too. A symlink is followed first, like open(2) does, and
// the same rule applies to what it points at; a directory is an error.
package userfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrDirectory is a path that names a directory where a file is wanted.
var ErrDirectory = errors.New("is a directory")

// ErrNoReader is a FIFO that no process has open for reading. mcpscope does
// not wait for one (the shell's > would, for ever).
var ErrNoReader = errors.New("is a FIFO that nothing is reading: start its reader first")

// maxLinks bounds a chain of symlinks, as the kernel does (ELOOP).
const maxLinks = 40

// Target is what a path names once symlinks are followed.
type Target struct {
	Path string      // the path itself, or what its symlinks lead to
	Info fs.FileInfo // nil: nothing is there yet
}

// Regular reports whether the target is a regular file or nothing yet: a
// file mcpscope creates or replaces, rather than a node it writes through.
func (t Target) Regular() bool { return t.Info == nil || t.Info.Mode().IsRegular() }

// Resolve follows the symlinks at the end of path (the directories on the
// way are the kernel's business) and says what is there. A directory is an
// error wrapping ErrDirectory, so a caller can reject it before any work.
func Resolve(path string) (Target, error) {
	p := path
	for range maxLinks {
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return Target{Path: p}, nil
		case err != nil:
			return Target{}, err
		case fi.Mode()&fs.ModeSymlink != 0:
			to, err := os.Readlink(p)
			if err != nil {
				return Target{}, err
			}
			if !filepath.IsAbs(to) {
				to = filepath.Join(filepath.Dir(p), to)
			}
			p = to
			continue
		case fi.IsDir():
			return Target{}, &fs.PathError{Op: "write", Path: path, Err: ErrDirectory}
		}
		return Target{Path: p, Info: fi}, nil
	}
	return Target{}, &fs.PathError{Op: "write", Path: path, Err: syscall.ELOOP}
}

// Write puts what write produces at path. A regular file (or none) is
// written as a temporary file in the same directory and renamed into place
// once write succeeded; an existing file keeps its mode (and, where the
// process may, its owner), a new one gets perm. A symlink's target is
// replaced that way and the link stays: replacing it in place instead would
// leave half a file when the write fails. A device, FIFO or socket is
// truncated and written through, with no rename; a FIFO must have a
// reader already (ErrNoReader).
func Write(path string, perm fs.FileMode, write func(io.Writer) error) error {
	t, err := Resolve(path)
	if err != nil {
		return err
	}
	if !t.Regular() {
		f, err := openNode(t, os.O_TRUNC)
		if err != nil {
			return err
		}
		err = write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return replace(t, perm, write)
}

// Append opens path for appending, as >> would: a regular file is created
// (with perm) when missing and opened read-write as well, so that what was
// appended can be read back (seekable true); a device, FIFO or socket is
// opened write-only and never created (seekable false).
func Append(path string, perm fs.FileMode) (f *os.File, seekable bool, err error) {
	t, err := Resolve(path)
	if err != nil {
		return nil, false, err
	}
	if !t.Regular() {
		f, err := openNode(t, os.O_APPEND)
		return f, false, err
	}
	f, err = os.OpenFile(t.Path, os.O_CREATE|os.O_RDWR|os.O_APPEND, perm)
	return f, err == nil, err
}

// openNode opens a device, FIFO or socket for writing, never creating
// anything. A FIFO is opened without blocking, so that one nobody reads
// is an error rather than a wait with no end.
func openNode(t Target, flag int) (*os.File, error) {
	flag |= os.O_WRONLY
	fifo := t.Info.Mode()&fs.ModeNamedPipe != 0
	if fifo {
		flag |= syscall.O_NONBLOCK // Go then writes through its poller: a full pipe parks the goroutine
	}
	f, err := os.OpenFile(t.Path, flag, 0)
	if fifo && errors.Is(err, syscall.ENXIO) {
		return nil, &fs.PathError{Op: "open", Path: t.Path, Err: ErrNoReader}
	}
	return f, err
}

// replace writes t through a temporary file renamed over it.
func replace(t Target, perm fs.FileMode, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(t.Path), "."+filepath.Base(t.Path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if t.Info != nil {
		perm = t.Info.Mode().Perm()
		keepOwner(tmp, t.Info)
	}
	if err = tmp.Chmod(perm); err != nil {
		return err
	}
	if err = write(tmp); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), t.Path); err != nil {
		return fmt.Errorf("replace %s: %w", t.Path, err)
	}
	return nil
}

// WriteCache keeps b as the cache file path (mode 0600, its folder made
// 0700): written whole to a temporary file beside it and renamed, so a
// reader sees the old cache or the new one. A cache that cannot be written
// only costs the next reader time, so errors are dropped; nothing is
// flushed to disk.
func WriteCache(path string, b []byte) {
	if path == "" || os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}
