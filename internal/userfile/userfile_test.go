package userfile_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"mcpscope/internal/userfile"
	"mcpscope/testkit/nodetest"
)

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A regular file is replaced (a new inode), keeping its mode; a new one
// gets the mode asked for; a failed write leaves the old file whole and no
// temporary file behind.
func TestWriteRegular(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out")
	if err := userfile.Write(p, 0o640, writeString("one")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 || read(t, p) != "one" {
		t.Fatalf("new file: mode %v, %q", fi.Mode(), read(t, p))
	}
	os.Chmod(p, 0o604)
	if err := userfile.Write(p, 0o600, writeString("two")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o604 || read(t, p) != "two" {
		t.Fatalf("replaced file: mode %v (want its own 0604 kept), %q", fi.Mode(), read(t, p))
	}
	boom := errors.New("boom")
	if err := userfile.Write(p, 0o600, func(w io.Writer) error { io.WriteString(w, "half"); return boom }); !errors.Is(err, boom) {
		t.Fatalf("a failed write: %v", err)
	}
	if read(t, p) != "two" {
		t.Fatalf("a failed write changed the file: %q", read(t, p))
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("a temporary file was left: %v", ents)
	}
}

// A symlink stays a symlink: its target is replaced, or created when the
// link dangles (as > would).
func TestWriteSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real")
	os.WriteFile(target, []byte("old"), 0o600)
	link := filepath.Join(dir, "link")
	nodetest.Symlink(t, "real", link) // relative: resolved from the link's directory
	if err := userfile.Write(link, 0o600, writeString("new")); err != nil {
		t.Fatal(err)
	}
	nodetest.Still(t, link, fs.ModeSymlink)
	if read(t, target) != "new" {
		t.Fatalf("the target holds %q", read(t, target))
	}
	dangling := filepath.Join(dir, "dangling")
	nodetest.Symlink(t, filepath.Join(dir, "made"), dangling)
	if err := userfile.Write(dangling, 0o600, writeString("made")); err != nil {
		t.Fatal(err)
	}
	nodetest.Still(t, dangling, fs.ModeSymlink)
	if read(t, filepath.Join(dir, "made")) != "made" {
		t.Fatal("a dangling link's target was not created")
	}
	loop := filepath.Join(dir, "loop")
	nodetest.Symlink(t, "loop", loop)
	if err := userfile.Write(loop, 0o600, writeString("x")); !errors.Is(err, syscall.ELOOP) {
		t.Fatalf("a symlink loop: %v", err)
	}
}

// A FIFO is written through (its reader gets the bytes) and stays a FIFO;
// one that nothing reads is an error at once, not a wait.
func TestWriteFIFO(t *testing.T) {
	dir := t.TempDir()
	p := nodetest.NewFIFO(t, filepath.Join(dir, "fifo"))
	if err := userfile.Write(p.Path, 0o600, writeString("through the pipe")); err != nil {
		t.Fatal(err)
	}
	nodetest.Still(t, p.Path, fs.ModeNamedPipe)
	if got := string(p.Bytes(t)); got != "through the pipe" {
		t.Fatalf("the reader got %q", got)
	}
	f, seekable, err := userfile.Append(p.Path, 0o600)
	if err != nil || seekable {
		t.Fatalf("Append to a FIFO: seekable %v, %v", seekable, err)
	}
	io.WriteString(f, "appended")
	f.Close()
	if got := string(p.Bytes(t)); got != "appended" {
		t.Fatalf("the reader got %q", got)
	}

	lonely := filepath.Join(dir, "lonely")
	nodetest.LoneFIFO(t, lonely)
	if err := userfile.Write(lonely, 0o600, writeString("x")); !errors.Is(err, userfile.ErrNoReader) {
		t.Fatalf("a FIFO without a reader: %v", err)
	}
	nodetest.Still(t, lonely, fs.ModeNamedPipe)
}

// A character device is written through and stays a device (as root).
func TestWriteCharDevice(t *testing.T) {
	p := filepath.Join(t.TempDir(), "null")
	nodetest.CharDevice(t, p)
	if err := userfile.Write(p, 0o600, writeString("gone")); err != nil {
		t.Fatal(err)
	}
	nodetest.Still(t, p, fs.ModeDevice|fs.ModeCharDevice)
	f, seekable, err := userfile.Append(p, 0o600)
	if err != nil || seekable {
		t.Fatalf("Append to a device: seekable %v, %v", seekable, err)
	}
	f.Close()
	nodetest.Still(t, p, fs.ModeDevice|fs.ModeCharDevice)
}

// A directory is ErrDirectory, for Write, Append and Resolve alike, and
// is left alone.
func TestDirectory(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "to-dir")
	nodetest.Symlink(t, dir, link)
	for _, p := range []string{dir, link} {
		if _, err := userfile.Resolve(p); !errors.Is(err, userfile.ErrDirectory) {
			t.Errorf("Resolve %s: %v", p, err)
		}
		if err := userfile.Write(p, 0o600, writeString("x")); !errors.Is(err, userfile.ErrDirectory) {
			t.Errorf("Write %s: %v", p, err)
		}
		if _, _, err := userfile.Append(p, 0o600); !errors.Is(err, userfile.ErrDirectory) {
			t.Errorf("Append %s: %v", p, err)
		}
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("the directory: %v", err)
	}
}

// Append creates a regular file and opens it read-write (seekable), and
// appends to one that exists.
func TestAppendRegular(t *testing.T) {
	p := filepath.Join(t.TempDir(), "j")
	for _, s := range []string{"a", "b"} {
		f, seekable, err := userfile.Append(p, 0o600)
		if err != nil || !seekable {
			t.Fatalf("Append: seekable %v, %v", seekable, err)
		}
		io.WriteString(f, s)
		f.Close()
	}
	if fi, _ := os.Stat(p); read(t, p) != "ab" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%q, mode %v", read(t, p), fi.Mode())
	}
}
