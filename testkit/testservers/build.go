package testservers

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

type built struct {
	once sync.Once
	path string
	err  error
}

var goserver, hostile, mcpgo, mcpscope built

// BuildStdio builds cmd/goserver once per test process and returns the
// binary's path. Flags: --banner TEXT (printed on stdout before serving),
// --stderr-noise (chatter on stderr, one line per request), --clock DURATION,
// --no-die (leave out the die tool, which is on by default), --request-log FILE.
func BuildStdio(t testing.TB) (binPath string) {
	t.Helper()
	return goserver.get(t, "goserver")
}

// BuildHostile builds cmd/hostile (a stdio server that misbehaves one way
// per -mode; see its package doc) once per test process.
func BuildHostile(t testing.TB) (binPath string) {
	t.Helper()
	return hostile.get(t, "hostile")
}

// BuildMCPGo builds cmd/mcpgo (testservers.MCPGo over stdio) once per
// test process.
func BuildMCPGo(t testing.TB) (binPath string) {
	t.Helper()
	return mcpgo.get(t, "mcpgo")
}

// BuildMCPScope builds the mcpscope binary itself (without -race, as
// users run it) once per test process: for the tests that run it whole.
func BuildMCPScope(t testing.TB) (binPath string) {
	t.Helper()
	return mcpscope.get(t, "mcpscope")
}

func (b *built) get(t testing.TB, name string) string {
	t.Helper()
	b.once.Do(func() {
		pkg := "./testkit/testservers/cmd/" + name
		if name == "mcpscope" {
			pkg = "."
		}
		b.path, b.err = build(pkg, name)
	})
	if b.err != nil {
		t.Fatalf("building %s: %v", name, b.err)
	}
	return b.path
}

// build builds the package pkg (relative to the module's root) as NAME into
// a fixed place under the temp dir, through a temporary name and a rename,
// so concurrent test processes (go test runs packages in parallel) never
// see a half-written binary and runs do not pile up binaries; go's build
// cache makes the rebuild cheap.
func build(pkg, name string) (string, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate the testservers source")
	}
	goBin, err := exec.LookPath("go") // go test puts GOROOT/bin first in PATH
	if err != nil {
		return "", err
	}
	dir := filepath.Join(os.TempDir(), "mcpscope-testservers")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	tmp, err := os.CreateTemp(dir, name+".*.tmp")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name()) // only still there if something failed
	cmd := exec.Command(goBin, "build", "-o", tmp.Name(), pkg)
	cmd.Dir = filepath.Join(filepath.Dir(self), "..", "..") // the module's root (testkit/testservers)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	final := filepath.Join(dir, name)
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", err
	}
	return final, nil
}
