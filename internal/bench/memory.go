package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"mcpscope/session"
	"mcpscope/transport"
	"mcpscope/ui"
)

// Memory goals (issue 20): a session of any length costs the same memory.
const (
	// OpenGoalMiB bounds `open` of a journal once it is loaded.
	OpenGoalMiB = 150
	// TUIGoalMiB bounds the TUI at the largest flood; TUIFlat is how much
	// it may grow from the smallest size to the largest.
	TUIGoalMiB = 200
	TUIFlat    = 0.10
)

// WriteJournal writes a synthetic journal of about frames frames to path:
// cycles of a tools/call, progress notifications, a log line now and then
// and the result (an error or a cancel now and then). http adds what a
// Streamable HTTP journal has: request headers, SSE metadata, stream
// events. It is the bench's own generator, so a run needs nothing else.
func WriteJournal(path string, frames int, http bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	const url = "http://127.0.0.1:3001/mcp"
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	target := "stdio: bench-server"
	if http {
		target = "http: " + url
	}
	fmt.Fprintf(w, `{"format":%q,"started":%q,"target":%q,"pid":1}`+"\n", session.JournalFormat, at.Format(time.RFC3339Nano), target)
	seq := uint64(0)
	var buf []byte
	put := func(fr transport.Frame) {
		seq++
		at = at.Add(time.Millisecond)
		fr.Time = at
		buf = session.AppendRecord(buf[:0], seq, fr)
		w.Write(buf)
	}
	msg := func(dir transport.Dir, stream, raw string) {
		fr := transport.Frame{Dir: dir, Kind: transport.Message, Data: []byte(raw)}
		if http {
			fr.Meta = transport.Meta{HTTPMethod: "POST", URL: url, Stream: stream}
			if dir == transport.Out {
				fr.Meta.Headers = map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Session-Id": "S1"}
			} else {
				fr.Meta.EventType = "message"
			}
		}
		put(fr)
	}
	event := func(name, stream string, status int) {
		if http {
			put(transport.Frame{Dir: transport.Local, Kind: transport.Event, Meta: transport.Meta{Event: name, HTTPMethod: "POST", URL: url,
				Stream: stream, Status: status, Headers: map[string]string{"Content-Type": "text/event-stream"}}})
		}
	}
	msg(transport.Out, "post:0", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	msg(transport.In, "post:0", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"big","version":"1"}}}`)
	tools := []string{"search", "fetch", "get_weather", "summarise", "translate"}
	for id := 1; int(seq) < frames; id++ {
		stream, tool := "post:"+strconv.Itoa(id), tools[id%len(tools)]
		msg(transport.Out, stream, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"query":"paris weather %d","limit":10},"_meta":{"progressToken":"t%d"}}}`, id, tool, id, id))
		event(transport.EvStreamOpened, stream, 200)
		for p := 1; p <= 3; p++ {
			msg(transport.In, stream, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t%d","progress":%d,"total":3,"message":"step %d/3"}}`, id, p, p))
		}
		if id%10 == 0 {
			msg(transport.In, stream, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"cache miss"}}`)
		}
		switch {
		case id%50 == 0:
			msg(transport.In, stream, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32602,"message":"unknown argument"}}`, id))
		case id%97 == 0:
			msg(transport.Out, "", fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"user"}}`, id))
		default:
			msg(transport.In, stream, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"result %d of %s: sunny, 21°C"}]}}`, id, id, tool))
		}
		event(transport.EvStreamClosed, stream, 0)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := ui.New(ui.Options{Session: s, Context: ctx, Clipboard: func(string) error { return nil }, StateStore: &session.FileStore{Dir: dir}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	frame := func() {
		m.Pull()
		_ = m.Render()
	}
	for s.Loading().Active {
		frame()
		time.Sleep(frameTime)
	}
	frame()
	r.Seconds = time.Since(start).Seconds()
	if err := s.Loading().Err; err != nil {
		return r, fmt.Errorf("open %s: %w", path, err)
	}
	for end := time.Now().Add(idle); time.Now().Before(end); time.Sleep(frameTime) {
		frame()
	}
	r.Frames = s.Store().Len()
	r.RSSKiB = procStatus("VmRSS")
	r.PeakRSSKiB = procStatus("VmHWM")
	r.IndexMiB = float64(s.Store().IndexMemory()) / (1 << 20)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	r.HeapMiB = float64(ms.HeapAlloc) / (1 << 20)
	runtime.KeepAlive(m)
	return r, nil
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
	Open []OpenRow
	TUI  []TUIResult
}

// Memory measures the memory rows: `open` of journals of each size (HTTP
// and stdio), the index file's size on disk, and the TUI under a flood of
// each size, each in a child process of its own.
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
	defer session.RemoveIndex(path)
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
	row.IndexSize = session.IndexSize(path)
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
		rss := mib(o.Open.RSSKiB)
		fmt.Fprintf(w, "  open, %d-frame %s journal (%.0f MB): RSS %.1f MiB (peak %.1f MiB, heap %.1f MiB) after %.1fs   goal ≤ %d MB   %s\n",
			o.Open.Frames, kind, float64(o.JournalSize)/1e6, rss, mib(o.Open.PeakRSSKiB), o.Open.HeapMiB, o.Open.Seconds, OpenGoalMiB,
			metWord(rss*(1<<20) <= OpenGoalMiB*1e6))
	}
	for _, o := range r.Open {
		if o.Open.Frames > 0 && o.IndexSize > 0 {
			per := float64(o.IndexSize) / float64(o.Open.Frames) // bytes a frame: MB a million
			fmt.Fprintf(w, "  index on disk, %s journal: %.1f MB per million frames (%d-byte records), memory holds %.1f MiB of it   goal: on disk, a window in memory   %s\n",
				map[bool]string{true: "HTTP", false: "stdio"}[o.HTTP], per, session.IndexRecord, o.Open.IndexMiB, metWord(o.Open.IndexMiB <= 8))
			break
		}
	}
	for i, t := range r.TUI {
		rss := mib(t.RSSAfterKiB)
		line := fmt.Sprintf("  TUI after a %d-notification burst: RSS %.1f MiB (peak %.1f MiB, heap %.1f MiB)", t.Frames, rss, mib(t.PeakRSSKiB), t.HeapMiB)
		if i == 0 {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		base := mib(r.TUI[0].RSSAfterKiB)
		grow := rss/base - 1
		fmt.Fprintf(w, "%s   %+.1f %% from %d   goal within %.0f %% and ≤ %d MB   %s\n", line, 100*grow, r.TUI[0].Frames, 100*TUIFlat, TUIGoalMiB,
			metWord(grow <= TUIFlat && rss*(1<<20) <= TUIGoalMiB*1e6))
	}
}
