package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// initOnly makes the test binary exit right after the package inits ran:
// the startup tests run it as a child to see what every start pays for.
const initOnly = "MCPSCOPE_TEST_INIT_ONLY"

func TestMain(m *testing.M) {
	if os.Getenv(initOnly) == "1" {
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Budgets for one package's init, in what GODEBUG=inittrace=1 counts.
// They are allocation counts, not times, so load on the machine cannot
// make the test flake: the biggest today is goldmark/util (~136 KB, ~440).
const (
	maxInitBytes  = 256 << 10
	maxInitAllocs = 2000
)

// Budgets for all the package inits together, which per-package budgets
// miss when work creeps in as many small inits (a dependency's whole
// tree). Measured on this test binary (go1.26.8, linux/amd64) after issue
// #41's start-up work (regexps, scripts and the handle tag made on first
// use, lint's tool-name check by hand, protobuf no longer linked): ~568 KB
// in ~3,450 allocations over ~180 packages (the binary: ~580 KB, ~3,510);
// before it, ~793 KB in ~5,910. What is left is mostly dependencies'
// own: goldmark's util and parser (~250 KB, ~1,370), jsonschema-go (~80
// KB, ~300), encoding/gob (~27 KB, ~370), atotto/clipboard (~17 KB, ~220).
// The ceilings leave 10-13% for ordinary growth.
const (
	maxTotalInitBytes  = 640 << 10
	maxTotalInitAllocs = 3800
)

// slowInits are dependency versions whose init is known to cost whole
// milliseconds of CPU without allocating (tables filled in place), which
// an allocation budget cannot see: go-runewidth before v0.0.31 spent
// 25-41 ms in init on every start.
var slowInits = map[string]string{
	"github.com/mattn/go-runewidth": "v0.0.31",
}

type initTrace struct {
	pkg    string
	ms     float64
	bytes  int64
	allocs int64
}

// traceInits runs this test binary as a child that exits after its inits
// and returns what inittrace said about each package.
func traceInits(t testing.TB) []initTrace {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), initOnly+"=1", "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("init-only child: %v\n%s", err, stderr.String())
	}
	var out []initTrace
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		// init PKG @0.5 ms, 0.06 ms clock, 3464 bytes, 9 allocs
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[10] != "allocs" {
			continue
		}
		ms, _ := strconv.ParseFloat(f[4], 64)
		b, _ := strconv.ParseInt(f[7], 10, 64)
		a, _ := strconv.ParseInt(f[9], 10, 64)
		out = append(out, initTrace{pkg: f[1], ms: ms, bytes: b, allocs: a})
	}
	if len(out) == 0 {
		t.Fatalf("no init lines in the inittrace output:\n%s", stderr.String())
	}
	return out
}

// TestStartupWork fails when start-up work creeps back: a package init
// over the allocation budget, or a dependency at a version whose init is
// known to be slow. The clock figures are printed, never asserted.
func TestStartupWork(t *testing.T) {
	inits := traceInits(t)
	var totalBytes, totalAllocs int64
	for _, in := range inits {
		totalBytes += in.bytes
		totalAllocs += in.allocs
		if in.bytes > maxInitBytes || in.allocs > maxInitAllocs {
			t.Errorf("init of %s allocates %d bytes in %d allocations (budget %d bytes, %d allocations): "+
				"move the work out of init (sync.OnceValue) or out of the dependency", in.pkg, in.bytes, in.allocs, maxInitBytes, maxInitAllocs)
		}
	}
	if totalBytes > maxTotalInitBytes || totalAllocs > maxTotalInitAllocs {
		t.Errorf("the package inits allocate %d bytes in %d allocations in all (%d packages; budget %d bytes, %d allocations): "+
			"a new dependency brings start-up work every command pays (go list -deps . names what it links)",
			totalBytes, totalAllocs, len(inits), maxTotalInitBytes, maxTotalInitAllocs)
	}
	t.Logf("package inits: %d bytes in %d allocations in all", totalBytes, totalAllocs)
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build info in the test binary")
	}
	for _, d := range bi.Deps {
		if floor, slow := slowInits[d.Path]; slow && versionLess(d.Version, floor) {
			t.Errorf("%s %s has a slow init; use %s or later", d.Path, d.Version, floor)
		}
	}
	sort.Slice(inits, func(i, j int) bool { return inits[i].ms > inits[j].ms })
	total := 0.0
	for _, in := range inits {
		total += in.ms
	}
	t.Logf("package inits: %.2f ms of clock in all (%d packages); the slowest:", total, len(inits))
	for _, in := range inits[:min(5, len(inits))] {
		t.Logf("  %-50s %6.3f ms %8d bytes %5d allocs", in.pkg, in.ms, in.bytes, in.allocs)
	}
}

// versionLess compares vMAJOR.MINOR.PATCH versions (pre-release suffixes
// ignored), enough for the floors above.
func versionLess(a, b string) bool {
	pa, pb := semverParts(a), semverParts(b)
	for i := range pa {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return false
}

func semverParts(v string) [3]int {
	v = strings.TrimPrefix(v, "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	var p [3]int
	for i, s := range strings.SplitN(v, ".", 3) {
		p[i], _ = strconv.Atoi(s)
	}
	return p
}

func TestVersionLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		less bool
	}{{"v0.0.27", "v0.0.31", true}, {"v0.0.31", "v0.0.31", false}, {"v0.1.0", "v0.0.31", false}, {"v0.0.31-pre", "v0.0.32", true}} {
		if got := versionLess(c.a, c.b); got != c.less {
			t.Errorf("versionLess(%s, %s) = %v", c.a, c.b, got)
		}
	}
}

// BenchmarkStartup is a whole process start up to main (the binary's inits
// included), and the package inits' clock as inittrace reports it.
func BenchmarkStartup(b *testing.B) {
	var initMS float64
	for b.Loop() {
		start := time.Now()
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), initOnly+"=1")
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		_ = time.Since(start)
	}
	for _, in := range traceInits(b) {
		initMS += in.ms
	}
	b.ReportMetric(initMS, "init-ms")
}

// A plain go build in a fresh clone says the commit it was built from.
func TestCloneBuildSaysCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcpscope from a clone")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	head, err := exec.Command(git, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	clone := filepath.Join(t.TempDir(), "mcpscope")
	if out, err := exec.Command(git, "clone", "-q", "--no-hardlinks", ".", clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	build := exec.Command("go", "build", "-o", "mcpscope", ".")
	build.Dir = clone
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(clone, "mcpscope"), "version").CombinedOutput()
	if err != nil {
		t.Fatalf("mcpscope version: %v\n%s", err, out)
	}
	if want := "commit " + string(head[:12]); !strings.Contains(string(out), want) {
		t.Errorf("mcpscope version = %q, want %q", out, want)
	}
}

// TestNoTestSupportInTheBinary: the packages under testkit serve
// tests only; the binary links none of them.
func TestNoTestSupportInTheBinary(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps .: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "mcpscope/session") {
		t.Fatalf("go list -deps . does not list mcpscope/session: the check reads the wrong output:\n%s", out)
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "mcpscope/testkit/") {
			t.Errorf("the binary links %s: test support belongs in _test.go files and other testkit packages", d)
		}
	}
}
