package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcpscope/testkit/nodetest"
	"mcpscope/testkit/testservers"
)

const charDevice = fs.ModeDevice | fs.ModeCharDevice

// export -o writes through a FIFO, a device and a symlink, as a shell's >
// would, and leaves each what it was; a directory is a usage error.
func TestExportOutputNodes(t *testing.T) {
	path := journalOf(t)
	code, want, errs := run(t, "export", path, "--format", "otlp")
	if code != exitOK {
		t.Fatalf("export: exit %d\n%s", code, errs)
	}
	dir := t.TempDir()

	t.Run("fifo", func(t *testing.T) {
		p := nodetest.NewFIFO(t, filepath.Join(dir, "fifo"))
		if code, _, errs := run(t, "export", path, "--format", "otlp", "-o", p.Path); code != exitOK {
			t.Fatalf("exit %d\n%s", code, errs)
		}
		nodetest.Still(t, p.Path, fs.ModeNamedPipe)
		if got := string(p.Bytes(t)); got != want {
			t.Fatalf("the FIFO's reader got %d bytes, want the %d of the export", len(got), len(want))
		}
	})
	t.Run("symlink", func(t *testing.T) {
		target := filepath.Join(dir, "trace.json")
		os.WriteFile(target, []byte("old"), 0o640)
		link := filepath.Join(dir, "link.json")
		nodetest.Symlink(t, target, link)
		if code, _, errs := run(t, "export", path, "--format", "otlp", "-o", link); code != exitOK {
			t.Fatalf("exit %d\n%s", code, errs)
		}
		nodetest.Still(t, link, fs.ModeSymlink)
		b, _ := os.ReadFile(target)
		if fi, _ := os.Stat(target); string(b) != want || fi.Mode().Perm() != 0o640 {
			t.Fatalf("the link's target: mode %v (want its 0640 kept), %d bytes, want %d", fi.Mode(), len(b), len(want))
		}
	})
	t.Run("char device", func(t *testing.T) {
		p := filepath.Join(dir, "null")
		nodetest.CharDevice(t, p)
		if code, _, errs := run(t, "export", path, "-o", p); code != exitOK {
			t.Fatalf("exit %d\n%s", code, errs)
		}
		nodetest.Still(t, p, charDevice)
	})
	t.Run("directory", func(t *testing.T) {
		if code, _, errs := run(t, "export", path, "-o", dir); code != exitUsage || !strings.Contains(errs, "is a directory") {
			t.Fatalf("exit %d\n%s", code, errs)
		}
	})
}

// --journal writes through a FIFO and a device: the node stays, a FIFO's
// reader gets the journal, and a result over MaxHeldFrame (which a
// regular journal would hold for reading back) is still whole, since
// nothing can be read back from such a node.
func TestJournalNodes(t *testing.T) {
	bin := testservers.BuildStdio(t)
	big := strings.Repeat("0123456789abcdef", 96<<10) // 1.5 MiB: over framestore.MaxHeldFrame
	dir := t.TempDir()
	call := func(t *testing.T, journal string) {
		t.Helper()
		code, out, errs := runIn(t, t.TempDir(), "call", "echo", "message="+big, "--journal", journal, "--", bin)
		if code != exitOK || !strings.Contains(out, big) {
			t.Fatalf("call with --journal %s: exit %d, %d bytes out\n%.600s", journal, code, len(out), errs)
		}
	}
	t.Run("fifo", func(t *testing.T) {
		p := nodetest.NewFIFO(t, filepath.Join(dir, "fifo"))
		call(t, p.Path)
		nodetest.Still(t, p.Path, fs.ModeNamedPipe)
		got := string(p.Bytes(t))
		if !strings.HasPrefix(got, `{"format":"mcpscope-journal/1"`) || !strings.Contains(got, `\"method\":\"tools/call\"`) ||
			strings.Count(got, "0123456789abcdef") < 2*96<<10 {
			t.Fatalf("the FIFO's reader got %d bytes:\n%.400s", len(got), got)
		}
	})
	t.Run("char device", func(t *testing.T) {
		p := filepath.Join(dir, "null")
		nodetest.CharDevice(t, p)
		call(t, p)
		nodetest.Still(t, p, charDevice)
	})
	t.Run("directory", func(t *testing.T) {
		code, _, errs := runIn(t, t.TempDir(), "ping", "--journal", dir, "--", bin)
		if code != exitUsage || !strings.Contains(errs, "is a directory") {
			t.Fatalf("exit %d\n%s", code, errs)
		}
	})
}

// --baseline through a symlink: written to the link's target (created
// when the link dangles), and --update leaves the link a link.
func TestBaselineSymlink(t *testing.T) {
	bin := testservers.BuildStdio(t)
	dir := t.TempDir()
	target := filepath.Join(dir, "catalog.json")
	link := filepath.Join(dir, "link.json")
	nodetest.Symlink(t, "catalog.json", link)
	if code, out, errs := run(t, "diff", "--baseline", link, "--", bin); code != exitOK || !strings.Contains(out, "wrote the baseline") {
		t.Fatalf("first run: exit %d\n%s\n%s", code, out, errs)
	}
	nodetest.Still(t, link, fs.ModeSymlink)
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("the link's target: %v", err)
	}
	if code, _, errs := run(t, "diff", "--baseline", link, "--update", "--", bin); code != exitOK || !strings.Contains(errs, "rewrote") {
		t.Fatalf("--update: exit %d\n%s", code, errs)
	}
	nodetest.Still(t, link, fs.ModeSymlink)
	if code, _, errs := run(t, "diff", "--baseline", dir, "--", bin); code != exitUsage || !strings.Contains(errs, "is a directory") {
		t.Fatalf("a directory: exit %d\n%s", code, errs)
	}
}
