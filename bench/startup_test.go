package bench

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestStartupRow: the --version row is met up to 1.5× the baseline's CPU
// and not past it, and without a baseline shows mcpscope's figure alone.
func TestStartupRow(t *testing.T) {
	ms := time.Millisecond
	base := Start{CPU: 4 * ms, Wall: 5 * ms, Runs: 21}
	r := startupRow(Start{CPU: 6 * ms, Wall: 8 * ms, Runs: 21}, base, nil)
	if !r.Met || r.Skip != "" || r.Goal != "≤ 1.5× hello cobra" {
		t.Errorf("6 ms against 4 ms (1.5×): %+v", r)
	}
	for _, want := range []string{"6.00 ms CPU", "8.00 ms wall (median of 21)", "hello cobra 4.00 ms CPU, 5.00 ms wall: 1.50×"} {
		if !strings.Contains(r.Figure, want) {
			t.Errorf("figure %q lacks %q", r.Figure, want)
		}
	}
	if r := startupRow(Start{CPU: 6*ms + time.Microsecond, Runs: 21}, base, nil); r.Met {
		t.Errorf("over 1.5× is met: %+v", r)
	}
	r = startupRow(Start{CPU: 6 * ms, Wall: 8 * ms, Runs: 21}, Start{}, errNoGo)
	if r.Skip == "" || !strings.Contains(r.Skip, "needs Go") || !strings.Contains(r.Skip, "6.00 ms CPU") {
		t.Errorf("no baseline: %+v", r)
	}
	if r := startupRow(Start{CPU: 6 * ms}, Start{}, nil); r.Skip == "" || r.Met {
		t.Errorf("a baseline of 0 ms is judged: %+v", r)
	}
	if r := startupRow(Start{}, Start{}, errors.New("build failed")); !strings.Contains(r.Skip, "build failed") {
		t.Errorf("the build's error is not said: %+v", r)
	}
}

// TestSizeRow: the size row is met up to 30 MB (decimal) and not past it.
func TestSizeRow(t *testing.T) {
	r := sizeRow(BinaryGoalBytes, 3_700_000)
	if !r.Met || r.Goal != "≤ 30 MB" || !strings.Contains(r.Figure, "30.0 MB (30000000 bytes, this binary as built); hello cobra 3.7 MB") {
		t.Errorf("at the goal: %+v", r)
	}
	if r := sizeRow(BinaryGoalBytes+1, 0); r.Met || strings.Contains(r.Figure, "× hello cobra") {
		t.Errorf("one byte over, no baseline: %+v", r)
	}
}

// TestSymbolPackage: a symbol's package is read up to the first dot after
// the last slash, with the linker's %2e put back, and what is not a Go
// function of a package says so.
func TestSymbolPackage(t *testing.T) {
	for sym, want := range map[string]string{
		"fmt.Println":                                    "fmt",
		"net/http.(*Server).Serve":                       "net/http",
		"github.com/spf13/cobra.(*Command).Execute":      "github.com/spf13/cobra",
		"charm.land/bubbletea/v2.(*Program).Run.func1":   "charm.land/bubbletea/v2",
		"gopkg.in/yaml%2ev3.Marshal":                     "gopkg.in/yaml.v3",
		"slices.Sort[go.shape.[]string,go.shape.string]": "slices",
		"example.com/a.F[go.shape.struct { b/c.T }]":     "example.com/a",
		"_rt0_amd64_linux":                               "",
		"x_cgo_mmap":                                     "",
	} {
		if got := symbolPackage(sym); got != want {
			t.Errorf("symbolPackage(%q) = %q, want %q", sym, got, want)
		}
	}
}

// TestImportable: the floor imports what another module may import and
// nothing of mcpscope's own.
func TestImportable(t *testing.T) {
	for p, want := range map[string]bool{
		"fmt": true, "net/http": true, "github.com/spf13/cobra": true, "golang.org/x/sys/unix": true,
		"mcpscope": false, "mcpscope/cli": false, "main": false, "": false,
		"internal/cpu": false, "crypto/internal/fips140": false, "github.com/x/y/internal/z": false,
		"vendor/golang.org/x/net/idna": false, "cmd/go": false, "type:": false, "go:struct": false,
		"x_cgo_mmap": false, "net(": false,
	} {
		if got := importable(p, "mcpscope"); got != want {
			t.Errorf("importable(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestFloorRow: the row judges mcpscope against the floor, puts the floor
// against hello cobra, and says why when there is no floor.
func TestFloorRow(t *testing.T) {
	ms := time.Millisecond
	r := floorRow(Start{CPU: 6 * ms}, Start{CPU: 5 * ms}, Start{CPU: 2 * ms}, nil)
	if !r.Met || !strings.Contains(r.Figure, "5.00 ms CPU (2.50× hello cobra): 1.20×") {
		t.Errorf("6 ms against a 5 ms floor: %+v", r)
	}
	if r := floorRow(Start{CPU: 10 * ms}, Start{CPU: 5 * ms}, Start{}, nil); r.Met || strings.Contains(r.Figure, "× hello cobra") {
		t.Errorf("2× the floor, no hello cobra: %+v", r)
	}
	if r := floorRow(Start{CPU: 6 * ms}, Start{}, Start{}, errors.New("no symbols")); r.Met || r.Skip != "no symbols" {
		t.Errorf("no floor: %+v", r)
	}
}
