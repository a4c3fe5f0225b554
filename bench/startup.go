package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"
)

// The startup rows' goals (issue #41): every command, --help and
// --version included, pays for package inits and binary size, so the
// bare start must stay near what any cobra program pays, and the binary
// (unstripped, as go build writes it) within 30 MB (decimal).
const (
	StartupCPURatioGoal = 1.5
	BinaryGoalBytes     = 30_000_000
	// FloorCPURatioGoal bounds --version against its dependencies' floor
	// (BuildDepsFloor): the share of the start-up that is mcpscope's own
	// code, its command tree and its size, which it can lower.
	FloorCPURatioGoal = 1.5
)

// helloSource is the baseline's source: the least a cobra program does
// to answer --version, blank-importing blank too (the dependencies'
// floor; none for hello cobra itself).
func helloSource(blank []string) string {
	var b strings.Builder
	b.WriteString("package main\n\nimport (\n\t\"os\"\n\n\t\"github.com/spf13/cobra\"\n")
	for _, p := range blank {
		if p != "os" && p != "github.com/spf13/cobra" {
			fmt.Fprintf(&b, "\t_ %q\n", p)
		}
	}
	b.WriteString(`)

func main() {
	root := &cobra.Command{Use: "hello", Version: "1.0.0", Run: func(*cobra.Command, []string) {}}
	if root.Execute() != nil {
		os.Exit(1)
	}
}
`)
	return b.String()
}

// StartupOptions configure Startup.
type StartupOptions struct {
	Self string // the mcpscope binary
	Runs int    // starts of each binary, interleaved; the median is shown
	Go   string // the go command that builds the baseline; "" for none
}

// Start is the median of a binary's starts.
type Start struct {
	CPU  time.Duration // user + system
	Wall time.Duration
	Runs int
}

// Startup measures mcpscope --version (o.Self) against a hello-world
// cobra binary built here with o.Go, started in turn o.Runs times each
// after a warm-up start (so load that comes and goes falls on both), and
// the size of o.Self.
func Startup(o StartupOptions) []Row {
	base, baseErr := BuildHelloCobra(o.Go)
	if base != "" {
		defer os.RemoveAll(filepath.Dir(base))
	}
	floor, floorErr := BuildDepsFloor(o.Go, o.Self)
	if floor != "" {
		defer os.RemoveAll(filepath.Dir(floor))
	}
	argvs := [][]string{{o.Self, "--version"}, nil, nil}
	if baseErr == nil {
		argvs[1] = []string{base, "--version"}
	}
	if floorErr == nil {
		argvs[2] = []string{floor, "--version"}
	}
	starts, err := interleaved(max(1, o.Runs), argvs...)
	rows := []Row{}
	if err != nil {
		rows = append(rows, Row{Name: "--version CPU", Err: err})
	} else {
		rows = append(rows, startupRow(starts[0], starts[1], baseErr), floorRow(starts[0], starts[2], starts[1], floorErr))
	}
	var size, baseSize int64
	st, err := os.Stat(o.Self)
	if err != nil {
		return append(rows, Row{Name: "binary size", Err: err})
	}
	size = st.Size()
	if baseErr == nil {
		if st, err := os.Stat(base); err == nil {
			baseSize = st.Size()
		}
	}
	return append(rows, sizeRow(size, baseSize))
}

// StartupTitle heads the startup rows.
func StartupTitle(runs int) string {
	return fmt.Sprintf("start-up: mcpscope --version (the running binary) against a hello-world cobra binary (cobra %s) and its dependencies' floor, %d interleaved starts of each after a warm-up (load average %s)",
		depVersion("github.com/spf13/cobra"), max(1, runs), LoadAverage())
}

// startupRow is the --version row: mcpscope's median CPU against the
// baseline's, goal ≤ StartupCPURatioGoal×. Without a baseline (baseErr)
// it shows mcpscope's figure alone and says why.
func startupRow(self, base Start, baseErr error) Row {
	r := Row{Name: "--version CPU (user+sys)", Goal: fmt.Sprintf("≤ %.1f× hello cobra", StartupCPURatioGoal)}
	mine := fmt.Sprintf("%.2f ms CPU, %.2f ms wall (median of %d)", ms(self.CPU), ms(self.Wall), self.Runs)
	if baseErr != nil {
		r.Skip = fmt.Sprintf("%v; mcpscope --version alone: %s", baseErr, mine)
		return r
	}
	if base.CPU <= 0 {
		// A clock too coarse to see the baseline at all: no ratio to judge.
		r.Skip = fmt.Sprintf("hello cobra measured 0 ms CPU; mcpscope --version alone: %s", mine)
		return r
	}
	x := self.CPU.Seconds() / base.CPU.Seconds()
	r.Figure = fmt.Sprintf("%s; hello cobra %.2f ms CPU, %.2f ms wall: %.2f×", mine, ms(base.CPU), ms(base.Wall), x)
	r.Met = x <= StartupCPURatioGoal
	return r
}

// floorRow is --version against the dependencies' floor (floorErr: it
// could not be built), goal ≤ FloorCPURatioGoal×; hello (zero: not
// measured) puts the floor itself in scale.
func floorRow(self, floor, hello Start, floorErr error) Row {
	r := Row{Name: "--version CPU over its dependencies", Goal: fmt.Sprintf("≤ %.1f× the dependencies' floor", FloorCPURatioGoal)}
	if floorErr != nil {
		r.Skip = floorErr.Error()
		return r
	}
	if floor.CPU <= 0 {
		r.Skip = "the dependencies' floor measured 0 ms CPU"
		return r
	}
	x := self.CPU.Seconds() / floor.CPU.Seconds()
	r.Figure = fmt.Sprintf("%.2f ms CPU; the dependencies' floor (the hello cobra with every package mcpscope links, none of its own) %.2f ms CPU", ms(self.CPU), ms(floor.CPU))
	if hello.CPU > 0 {
		r.Figure += fmt.Sprintf(" (%.2f× hello cobra)", floor.CPU.Seconds()/hello.CPU.Seconds())
	}
	r.Figure += fmt.Sprintf(": %.2f×", x)
	r.Met = x <= FloorCPURatioGoal
	return r
}

// sizeRow is the binary-size row, goal ≤ BinaryGoalBytes for an
// unstripped go build; baseSize (0: unknown) is hello cobra's, for scale.
func sizeRow(size, baseSize int64) Row {
	r := Row{Name: "binary size", Goal: fmt.Sprintf("≤ %.0f MB", float64(BinaryGoalBytes)/1e6), Met: size <= BinaryGoalBytes}
	// The goal is for go build's output; a stripped or trimmed build of
	// the same code is smaller, so the figure says what it measured.
	r.Figure = fmt.Sprintf("%.1f MB (%d bytes, this binary as built)", float64(size)/1e6, size)
	if baseSize > 0 {
		r.Figure += fmt.Sprintf("; hello cobra %.1f MB", float64(baseSize)/1e6)
	}
	return r
}

// interleaved starts each of argvs (nil: none) in turn, a warm-up round
// and then runs rounds, and returns each one's median CPU and wall time.
func interleaved(runs int, argvs ...[]string) ([]Start, error) {
	cpus := make([][]time.Duration, len(argvs))
	walls := make([][]time.Duration, len(argvs))
	for r := -1; r < runs; r++ { // round -1: a warm-up (page cache), not counted
		for i, argv := range argvs {
			if argv == nil {
				continue
			}
			w, c, err := wall(argv, nil, 0)
			if err != nil {
				return nil, err
			}
			if r >= 0 {
				cpus[i] = append(cpus[i], c)
				walls[i] = append(walls[i], w)
			}
		}
	}
	out := make([]Start, len(argvs))
	for i := range argvs {
		if len(cpus[i]) > 0 {
			out[i] = Start{CPU: median(cpus[i]), Wall: median(walls[i]), Runs: len(cpus[i])}
		}
	}
	return out, nil
}

// errNoGo is the baseline's absence when there is no go command.
var errNoGo = errors.New("the hello cobra baseline needs Go on PATH")

// BuildHelloCobra builds the baseline into a new temporary directory and
// returns its path (remove its directory when done; "" with the error
// when it could not be built). It requires the cobra and pflag versions
// this binary was built with, so both sides run the same cobra; they come
// from the module cache when they are there (mcpscope's build put them
// there), and GOSUMDB is off because the fresh module has no go.sum and
// the check database may be out of reach (the cache verified them when
// they were downloaded).
func BuildHelloCobra(goCmd string) (string, error) {
	if goCmd == "" {
		return "", errNoGo
	}
	cobra := depVersion("github.com/spf13/cobra")
	if cobra == "" {
		return "", errors.New("this binary's build info names no cobra version to build the baseline with")
	}
	mod := "module hello\n\ngo 1.21\n\nrequire github.com/spf13/cobra " + cobra + "\n"
	if v := depVersion("github.com/spf13/pflag"); v != "" {
		mod += "\nrequire github.com/spf13/pflag " + v + "\n"
	}
	return buildBaseline("hello", "hello cobra", mod, helloSource(nil), goCmd)
}

// depVersion is the version of module path this binary was built with,
// "" when its build info does not say.
func depVersion(path string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			return moduleVersion(d)
		}
	}
	return ""
}

// moduleVersion is the version of d that was built: its replacement's,
// when it was replaced.
func moduleVersion(d *debug.Module) string {
	if d.Replace != nil {
		return d.Replace.Version
	}
	return d.Version
}
