package bench

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
)

// The dependencies' floor: hello cobra linking every package mcpscope
// links code from, none of its own. Go runs every linked package's init
// at start, whatever the command, so this is the least any program built
// on mcpscope's dependencies pays for --version: the part of the
// start-up that only dropping a dependency could lower.

// linkedPackages are the import paths self holds code from, read off its
// symbol table with go tool nm, less its own (module own) and what no
// other module may import (internal, vendor, main). Sorted, unique.
func linkedPackages(goCmd, self, own string) ([]string, error) {
	out, err := exec.Command(goCmd, "tool", "nm", self).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%v: %s", err, tail(strings.TrimSpace(string(ee.Stderr)), 300))
		}
		return nil, fmt.Errorf("list the packages %s links (go tool nm): %w", self, err)
	}
	seen := map[string]bool{}
	for line := range bytes.Lines(out) {
		f := strings.Fields(string(line))
		if len(f) < 3 || (f[1] != "T" && f[1] != "t") {
			continue
		}
		if p := symbolPackage(f[2]); importable(p, own) {
			seen[p] = true
		}
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("%s has no symbol table to read its packages from (a stripped build?)", self)
	}
	pkgs := make([]string, 0, len(seen))
	for p := range seen {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	return pkgs, nil
}

// symbolPackage is the import path of a Go function symbol: up to the
// first dot after the last slash (a method's receiver, a closure's
// number and a generic's type arguments follow it). The linker writes the
// dots of the last path element as %2e. "" for what is not a Go function
// of a package (cgo and assembly glue, type and go: symbols).
func symbolPackage(sym string) string {
	if i := strings.IndexByte(sym, '['); i >= 0 {
		sym = sym[:i] // type arguments may hold slashes and dots of their own
	}
	slash := strings.LastIndexByte(sym, '/')
	dot := strings.IndexByte(sym[slash+1:], '.')
	if dot <= 0 {
		return ""
	}
	p, err := url.PathUnescape(sym[:slash+1+dot])
	if err != nil {
		return ""
	}
	return p
}

// importable reports whether a program outside module own may import p.
func importable(p, own string) bool {
	if p == "" || p == "main" || p == own || strings.HasPrefix(p, own+"/") ||
		strings.HasPrefix(p, "type:") || strings.HasPrefix(p, "go:") || strings.HasPrefix(p, "_") ||
		strings.HasPrefix(p, "vendor/") || strings.HasPrefix(p, "cmd/") {
		return false
	}
	for _, el := range strings.Split(p, "/") {
		if el == "internal" {
			return false
		}
	}
	if !strings.Contains(p, "/") {
		// A standard package (fmt, net) is lower-case letters; a C or
		// assembly symbol with a dot in it (x_cgo_mmap) is not a package.
		return strings.Trim(p, "abcdefghijklmnopqrstuvwxyz") == ""
	}
	return !strings.ContainsAny(p, " *()[]{}") // a mangled name, not a path
}

// BuildDepsFloor builds the dependencies' floor for the binary self into
// a new temporary directory and returns its path (remove its directory
// when done). Its go.mod requires every module self was built with, at
// the versions self was built with, so the floor links the same code.
func BuildDepsFloor(goCmd, self string) (string, error) {
	if goCmd == "" {
		return "", errNoGo
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", errors.New("this binary carries no build info to build the dependencies' floor with")
	}
	pkgs, err := linkedPackages(goCmd, self, bi.Main.Path)
	if err != nil {
		return "", err
	}
	mod := "module floor\n\ngo 1.21\n"
	for _, d := range bi.Deps {
		if v := moduleVersion(d); v != "" && v != "(devel)" {
			mod += "\nrequire " + d.Path + " " + v + "\n"
		}
	}
	return buildBaseline("floor", "dependencies' floor", mod, helloSource(pkgs), goCmd)
}

// buildBaseline writes a one-file module (gomod, main) into a new
// temporary directory and builds it there as name; what names it in
// errors.
func buildBaseline(name, what, gomod, main, goCmd string) (string, error) {
	dir, err := os.MkdirTemp("", "mcpscope-bench-"+name+"-")
	if err != nil {
		return "", err
	}
	for file, text := range map[string]string{"go.mod": gomod, "main.go": main} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	bin := filepath.Join(dir, name)
	cmd := exec.Command(goCmd, "build", "-o", bin, ".")
	cmd.Dir = dir
	// GOWORK=off: a go.work above the temp dir must not pull it in;
	// GOTOOLCHAIN=local: no toolchain download for a baseline.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOSUMDB=off", "GOWORK=off", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("build the %s baseline: %v: %s", what, err, tail(strings.TrimSpace(string(out)), 600))
	}
	return bin, nil
}
