package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"mcpscope/internal/jsonscan"
	"mcpscope/journal"
)

// Row is one figure beside its goal: what was measured, against what, in
// the same run, and whether the goal is met. Rows print the figures the
// README cites.
type Row struct {
	Name   string
	Figure string // the measurement and its baseline, in words
	Goal   string
	Met    bool
	Err    error // the row could not be measured
	Skip   string
}

// PrintRows prints rows under a title, each with its goal and met / NOT met.
func PrintRows(w io.Writer, title string, rows []Row) {
	fmt.Fprintf(w, "\n%s\n", title)
	for _, r := range rows {
		switch {
		case r.Skip != "":
			fmt.Fprintf(w, "  %-44s skipped: %s\n", r.Name, r.Skip)
		case r.Err != nil:
			fmt.Fprintf(w, "  %-44s failed: %v\n", r.Name, r.Err)
		default:
			met := "met"
			if !r.Met {
				met = "NOT met"
			}
			fmt.Fprintf(w, "  %-44s %s   goal %s: %s\n", r.Name, r.Figure, r.Goal, met)
		}
	}
}

// cpu runs argv to its end with stdout to /dev/null (or to the file out)
// and returns the CPU time it used (user + system; also when it failed,
// beside the error): on a shared machine, what a reader costs is its CPU, not
// the wall time other processes stretch.
func cpu(argv []string, env []string) (time.Duration, error) {
	_, d, err := wall(argv, env, 0)
	return d, err
}

// paired measures each of argvs (nil: none) rounds times, one after the
// other in turn (so a load that comes and goes falls on all of them), and
// returns each one's median. An exit with code answer (diff's "the sides
// differ") is an answer, not a failure; 0 for none. before, when not nil,
// runs before each measurement.
func paired(rounds int, env []string, answer int, before func(), argvs ...[]string) ([]time.Duration, error) {
	all := make([][]time.Duration, len(argvs))
	for r := 0; r < max(1, rounds); r++ {
		for i, argv := range argvs {
			if argv == nil {
				continue
			}
			if before != nil {
				before()
			}
			d, err := cpu(argv, env)
			if err != nil && (answer == 0 || exitCode(err) != answer) {
				return nil, err
			}
			all[i] = append(all[i], d)
		}
	}
	out := make([]time.Duration, len(argvs))
	for i, ds := range all {
		if len(ds) > 0 {
			slices.Sort(ds)
			out[i] = ds[len(ds)/2]
		}
	}
	return out, nil
}

// pythonLoop is the Python baseline: json.loads of every line.
const pythonLoop = "import json, sys\nfor p in sys.argv[1:]:\n    for line in open(p, 'rb'):\n        json.loads(line)\n"

// python3 is the python3 on PATH, "" when there is none.
func python3() string {
	p, err := exec.LookPath("python3")
	if err != nil {
		return ""
	}
	if exec.Command(p, "-c", "import json").Run() != nil {
		return "" // a shim without an interpreter behind it
	}
	return p
}

// CountLines is the Go baseline: split the file into lines, nothing else.
func CountLines(path string) (int, error) {
	n := 0
	err := eachPiece(path, func(_ []byte, end bool) {
		if end {
			n++
		}
	})
	return n, err
}

// CountStrings is the read-back rows' second Go baseline: the line loop,
// and in each line where every JSON string starts and ends (its quotes
// and backslashes, eight bytes at a time), nothing else. A reader that
// reads a record member by member does at least this much, so it is the
// floor under such a reader's figure (one that skipped members unread
// would need the journal's layout to find the frame without them).
// It returns how many strings the file holds.
func CountStrings(path string) (int, error) {
	n, esc := 0, false
	err := eachPiece(path, func(b []byte, _ bool) { // a line's newline is never escaped: esc is false after it
		var q int
		q, esc = quotes(b, esc)
		n += q
	})
	return n / 2, err
}

// quotes counts the quotes of b that are not escaped. esc says that b's
// first byte is escaped (the piece before it ended in a backslash that
// escapes); more says the same of the byte after b.
func quotes(b []byte, esc bool) (n int, more bool) {
	skip := -1 // the byte a backslash escapes
	if esc {
		skip = 0
	}
	for i := 0; i < len(b); i += 8 {
		// Past b's end the word reads zeros, which neither mask flags.
		w := jsonscan.Word(b, i)
		for m := jsonscan.ByteMask(w, '"') | jsonscan.ByteMask(w, '\\'); m != 0; m &= m - 1 {
			switch p := i + bits.TrailingZeros64(m)>>3; {
			case p == skip:
			case b[p] == '\\':
				skip = p + 1
			default:
				n++
			}
		}
	}
	return n, skip == len(b)
}

// eachPiece hands f path's lines as bufio reads them: a line whole with
// its newline (end true), but one longer than 64 KiB in pieces, and the
// last without a newline (end false) when the file does not end in one.
func eachPiece(path string, f func(b []byte, end bool)) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	r := bufio.NewReaderSize(file, 1<<16)
	for {
		b, err := r.ReadSlice('\n')
		switch {
		case err == nil:
			f(b, true)
		case errors.Is(err, bufio.ErrBufferFull):
			f(b, false)
		case err == io.EOF:
			if len(b) > 0 {
				f(b, false)
			}
			return nil
		default:
			return err
		}
	}
}

// ReadBack measures mcpscope's readers of a frames-frame journal, HTTP and
// stdio, by CPU time against a Go loop that only splits the file into
// lines and a Python json.loads loop (when python3 is there), all in the
// same run, and the Go loop that also finds every line's strings (the
// least a reader that reads a record member by member does). self is the
// mcpscope binary; rounds the measurements of each (the median is shown). Every run reads journals with no index file beside
// them (any one a reader left is removed first): what a user gets on a
// journal copied from elsewhere, the index never a shortcut for the figure.
func ReadBack(self string, frames, rounds int) ([]Row, error) {
	dir, err := os.MkdirTemp("", "mcpscope-bench-readback-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	env := []string{"XDG_STATE_HOME=" + dir, "XDG_CONFIG_HOME=" + dir}
	py := python3()
	pyArgv := func(files ...string) []string {
		if py == "" {
			return nil
		}
		return append([]string{py, "-c", pythonLoop}, files...)
	}
	vsPython := func(name string, self, base time.Duration, want float64) Row {
		r := Row{Name: name, Goal: fmt.Sprintf("≥ %.0f× faster than the Python loop", want)}
		if py == "" {
			r.Skip = "no python3 on PATH"
			return r
		}
		x := base.Seconds() / self.Seconds()
		r.Figure = fmt.Sprintf("%6.2f CPU-s, Python loop %6.2f s: %5.2f× faster", self.Seconds(), base.Seconds(), x)
		r.Met = x >= want
		return r
	}
	var rows []Row
	size := func(p string) float64 {
		st, _ := os.Stat(p)
		if st == nil {
			return 0
		}
		return float64(st.Size()) / (1 << 20)
	}
	paths := map[bool]string{}
	// settle runs before each measurement: no index (above), and nothing
	// of the files written so far (the journals, the last export) left to
	// write back to disk, which on this kind of VM cost a run up to 0.6
	// CPU-s more system time when it fell on it.
	settle := func() {
		for _, p := range paths {
			os.Remove(p + journal.IndexSuffix)
		}
		syncDisks()
	}
	for _, http := range []bool{true, false} {
		kind := map[bool]string{true: "HTTP", false: "stdio"}[http]
		p := filepath.Join(dir, strings.ToLower(kind)+".jsonl")
		if err := WriteJournal(p, frames, http); err != nil {
			return nil, err
		}
		paths[http] = p
		ds, err := paired(rounds, env, 0, settle, []string{self, "journal", "--summary", p}, []string{self, "bench", "lines", p},
			[]string{self, "bench", "strings", p}, pyArgv(p))
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("journal, %s (%.0f MiB)", kind, size(p))
		rows = append(rows, vsPython(name, ds[0], ds[3], 4))
		// The strings loop is the floor under a reader that reads every
		// member (issue 41 retired the line loop as the goal's baseline: a
		// loop that only finds the strings reaches 25-43 % of it). The goal
		// is a stretch: mcpscope already reads back faster than any JSON
		// reader tried (fastjson, go-json, sonic, encoding/json, jq).
		x := ds[2].Seconds() / ds[0].Seconds()
		rows = append(rows, Row{Name: name, Goal: "≥ 35 % of the strings loop's speed (stretch)", Met: x >= 0.35,
			Figure: fmt.Sprintf("%6.2f CPU-s, a loop that only finds the strings %6.2f s: %5.1f %% of its speed (Go line loop: %.1f %%)",
				ds[0].Seconds(), ds[2].Seconds(), 100*x, 100*ds[1].Seconds()/ds[0].Seconds())})
	}
	h := paths[true]
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		name   string
		argv   []string
		base   []string
		answer int // an exit code that is an answer (diff: the sides differ)
	}{
		{"export --format har, HTTP", []string{self, "export", "--format", "har", "-o", out, h}, pyArgv(h), 0},
		{"export --format otlp, HTTP", []string{self, "export", "--format", "otlp", "-o", out, h}, pyArgv(h), 0},
		{"export --format jsonl, HTTP", []string{self, "export", "--format", "jsonl", "-o", out, h}, pyArgv(h), 0},
		{"journal --filter '~m tools/call', HTTP", []string{self, "journal", "--filter", "~m tools/call", h}, pyArgv(h), 0},
		{"journal --filter '~e' (reads twice), HTTP", []string{self, "journal", "--filter", "~e", h}, pyArgv(h), 0},
		{"diff HTTP stdio (Python reads both)", []string{self, "diff", h, paths[false]}, pyArgv(h, paths[false]), 1},
	} {
		// Every round exports into a new file, as the first does, not
		// over the last round's.
		fresh := func() { os.Remove(out); settle() }
		ds, err := paired(rounds, env, c.answer, fresh, c.argv, c.base)
		if err != nil {
			rows = append(rows, Row{Name: c.name, Err: err})
			continue
		}
		rows = append(rows, vsPython(c.name, ds[0], ds[1], 2))
	}
	return rows, nil
}
