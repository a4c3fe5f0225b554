package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"mcpscope/internal/gcgoal"
	"mcpscope/internal/termsafe"
	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/ui"
)

// Memory goals (issue 20): a session of any length costs the same memory.
const (
	// OpenGoalMiB bounds `open` of a journal of any size, at its peak
	// (issue 41: the read-back's peak is what a person's machine feels).
	OpenGoalMiB = 150
	// TUIGoalMiB bounds the TUI at the largest flood; TUIFlat is how much
	// it may grow from the smallest size to the largest.
	TUIGoalMiB = 200
	TUIFlat    = 0.10
)

// OpenResult is what the `open` child measured about itself.
type OpenResult struct {
	Frames     int
	Seconds    float64 // until the journal was loaded
	PeakRSSKiB int64   // VmHWM
	RSSKiB     int64   // VmRSS once loaded and an idle spell later
	HeapMiB    float64 // live heap then (after a GC)
	IndexMiB   float64 // index records memory holds
}

// Open measures what `mcpscope open FILE` holds: the session reading the
// journal in the background and the TUI's model pulling from it a frame
// at a time, headless, until the journal is loaded; then an idle spell.
func Open(path string, idle time.Duration) (OpenResult, error) {
	var r OpenResult
	dir, err := os.MkdirTemp("", "mcpscope-bench-open-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	start := time.Now()
	s, _, err := session.Open(path)
	if err != nil {
		return r, err
	}
	defer s.Close()
	gc := gcgoal.AfterReadBack(s, gcgoal.BigJournal) // as open does
	defer gc.Release()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := ui.New(ui.Options{Session: s, Context: ctx, Clipboard: func(string) error { return nil }, StateStore: &statestore.FileStore{Dir: dir}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	frame := func() {
		m.Pull()
		_ = m.Render()
	}
	tick := time.NewTicker(frameTime) // a frame at the rate a terminal draws, until the reading ends
	defer tick.Stop()
	for loaded := false; !loaded; {
		frame()
		select {
		case <-s.Loaded():
			loaded = true
		case <-tick.C:
		}
	}
	frame()
	r.Seconds = time.Since(start).Seconds()
	<-gc.Settled()
	if err := s.Loading().Err; err != nil {
		return r, fmt.Errorf("open %s: %w", path, err)
	}
	for end := time.Now().Add(idle); time.Now().Before(end); time.Sleep(frameTime) {
		frame()
	}
	r.Frames = s.Store().Len()
	writeMemBreakdown()
	r.RSSKiB = procStatus("VmRSS")
	r.PeakRSSKiB = procStatus("VmHWM")
	r.IndexMiB = float64(s.Store().IndexMemory()) / (1 << 20)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	r.HeapMiB = float64(ms.HeapAlloc) / (1 << 20)
	if err := writeHeapProfile(); err != nil {
		return r, err
	}
	runtime.KeepAlive(m)
	runtime.KeepAlive(s)
	return r, nil
}

// HeapProfileEnv names a file the open and TUI children write a heap
// profile to once measured (go tool pprof -sample_index=inuse_space),
// for finding what the memory rows hold.
const HeapProfileEnv = "MCPSCOPE_BENCH_HEAPPROFILE"

// MemBreakdownEnv names a file the open child writes, at the moment it
// measures its RSS, what makes that RSS up: the kernel's view
// (/proc/self/smaps_rollup) and the runtime's (/memory/classes/...).
const MemBreakdownEnv = "MCPSCOPE_BENCH_MEMBREAKDOWN"

func writeMemBreakdown() {
	path := os.Getenv(MemBreakdownEnv)
	if path == "" {
		return
	}
	var b strings.Builder
	if roll, err := os.ReadFile("/proc/self/smaps_rollup"); err == nil {
		b.Write(roll)
	}
	descs := metrics.All()
	var samples []metrics.Sample
	for _, d := range descs {
		if strings.HasPrefix(d.Name, "/memory/classes/") || strings.HasPrefix(d.Name, "/gc/gogc") || strings.HasPrefix(d.Name, "/gc/gomemlimit") || strings.HasPrefix(d.Name, "/gc/heap/goal") {
			samples = append(samples, metrics.Sample{Name: d.Name})
		}
	}
	metrics.Read(samples)
	for _, sm := range samples {
		if sm.Value.Kind() == metrics.KindUint64 && !strings.HasSuffix(sm.Name, ":bytes") {
			fmt.Fprintf(&b, "%-50s %10d\n", sm.Name, sm.Value.Uint64())
		} else if sm.Value.Kind() == metrics.KindUint64 {
			fmt.Fprintf(&b, "%-50s %10.1f MiB\n", sm.Name, float64(sm.Value.Uint64())/(1<<20))
		}
	}
	_ = os.WriteFile(path, []byte(b.String()), 0o600)
}

func writeHeapProfile() error {
	path := os.Getenv(HeapProfileEnv)
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write the heap profile (%s): %w", HeapProfileEnv, err)
	}
	defer f.Close()
	return pprof.Lookup("heap").WriteTo(f, 0)
}

// CPUProfileEnv names a file that mcpscope proxy (HTTP or stdio),
// mcpscope journal and mcpscope record write a CPU profile of their whole
// run to (go tool pprof), for finding where the proxy, read-back and
// record rows' CPU goes.
const CPUProfileEnv = "MCPSCOPE_BENCH_CPUPROFILE"

// StartCPUProfile starts the CPU profile CPUProfileEnv names, if it names
// one; the function it returns stops it and closes the file.
func StartCPUProfile() (stop func(), err error) {
	path := os.Getenv(CPUProfileEnv)
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("write the CPU profile (%s): %w", CPUProfileEnv, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("start the CPU profile (%s): %w", CPUProfileEnv, err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// String is the child's one-line report, read back by ParseOpen.
func (r OpenResult) String() string {
	return fmt.Sprintf("frames=%d seconds=%.3f peak=%d rss=%d heap=%.1f index=%.2f", r.Frames, r.Seconds, r.PeakRSSKiB, r.RSSKiB, r.HeapMiB, r.IndexMiB)
}

// ParseOpen reads an OpenResult back from its String.
func ParseOpen(s string) (OpenResult, error) {
	var r OpenResult
	if _, err := fmt.Sscanf(strings.TrimSpace(s), "frames=%d seconds=%f peak=%d rss=%d heap=%f index=%f",
		&r.Frames, &r.Seconds, &r.PeakRSSKiB, &r.RSSKiB, &r.HeapMiB, &r.IndexMiB); err != nil {
		return r, fmt.Errorf("read the open child's report %q: %w", s, err)
	}
	return r, nil
}

// MemoryOptions configure Memory. Sizes are frame counts, smallest
// first; a test runs them tiny.
type MemoryOptions struct {
	Self       string        // the mcpscope binary, run as the children
	OpenSizes  []int         // journal sizes `open` is measured at
	TUISizes   []int         // flood sizes the TUI is measured at
	Dir        string        // where the journals are written (removed after)
	OpenIdle   string        // the open child's idle spell (a duration; "" for its default)
	SkipStdio  bool          // measure open on HTTP journals only
	TUIRateFor time.Duration // after the burst, a 10,000/s flood for this long (0: none)
	AttachIdle string        // the attach child's idle spell (a duration; "" for its default)
	SkipProxy  bool          // no proxy-with-a-viewer rows
	BigLine    int           // bytes of the one huge line the big-line rows read (0: none)
}

// OpenRow is `open` at one size and journal kind.
type OpenRow struct {
	Frames      int
	HTTP        bool
	JournalSize int64
	IndexSize   int64
	Open        OpenResult
}

// MemoryResult is every memory row.
type MemoryResult struct {
	Open  []OpenRow
	TUI   []TUIResult
	Proxy []ProxyResult // a stdio proxy carrying a flood of each TUI size, a viewer attached
	Big   []BigLineRow  // the whole-journal readers over one huge line
}

// Memory measures the memory rows: `open` of journals of each size (HTTP
// and stdio), the index file's size on disk, the TUI under a flood of
// each size, and a proxy carrying a flood of each size with an attach
// viewer following it, each in a child process of its own.
func Memory(o MemoryOptions) (MemoryResult, error) {
	var r MemoryResult
	env := []string{"XDG_STATE_HOME=" + o.Dir, "XDG_CACHE_HOME=" + o.Dir}
	for _, n := range o.OpenSizes {
		for _, http := range []bool{true, false} {
			if !http && o.SkipStdio {
				continue
			}
			row, err := measureOpen(o, env, n, http)
			if err != nil {
				return r, err
			}
			r.Open = append(r.Open, row)
		}
	}
	for _, n := range o.TUISizes {
		args := []string{o.Self, "bench", "tui", "--burst", strconv.Itoa(n)}
		if o.TUIRateFor > 0 {
			args = append(args, "--rate", "10000", "--keys", o.TUIRateFor.String())
		}
		p, err := runProc(args, env, true)
		if err != nil {
			return r, fmt.Errorf("tui at %d: %w", n, err)
		}
		t, err := ParseTUI(string(p.Stdout))
		if err != nil {
			return r, err
		}
		r.TUI = append(r.TUI, t)
	}
	for _, n := range o.TUISizes {
		if o.SkipProxy {
			break
		}
		// A viewer the proxy dropped is a finding, not the bench failing:
		// the row says so and the other rows still print.
		p, err := ProxyAttach(o.Self, n, o.Dir, o.AttachIdle, ProxyGCWait)
		if err != nil {
			p = ProxyResult{Frames: n, Err: err}
		}
		r.Proxy = append(r.Proxy, p)
	}
	if o.BigLine > 0 {
		big, err := BigLine(o.Self, o.Dir, env, o.BigLine)
		if err != nil {
			return r, err
		}
		r.Big = big
	}
	return r, nil
}

func measureOpen(o MemoryOptions, env []string, n int, http bool) (OpenRow, error) {
	row := OpenRow{Frames: n, HTTP: http}
	kind := "stdio"
	if http {
		kind = "http"
	}
	path := filepath.Join(o.Dir, fmt.Sprintf("open-%s-%d.jsonl", kind, n))
	if err := WriteJournal(path, n, http); err != nil {
		return row, fmt.Errorf("write a %d-frame journal: %w", n, err)
	}
	defer os.Remove(path)
	defer journal.RemoveIndex(path)
	args := []string{o.Self, "bench", "open", path}
	if o.OpenIdle != "" {
		args = append(args, "--idle", o.OpenIdle)
	}
	p, err := runProc(args, env, true)
	if err != nil {
		return row, fmt.Errorf("open at %d: %w", n, err)
	}
	if row.Open, err = ParseOpen(string(p.Stdout)); err != nil {
		return row, err
	}
	if st, err := os.Stat(path); err == nil {
		row.JournalSize = st.Size()
	}
	row.IndexSize = journal.IndexSize(path)
	return row, nil
}

func metWord(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT MET"
}

// PrintMemory prints the memory rows, each with its goal and whether it
// is met.
func PrintMemory(w io.Writer, r MemoryResult) {
	fmt.Fprintf(w, "\nmemory: a session of any length costs the same (RSS: VmRSS once loaded and idle; peak: VmHWM)\n")
	for _, o := range r.Open {
		kind := "stdio"
		if o.HTTP {
			kind = "HTTP"
		}
		peak := mib(o.Open.PeakRSSKiB)
		fmt.Fprintf(w, "  open, %d-frame %s journal (%.0f MB): RSS %.1f MiB (peak %.1f MiB, heap %.1f MiB) after %.1fs   goal peak ≤ %d MB   %s\n",
			o.Open.Frames, kind, float64(o.JournalSize)/1e6, mib(o.Open.RSSKiB), peak, o.Open.HeapMiB, o.Open.Seconds, OpenGoalMiB,
			metWord(peak*(1<<20) <= OpenGoalMiB*1e6))
	}
	openFlat(w, r.Open)
	for _, o := range r.Open {
		if o.Open.Frames > 0 && o.IndexSize > 0 {
			per := float64(o.IndexSize) / float64(o.Open.Frames) // bytes a frame: MB a million
			fmt.Fprintf(w, "  index on disk, %s journal: %.1f MB per million frames (%d-byte records), memory holds %.1f MiB of it   goal: on disk, a window in memory   %s\n",
				map[bool]string{true: "HTTP", false: "stdio"}[o.HTTP], per, journal.IndexRecord, o.Open.IndexMiB, metWord(o.Open.IndexMiB <= 8))
			break
		}
	}
	for i, t := range r.TUI {
		line := fmt.Sprintf("  TUI after a %d-notification burst: RSS %.1f MiB (peak %.1f MiB, heap %.1f MiB)", t.Frames, mib(t.RSSAfterKiB), mib(t.PeakRSSKiB), t.HeapMiB)
		flatLine(w, line, i, t.RSSAfterKiB, r.TUI[0].RSSAfterKiB, r.TUI[0].Frames)
	}
	for i, p := range r.Proxy {
		line := fmt.Sprintf("  proxy carrying a %d-notification flood, a viewer attached:", p.Frames)
		if p.Err != nil {
			fmt.Fprintf(w, "%s failed: %s   goal within %.0f %% and ≤ %d MB   NOT MET\n", line, termsafe.Line(p.Err.Error()), 100*TUIFlat, TUIGoalMiB)
			continue
		}
		line += fmt.Sprintf(" RSS %.1f MiB after a GC, its own (anon) %.1f MiB (peak %.1f MiB, live heap %.1f MiB)", mib(p.RSSKiB), mib(p.AnonKiB), mib(p.PeakRSSKiB), p.HeapMiB)
		flatLine(w, line, i, p.RSSKiB, r.Proxy[0].RSSKiB, r.Proxy[0].Frames)
	}
	for i, p := range r.Proxy {
		if p.Err != nil {
			continue
		}
		a := p.Attach
		line := fmt.Sprintf("  attach following it, all %d seen: RSS %.1f MiB (peak %.1f MiB, heap %.1f MiB) after %.1fs", a.Frames, mib(a.RSSKiB), mib(a.PeakRSSKiB), a.HeapMiB, a.Seconds)
		flatLine(w, line, i, a.RSSKiB, r.Proxy[0].Attach.RSSKiB, r.Proxy[0].Attach.Frames)
	}
	printBigLine(w, r.Big)
}

// openFlat prints, for each kind of journal opened at more than one
// size, how the peak and what is held grow from the smallest to the
// largest: the other half of the goal, flat (within TUIFlat).
func openFlat(w io.Writer, rows []OpenRow) {
	for _, http := range []bool{true, false} {
		var first, last *OpenRow
		for i := range rows {
			if o := &rows[i]; o.HTTP == http && o.Open.Frames > 0 && o.Open.PeakRSSKiB > 0 {
				if first == nil {
					first = o
				}
				last = o
			}
		}
		if first == nil || last == first {
			continue
		}
		kind := map[bool]string{true: "HTTP", false: "stdio"}[http]
		grow := float64(last.Open.PeakRSSKiB)/float64(first.Open.PeakRSSKiB) - 1
		held := mib(last.Open.RSSKiB) - mib(first.Open.RSSKiB)
		perFrame := held * (1 << 20) / float64(last.Open.Frames-first.Open.Frames)
		fmt.Fprintf(w, "  open, %s journals from %d to %d frames: peak %+.1f %%, held %+.1f MiB (%.1f bytes a frame)   goal flat, peak within %.0f %%   %s\n",
			kind, first.Open.Frames, last.Open.Frames, 100*grow, held, perFrame, 100*TUIFlat, metWord(grow <= TUIFlat))
	}
}

// flatLine prints a row of a session-length series: the first size as it
// is, each later one with its growth from the first and the flat goal
// (within TUIFlat of the first, ≤ TUIGoalMiB).
func flatLine(w io.Writer, line string, i int, rssKiB, baseKiB int64, baseFrames int) {
	if i == 0 {
		fmt.Fprintf(w, "%s\n", line)
		return
	}
	if baseKiB <= 0 { // the first size failed: nothing to compare with
		fmt.Fprintf(w, "%s   no figure at %d to compare   goal within %.0f %% and ≤ %d MB   NOT MET\n", line, baseFrames, 100*TUIFlat, TUIGoalMiB)
		return
	}
	rss := mib(rssKiB)
	grow := rss/mib(baseKiB) - 1
	fmt.Fprintf(w, "%s   %+.1f %% from %d   goal within %.0f %% and ≤ %d MB   %s\n", line, 100*grow, baseFrames, 100*TUIFlat, TUIGoalMiB,
		metWord(grow <= TUIFlat && rss*(1<<20) <= TUIGoalMiB*1e6))
}
