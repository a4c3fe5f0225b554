package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/connect"
	"mcpscope/statestore"
	"mcpscope/ui"
)

// TUIResult is what the TUI model under a flood measured about itself.
type TUIResult struct {
	Frames       int     // notifications the session took in
	BurstSeconds float64 // how long the burst took to reach the model
	PeakRSSKiB   int64   // VmHWM: the process's peak
	RSSBurstKiB  int64   // VmRSS when the burst was in
	RSSEndKiB    int64   // VmRSS when the flood ended
	RSSAfterKiB  int64   // VmRSS IdleAfter later, the model still pulling
	HeapMiB      float64 // live heap after the flood (after a GC)
	FirstRow     bool    // scrolled to the top, the pane shows notification "n 0"
	Keys         Latency // key presses during the paced flood
	PacedRate    float64 // notifications a second during the key presses
}

// Latency summarises key-to-frame times.
type Latency struct {
	P50, P99, Max time.Duration
	Samples       int
}

func latency(d []time.Duration) Latency {
	if len(d) == 0 {
		return Latency{}
	}
	slices.Sort(d)
	at := func(p float64) time.Duration { return d[int(p*float64(len(d)-1))] }
	return Latency{P50: at(0.5), P99: at(0.99), Max: d[len(d)-1], Samples: len(d)}
}

// TUIOptions configure TUI.
type TUIOptions struct {
	Server    []string // argv of the flood server (it floods Burst, then Rate a second for as long as the key phase lasts)
	Burst     int
	Rate      int
	KeyPhase  time.Duration // key presses while the paced flood goes on (0: none)
	IdleAfter time.Duration
}

// frameTime is how often the program lets the store wake the model.
const frameTime = 33 * time.Millisecond

// TUI runs the terminal UI's model, headless, over a real session (stdio,
// journal, store) while a server floods it, the way the program drives it:
// a pull and a render at most once a frame. It measures memory during and
// after the flood, key latency during a paced flood, and that scrolling
// back to the first notification works.
func TUI(o TUIOptions) (TUIResult, error) {
	var r TUIResult
	dir, err := os.MkdirTemp("", "mcpscope-bench-tui-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	s, err := connect.Connect(ctx, connect.Spec{Command: o.Server, Journal: filepath.Join(dir, "tui.jsonl"), Era: "legacy",
		Timeout: -1, MaxTimeout: -1, NoState: true})
	if err != nil {
		return r, err
	}
	defer s.Close()
	m := ui.New(ui.Options{Session: s, Clipboard: func(string) error { return nil }, StateStore: &statestore.FileStore{Dir: dir}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Press("focus-next") // the notifications pane
	frame := func() {
		m.Pull()
		_ = m.Render()
	}
	start := time.Now()
	for s.Info().Notifications < o.Burst {
		frame()
		time.Sleep(frameTime)
	}
	frame()
	r.BurstSeconds = time.Since(start).Seconds()
	r.RSSBurstKiB = procStatus("VmRSS")

	if o.KeyPhase > 0 {
		before, t0 := s.Info().Notifications, time.Now()
		r.Keys = latency(pressKeys(m, o.KeyPhase))
		r.PacedRate = float64(s.Info().Notifications-before) / time.Since(t0).Seconds()
	}
	frame()
	r.RSSEndKiB = procStatus("VmRSS")
	for end := time.Now().Add(o.IdleAfter); time.Now().Before(end); time.Sleep(frameTime) {
		frame()
	}
	r.RSSAfterKiB = procStatus("VmRSS")
	r.Frames = s.Info().Notifications

	for i := 0; i < 8 && strings.Contains(m.Render(), "· kind: "); i++ {
		m.Press("kind-next") // the keys left one kind shown: back to all rows
	}
	m.Press("top")
	r.FirstRow = firstRow().MatchString(ansi.Strip(m.Render()))
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	r.HeapMiB = float64(ms.HeapAlloc) / (1 << 20)
	r.PeakRSSKiB = procStatus("VmHWM")
	if err := writeHeapProfile(); err != nil {
		return r, err
	}
	runtime.KeepAlive(m)
	return r, nil
}

var firstRow = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`flood: n 0\b`) })

// pressKeys presses keys for d, a person's pace apart, and times each
// from the press to the frame drawn after it. A key that arrives when the
// store's wake-up is due waits for that pull and its frame, and the wait
// counts.
func pressKeys(m *ui.Model, d time.Duration) []time.Duration {
	names := []string{"up", "down", "page-up", "page-down", "kind-next", "top", "down", "page-down", "follow", "up"}
	var lat []time.Duration
	lastPull := time.Now()
	for end := time.Now().Add(d); time.Now().Before(end); {
		t0 := time.Now()
		if t0.Sub(lastPull) >= frameTime {
			m.Pull()
			_ = m.Render()
			lastPull = time.Now()
		}
		m.Press(names[len(lat)%len(names)])
		_ = m.Render()
		lat = append(lat, time.Since(t0))
		time.Sleep(time.Millisecond)
	}
	return lat
}

// procStatus reads a kB figure (VmRSS, VmHWM) of this process; 0 where
// /proc is not there.
func procStatus(field string) int64 { return statusField("/proc/self/status", field) }

// statusField reads a kB figure from a /proc/PID/status file.
func statusField(path, field string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// String is the child's one-line report, read back by ParseTUI.
func (r TUIResult) String() string {
	return fmt.Sprintf("frames=%d burst=%.3f peak=%d rssburst=%d rssend=%d rssafter=%d heap=%.1f first=%t p50=%d p99=%d max=%d samples=%d paced=%.0f",
		r.Frames, r.BurstSeconds, r.PeakRSSKiB, r.RSSBurstKiB, r.RSSEndKiB, r.RSSAfterKiB, r.HeapMiB, r.FirstRow,
		r.Keys.P50.Microseconds(), r.Keys.P99.Microseconds(), r.Keys.Max.Microseconds(), r.Keys.Samples, r.PacedRate)
}

// ParseTUI reads a TUIResult back from its String.
func ParseTUI(s string) (TUIResult, error) {
	var r TUIResult
	var p50, p99, mx int64
	_, err := fmt.Sscanf(strings.TrimSpace(s), "frames=%d burst=%f peak=%d rssburst=%d rssend=%d rssafter=%d heap=%f first=%t p50=%d p99=%d max=%d samples=%d paced=%f",
		&r.Frames, &r.BurstSeconds, &r.PeakRSSKiB, &r.RSSBurstKiB, &r.RSSEndKiB, &r.RSSAfterKiB, &r.HeapMiB, &r.FirstRow,
		&p50, &p99, &mx, &r.Keys.Samples, &r.PacedRate)
	r.Keys.P50, r.Keys.P99, r.Keys.Max = time.Duration(p50)*time.Microsecond, time.Duration(p99)*time.Microsecond, time.Duration(mx)*time.Microsecond
	if err != nil {
		return r, fmt.Errorf("read the TUI child's report %q: %w", s, err)
	}
	return r, nil
}
