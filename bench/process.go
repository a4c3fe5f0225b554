package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Proc is one whole process, measured from outside: its wall time and
// its peak resident set (ru_maxrss, as /usr/bin/time -v reports it).
type Proc struct {
	Wall       time.Duration
	PeakRSSKiB int64
	Stdout     []byte
}

// timeBin measures peak RSS. A child's own ru_maxrss cannot be used:
// Linux carries the parent's high-water mark across the child's exec, so
// every child of a big parent would look as big. /usr/bin/time forks its
// child from a small process and reports that child's peak alone.
const timeBin = "/usr/bin/time"

// runProc runs argv to its end and measures it; stdout is kept when keep.
func runProc(argv []string, env []string, keep bool) (Proc, error) {
	var rss string
	if exists(timeBin) {
		f, err := os.CreateTemp("", "mcpscope-bench-rss-")
		if err != nil {
			return Proc{}, err
		}
		f.Close()
		rss = f.Name()
		defer os.Remove(rss)
		argv = append([]string{timeBin, "-f", "%M", "-o", rss}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &errb
	if keep {
		cmd.Stdout = &out
	}
	start := time.Now()
	err := cmd.Run()
	p := Proc{Wall: time.Since(start), Stdout: out.Bytes()}
	if rss != "" {
		b, _ := os.ReadFile(rss)
		// "Command exited with non-zero status N" may come first.
		if f := strings.Fields(string(b)); len(f) > 0 {
			p.PeakRSSKiB, _ = strconv.ParseInt(f[len(f)-1], 10, 64)
		}
	}
	if err != nil {
		return p, &procError{argv: argv, err: err, stderr: tail(errb.String(), 2000)}
	}
	return p, nil
}

// procError is a child that failed, with the end of what it said.
type procError struct {
	argv   []string
	err    error
	stderr string
}

func (e *procError) Error() string {
	return fmt.Sprintf("%s: %v\n%s", strings.Join(e.argv, " "), e.err, e.stderr)
}

func (e *procError) Unwrap() error { return e.err }

// exitCode is a failed child's exit code (-1: it did not exit).
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// Scale is the figures at one size: a headless record of a flood, the
// journal it wrote read back, and the TUI model under the same flood.
type Scale struct {
	Frames   int
	Record   Proc
	ReadBack Proc
	Read     int // frames `mcpscope journal` says it read
	TUI      TUIResult
}

var framesRead = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^frames\s+(\d+) read`) })

// Measure runs the whole-process figures at n frames: `record` of a
// flood of n notifications, `journal` of what it wrote, and the TUI model
// under the same flood (keys: with a paced flood and key presses after
// it). self is the mcpscope binary.
func Measure(self string, n int, keys time.Duration) (Scale, error) {
	sc := Scale{Frames: n}
	dir, err := os.MkdirTemp("", "mcpscope-bench-scale-")
	if err != nil {
		return sc, err
	}
	defer os.RemoveAll(dir)
	env := []string{"XDG_STATE_HOME=" + dir}
	journal := filepath.Join(dir, "record.jsonl")
	serve := []string{self, "bench", "serve", "--burst", strconv.Itoa(n), "--exit"}
	// record ends when the server does, and says so with exit code 3 (the
	// transport closed); the read-back below checks that nothing is missing.
	if sc.Record, err = runProc(append([]string{self, "record", "--era", "legacy", "--journal", journal, "--"}, serve...), env, false); err != nil && exitCode(err) != 3 {
		return sc, fmt.Errorf("record: %w", err)
	}
	if sc.ReadBack, err = runProc([]string{self, "journal", journal}, env, true); err != nil {
		return sc, fmt.Errorf("journal: %w", err)
	}
	if m := framesRead().FindSubmatch(sc.ReadBack.Stdout); m != nil {
		sc.Read, _ = strconv.Atoi(string(m[1]))
	}
	if sc.Read < n {
		return sc, fmt.Errorf("mcpscope journal read %d frames of a flood of %d", sc.Read, n)
	}
	tuiArgs := []string{self, "bench", "tui", "--burst", strconv.Itoa(n)}
	if keys > 0 {
		tuiArgs = append(tuiArgs, "--rate", "10000", "--keys", keys.String())
	}
	p, err := runProc(tuiArgs, env, true)
	if err != nil {
		return sc, fmt.Errorf("tui: %w", err)
	}
	if sc.TUI, err = ParseTUI(string(p.Stdout)); err != nil {
		return sc, err
	}
	if sc.TUI.Frames < n {
		return sc, fmt.Errorf("the TUI model took in %d of %d notifications", sc.TUI.Frames, n)
	}
	return sc, nil
}
