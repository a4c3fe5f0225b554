package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/charmbracelet/x/ansi"

	"mcpscope/internal/termsafe"
)

// The paint rows' goals, chosen for a person at a terminal, not from the
// figures: the demo's first screen within 100 ms of pressing enter (it
// feels immediate), a million-frame journal's within 300 ms (open reads it
// in the background, so its size must not hold the first screen back), and
// a key through the terminal within twice what the model itself takes plus
// one frame of the renderer's 60 fps ticker, which every change waits for.
const (
	DemoPaintGoal = 100 * time.Millisecond
	OpenPaintGoal = 300 * time.Millisecond
	KeyFrameSlack = 17 * time.Millisecond
)

// PTYCols and PTYRows are the size of the pseudo-terminal the paint rows
// run the inspector in.
const PTYCols, PTYRows = 120, 40

// PaintOptions configure Paint.
type PaintOptions struct {
	Self   string // the mcpscope binary
	Runs   int    // starts of each inspector; the median is shown
	Frames int    // frames of the journal open reads
	Keys   int    // presses through the pseudo-terminal, each inspector
}

// Paint measures the inspector as a person meets it, the real binary in a
// PTYCols×PTYRows pseudo-terminal: the time from exec to the first painted
// screen (both panes' titles drawn) of the demo inspector (mcpscope with
// no target) and of mcpscope open on an o.Frames-frame journal, beside
// mcpscope --version's exec to exit in the same rounds, after a warm-up
// round; and the time from a key that moves the selection (j, k in turn)
// to the redrawn row read back from the terminal, beside the TUI model's
// own key latency in-process (bench tui, idle after a 10,000-notification
// burst).
func Paint(o PaintOptions) []Row {
	names := [4]string{"first paint, demo inspector", fmt.Sprintf("first paint, open of %s frames", count(o.Frames)),
		"key to redraw through a pty, demo", fmt.Sprintf("key to redraw through a pty, %s open", count(o.Frames))}
	fail := func(err error) []Row {
		rows := make([]Row, len(names))
		for i, n := range names {
			rows[i] = Row{Name: n, Err: err}
			if errors.Is(err, errors.ErrUnsupported) {
				rows[i] = Row{Name: n, Skip: "needs a Linux pseudo-terminal"}
			}
		}
		return rows
	}
	m, sl, err := openPTY(PTYCols, PTYRows)
	if err != nil {
		return fail(err)
	}
	m.Close()
	sl.Close()
	dir, err := os.MkdirTemp("", "mcpscope-bench-paint-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	journal := filepath.Join(dir, "big.jsonl")
	if err := WriteJournal(journal, o.Frames, true); err != nil {
		return fail(err)
	}
	env := ptyEnv(dir)
	demo, open := []string{o.Self}, []string{o.Self, "open", journal}
	var version, demoPaint, openPaint []time.Duration
	for i := -1; i < max(1, o.Runs); i++ { // round -1: a warm-up, not counted
		t0 := time.Now()
		cmd := exec.Command(o.Self, "--version")
		cmd.Env = env
		if err := cmd.Run(); err != nil {
			return fail(fmt.Errorf("mcpscope --version: %w", err))
		}
		d := time.Since(t0)
		if i >= 0 {
			version = append(version, d)
		}
		for _, p := range []struct {
			name string
			argv []string
			into *[]time.Duration
		}{{"the demo inspector", demo, &demoPaint}, {"open", open, &openPaint}} {
			s, d, err := firstPaint(p.argv, env, dir)
			if s != nil {
				s.stop()
			}
			if err != nil {
				return fail(fmt.Errorf("%s: %w", p.name, err))
			}
			if i >= 0 {
				*p.into = append(*p.into, d)
			}
		}
	}
	var lat [2]Latency
	var errs [2]error
	for i, argv := range [][]string{demo, open} {
		s, _, err := firstPaint(argv, env, dir)
		if err == nil {
			lat[i], err = ptyKeys(s, o.Keys)
		}
		errs[i] = err
		if s != nil {
			s.stop()
		}
	}
	rows := []Row{
		paintRow(names[0], demoPaint, version, DemoPaintGoal),
		paintRow(names[1], openPaint, version, OpenPaintGoal),
	}
	model, modelErr := modelKeys(o.Self, env)
	for i := range lat {
		switch {
		case errs[i] != nil:
			rows = append(rows, Row{Name: names[2+i], Err: errs[i]})
		case modelErr != nil:
			rows = append(rows, Row{Name: names[2+i], Err: fmt.Errorf("the model's own key latency: %w", modelErr)})
		default:
			rows = append(rows, keyRow(names[2+i], lat[i], model))
		}
	}
	return rows
}

// count is n the way a row names a journal's size: 1M, 100k, 5000.
func count(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}

// paintRow is a first-paint row: the median of runs, what it takes
// beyond the bare start-up of the same binary (version, the same rounds),
// the goal.
func paintRow(name string, runs, version []time.Duration, goal time.Duration) Row {
	m, v := median(runs), median(version)
	return Row{Name: name,
		Figure: fmt.Sprintf("%.1f ms exec to both panes drawn, median of %d after a warm-up; mcpscope --version exec to exit %.1f ms, so the screen costs %.1f ms more",
			ms(m), len(runs), ms(v), ms(m-v)),
		Goal: fmt.Sprintf("≤ %.0f ms", ms(goal)), Met: m <= goal}
}

// keyRow is a key-latency row: through the terminal against the model's
// own, with the goal p99 ≤ 2 × the model's p99 + KeyFrameSlack.
func keyRow(name string, pty, model Latency) Row {
	goal := 2*model.P99 + KeyFrameSlack
	return Row{Name: name,
		Figure: fmt.Sprintf("p50 %.2f ms p99 %.2f ms (%d presses); the model in-process p50 %.2f ms p99 %.2f ms", ms(pty.P50), ms(pty.P99), pty.Samples, ms(model.P50), ms(model.P99)),
		Goal:   fmt.Sprintf("p99 ≤ 2 × %.2f + %.0f = %.2f ms", ms(model.P99), ms(KeyFrameSlack), ms(goal)),
		Met:    pty.P99 <= goal}
}

// modelKeys is the TUI model's key latency in-process, a child of its
// own: bench tui, idle after a burst of 10,000 notifications.
func modelKeys(self string, env []string) (Latency, error) {
	p, err := runProc([]string{self, "bench", "tui", "--burst", "10000", "--keys", "3s"}, env, true)
	if err != nil {
		return Latency{}, err
	}
	t, err := ParseTUI(string(p.Stdout))
	if err != nil {
		return Latency{}, err
	}
	if t.Keys.Samples == 0 {
		return Latency{}, errors.New("bench tui pressed no keys")
	}
	return t.Keys, nil
}

// ptyEnv is the environment of the inspectors the paint rows start: a
// terminal's, with the state, config, cache and data directories under
// dir (the demo's journal goes there, not into the user's).
func ptyEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "XDG_") && !strings.HasPrefix(kv, "TERM=") && !strings.HasPrefix(kv, "NO_COLOR=") {
			env = append(env, kv)
		}
	}
	for _, d := range []string{"STATE", "CONFIG", "CACHE", "DATA"} {
		env = append(env, "XDG_"+d+"_HOME="+filepath.Join(dir, strings.ToLower(d)))
	}
	return append(env, "TERM=xterm-256color")
}

// paneTitles are what only a painted screen shows: both panes' titles
// with their counts.
var paneTitles = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{regexp.MustCompile(`Requests \d`), regexp.MustCompile(`Notifications \d`)}
})

// Painted reports whether the bytes a terminal received so far draw the
// inspector's first screen: both pane titles, escape sequences aside.
func Painted(seen []byte) bool {
	text := ansi.Strip(string(seen))
	for _, re := range paneTitles() {
		if !re.MatchString(text) {
			return false
		}
	}
	return true
}

// selectionMark is the glyph of the selected row: drawn again wherever
// the selection moves.
var selectionMark = []byte("▸")

// Moved reports whether the bytes a terminal received since a key draw the
// selection somewhere: the row the key moved it to.
func Moved(seen []byte) bool { return bytes.Contains(seen, selectionMark) }

// ptySession is a child running in a pseudo-terminal, its output read
// back in chunks. Nothing it writes is ever printed.
type ptySession struct {
	cmd    *exec.Cmd
	master *os.File
	out    chan []byte
	done   chan struct{}
	seen   []byte
	start  time.Time
}

// startPTY starts argv in a new pseudo-terminal; start is when the exec
// was asked for.
func startPTY(argv, env []string, dir string) (*ptySession, error) {
	master, slave, err := openPTY(PTYCols, PTYRows)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = ptyAttr()
	s := &ptySession{cmd: cmd, master: master, out: make(chan []byte, 1024), done: make(chan struct{})}
	s.start = time.Now()
	err = cmd.Start()
	slave.Close() // the child's now: its exit ends the reads
	if err != nil {
		master.Close()
		return nil, err
	}
	go s.read()
	return s, nil
}

func (s *ptySession) read() {
	defer close(s.out)
	buf := make([]byte, 64<<10)
	for {
		n, err := s.master.Read(buf)
		if n > 0 {
			select {
			case s.out <- bytes.Clone(buf[:n]):
			case <-s.done:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// take adds a chunk to what was seen, keeping at most the last 4 MiB.
func (s *ptySession) take(b []byte) {
	s.seen = append(s.seen, b...)
	if len(s.seen) > 4<<20 {
		s.seen = append(s.seen[:0], s.seen[len(s.seen)-2<<20:]...)
	}
}

// wait reads until match holds for what was seen, within limit, and
// returns when it did.
func (s *ptySession) wait(limit time.Duration, match func([]byte) bool) (time.Time, error) {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for !match(s.seen) {
		select {
		case b, ok := <-s.out:
			if !ok {
				return time.Time{}, fmt.Errorf("the terminal closed; its screen ended %q", s.tail())
			}
			s.take(b)
		case <-timer.C:
			return time.Time{}, fmt.Errorf("not within %v; the screen ended %q", limit, s.tail())
		}
	}
	return time.Now(), nil
}

// settle reads until nothing came for quiet, within limit.
func (s *ptySession) settle(quiet, limit time.Duration) error {
	q, end := time.NewTimer(quiet), time.NewTimer(limit)
	defer q.Stop()
	defer end.Stop()
	for {
		select {
		case b, ok := <-s.out:
			if !ok {
				return fmt.Errorf("the terminal closed; its screen ended %q", s.tail())
			}
			s.take(b)
			q.Reset(quiet)
		case <-q.C:
			return nil
		case <-end.C:
			return fmt.Errorf("the screen did not settle (%v without a change) within %v", quiet, limit)
		}
	}
}

// drain takes what has come without waiting.
func (s *ptySession) drain() {
	for {
		select {
		case b, ok := <-s.out:
			if !ok {
				return
			}
			s.take(b)
		default:
			return
		}
	}
}

// tail is the end of the screen as text, for an error: escape sequences
// stripped, made inert.
func (s *ptySession) tail() string {
	t := strings.Join(strings.Fields(ansi.Strip(string(s.seen))), " ")
	if len(t) > 200 {
		t = t[len(t)-200:]
	}
	return termsafe.Line(t)
}

// stop ends the child as a terminal's close would (SIGTERM, then after
// five seconds SIGKILL to its process group), reading its last output
// meanwhile so that it never blocks on a full terminal, and closes the
// terminal.
func (s *ptySession) stop() {
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for range s.out {
		}
	}()
	exited := make(chan struct{})
	go func() {
		_ = s.cmd.Wait()
		close(exited)
	}()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		killGroup(s.cmd.Process)
		<-exited
	}
	close(s.done)
	s.master.Close()
	<-drained
}

// firstPaint starts argv in a pseudo-terminal and times exec to the first
// painted screen. The session, when there is one, is the caller's to stop.
func firstPaint(argv, env []string, dir string) (*ptySession, time.Duration, error) {
	s, err := startPTY(argv, env, dir)
	if err != nil {
		return nil, 0, err
	}
	at, err := s.wait(30*time.Second, Painted)
	if err != nil {
		return s, 0, fmt.Errorf("no first screen: %w", err)
	}
	return s, at.Sub(s.start), nil
}

// keyPace is the gap between a redraw and the next key: fast typing.
const keyPace = 25 * time.Millisecond

// ptyKeys waits for s's screen to settle (start-up calls answered, a
// journal read to its end), moves the selection to the first row, then
// presses j and k in turn n times, each timed from the write to the
// redrawn selection read back.
func ptyKeys(s *ptySession, n int) (Latency, error) {
	if err := s.settle(time.Second, 2*time.Minute); err != nil {
		return Latency{}, err
	}
	if _, err := s.master.Write([]byte("g")); err != nil {
		return Latency{}, err
	}
	if err := s.settle(time.Second, 30*time.Second); err != nil {
		return Latency{}, err
	}
	var d []time.Duration
	for i := 0; i < max(1, n); i++ {
		s.drain()
		s.seen = s.seen[:0]
		key := []byte("j")
		if i%2 == 1 {
			key = []byte("k")
		}
		t0 := time.Now()
		if _, err := s.master.Write(key); err != nil {
			return Latency{}, err
		}
		at, err := s.wait(5*time.Second, Moved)
		if err != nil {
			return Latency{}, fmt.Errorf("press %d (%s): the selection was not redrawn: %w", i+1, key, err)
		}
		d = append(d, at.Sub(t0))
		time.Sleep(keyPace)
	}
	return latency(d), nil
}

// LoadAverage is the 1-, 5- and 15-minute load average, "unknown" where
// /proc/loadavg is not there: the rows' figures depend on it.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}
