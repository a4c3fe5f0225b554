package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"mcpscope/proxy"
	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/ui"
)

// AttachResult is what the attach child (a viewer following a proxy)
// measured about itself once its session had seen the whole flood.
type AttachResult struct {
	Frames     int     // notifications the viewer's session saw
	Seconds    float64 // from attaching until it had seen them all
	PeakRSSKiB int64   // VmHWM
	RSSKiB     int64   // VmRSS an idle spell after the last one
	HeapMiB    float64 // live heap then (after a GC)
}

// ProxySocket is where the bench's proxy with process id pid listens, in
// this process's environment (the attach child has the proxy's).
func ProxySocket(pid int) string { return proxy.SocketPath(proxy.SocketDir(), proxyName, pid) }

// Attach is `mcpscope attach` over the proxy listening on socket, its
// model headless as the TUI row drives it (a pull and a render at most
// once a frame): it says "attached" on ready once its session started,
// follows until the session has seen frames notifications, pulls for an
// idle spell, and measures itself.
func Attach(socket string, frames int, idle time.Duration, ready io.Writer) (AttachResult, error) {
	var r AttachResult
	dir, err := os.MkdirTemp("", "mcpscope-bench-attach-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	conn, err := proxy.Dial(context.Background(), socket, 10*time.Second)
	if err != nil {
		return r, fmt.Errorf("attach to the proxy on %s: %w", socket, err)
	}
	a := proxy.NewAttach(conn)
	s, err := session.Follow(a, session.Options{IDPrefix: fmt.Sprintf("mcpscope-attach-%d-", os.Getpid())})
	if err != nil {
		a.Close()
		return r, err
	}
	defer s.Close()
	if err := s.Start(); err != nil {
		return r, fmt.Errorf("attach to the proxy on %s: %w", socket, err)
	}
	m := ui.New(ui.Options{Session: s, Clipboard: func(string) error { return nil }, StateStore: &statestore.FileStore{Dir: dir}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Press("focus-next") // the notifications pane
	frame := func() {
		m.Pull()
		_ = m.Render()
	}
	fmt.Fprintln(ready, "attached")
	start := time.Now()
	for s.Info().Notifications < frames {
		select {
		case <-a.Done():
			return r, fmt.Errorf("the proxy ended (%s) when the viewer had seen %d of %d notifications", a.Ended(), s.Info().Notifications, frames)
		default:
		}
		frame()
		time.Sleep(frameTime)
	}
	frame()
	r.Seconds = time.Since(start).Seconds()
	for end := time.Now().Add(idle); time.Now().Before(end); time.Sleep(frameTime) {
		frame()
	}
	r.Frames = s.Info().Notifications
	r.RSSKiB = procStatus("VmRSS")
	r.PeakRSSKiB = procStatus("VmHWM")
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	r.HeapMiB = float64(ms.HeapAlloc) / (1 << 20)
	if err := writeHeapProfile(); err != nil {
		return r, err
	}
	runtime.KeepAlive(m)
	return r, nil
}

// String is the child's one-line report, read back by ParseAttach.
func (r AttachResult) String() string {
	return fmt.Sprintf("frames=%d seconds=%.3f peak=%d rss=%d heap=%.1f", r.Frames, r.Seconds, r.PeakRSSKiB, r.RSSKiB, r.HeapMiB)
}

// ParseAttach reads an AttachResult back from its String.
func ParseAttach(s string) (AttachResult, error) {
	var r AttachResult
	if _, err := fmt.Sscanf(strings.TrimSpace(s), "frames=%d seconds=%f peak=%d rss=%d heap=%f",
		&r.Frames, &r.Seconds, &r.PeakRSSKiB, &r.RSSKiB, &r.HeapMiB); err != nil {
		return r, fmt.Errorf("read the attach child's report %q: %w", s, err)
	}
	return r, nil
}

// ProxyResult is a stdio proxy carrying a flood with a viewer attached:
// the proxy's memory and the viewer's, once the viewer has seen it all.
type ProxyResult struct {
	Frames     int     // notifications the host read through the proxy
	PeakRSSKiB int64   // the proxy's VmHWM
	RSSKiB     int64   // the proxy's VmRSS after a GC cycle once the viewer had seen it all (the median of a few samples)
	HeapMiB    float64 // the proxy's live heap at the end of that cycle, as it reported it
	// AnonKiB is the part of RSSKiB that is the proxy's own (RssAnon):
	// the rest, about 20 MiB, is the binary's pages, shared with every
	// mcpscope process.
	AnonKiB int64
	Attach  AttachResult
	Err     error // the row could not be measured (the viewer was dropped, say)
}

// proxyName names the bench's proxy (its socket is in a private dir).
const proxyName = "mcpscope-bench-memory"

// ProxyAttach runs `mcpscope proxy` over a flood server of n
// notifications, this process its host (initialize, then every line read),
// and `mcpscope bench attach` as its viewer from before the flood starts.
// Once the host has read the flood and the viewer has seen every
// notification and idled for idle, it waits up to gcWait for the proxy to
// report a GC cycle (0: not at all) and reads the proxy's RSS.
func ProxyAttach(self string, n int, dir, idle string, gcWait time.Duration) (ProxyResult, error) {
	r := ProxyResult{}
	pdir, err := os.MkdirTemp(dir, "proxy-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(pdir)
	run, err := runtimeDir("attach")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(run)
	env := append(os.Environ(), "XDG_STATE_HOME="+pdir, "XDG_CONFIG_HOME="+pdir, "XDG_CACHE_HOME="+pdir, "XDG_RUNTIME_DIR="+run)
	px := exec.Command(self, "proxy", "--name", proxyName, "--journal", filepath.Join(pdir, "p.jsonl"), "--",
		self, "bench", "serve", "--burst", strconv.Itoa(n))
	// The proxy reports its GC cycles (gctrace) so that it is measured
	// after one that began once the flood was over, not wherever in a
	// cycle the flood happened to end.
	px.Env = append(env[:len(env):len(env)], "GODEBUG=gctrace=1")
	gcs := newGCTrace()
	px.Stderr = gcs
	in, err := px.StdinPipe()
	if err != nil {
		return r, err
	}
	out, err := px.StdoutPipe()
	if err != nil {
		return r, err
	}
	if err := px.Start(); err != nil {
		return r, err
	}
	fail := func(err error) (ProxyResult, error) {
		return r, fmt.Errorf("%w\nthe proxy said: %s", err, tail(gcs.String(), 2000))
	}
	defer func() { // the host closing stdin ends the proxy and its server
		in.Close()
		guard := time.AfterFunc(time.Minute, func() { px.Process.Kill() })
		px.Wait()
		guard.Stop()
	}()
	lines := bufio.NewReaderSize(out, 1<<16)
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench-host","version":"1"}}}`+"\n")
	for {
		line, err := lines.ReadSlice('\n')
		if bytes.Contains(line, []byte(`"id":1,`)) {
			break
		}
		if err != nil && err != bufio.ErrBufferFull {
			return fail(fmt.Errorf("no answer to initialize through the proxy: %w", err))
		}
	}
	// The proxy listens for viewers before it reads the host's stdin, so
	// its socket is there once initialize is answered.
	args := []string{"bench", "attach", "--frames", strconv.Itoa(n), "--pid", strconv.Itoa(px.Process.Pid)}
	if idle != "" {
		args = append(args, "--idle", idle)
	}
	at := exec.Command(self, args...)
	at.Env = env
	var aerr bytes.Buffer
	at.Stderr = &aerr
	aout, err := at.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	if err := at.Start(); err != nil {
		return fail(err)
	}
	defer at.Process.Kill() // a no-op once it has exited
	report := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(aout)
		for sc.Scan() {
			report <- sc.Text()
		}
		close(report)
	}()
	attachFail := func(err error) (ProxyResult, error) {
		at.Wait()
		return fail(fmt.Errorf("%w\nthe viewer said: %s", err, tail(aerr.String(), 2000)))
	}
	if l, ok := <-report; !ok || l != "attached" {
		return attachFail(fmt.Errorf("the viewer did not attach (it said %q)", l))
	}
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	for r.Frames < n {
		line, err := lines.ReadSlice('\n')
		if err != nil {
			return attachFail(fmt.Errorf("the host read %d of %d notifications through the proxy: %w", r.Frames, n, err))
		}
		if bytes.Contains(line, []byte(`"notifications/message"`)) {
			r.Frames++
		}
	}
	// A hang guard only: a viewer that lost frames for good (a gap the
	// journal could not fill) would wait for the last one forever.
	guard := 5*time.Minute + time.Duration(n/1_000_000)*time.Minute
	var l string
	var ok bool
	select {
	case l, ok = <-report:
	case <-time.After(guard):
		at.Process.Kill()
		return attachFail(fmt.Errorf("the viewer had not seen all %d notifications within %s", n, guard))
	}
	if !ok {
		return attachFail(errors.New("the viewer ended without its report"))
	}
	if r.Attach, err = ParseAttach(l); err != nil {
		return attachFail(err)
	}
	// The viewer has seen the flood and idled: now the proxy's figures,
	// once it has been through a GC cycle begun after the flood (an idle
	// process has one at least every two minutes) and its RSS has
	// settled.
	status := fmt.Sprintf("/proc/%d/status", px.Process.Pid)
	if gcWait > 0 && !gcs.waitCycleAfter(gcs.cycles(), gcWait) {
		return attachFail(fmt.Errorf("the proxy reported no GC cycle within %s of the flood's end", gcWait))
	}
	r.RSSKiB, r.AnonKiB = settledRSS(status)
	r.PeakRSSKiB = statusField(status, "VmHWM")
	if path := os.Getenv(MemBreakdownEnv); path != "" { // what the proxy's RSS is made of
		roll, _ := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", px.Process.Pid))
		_ = os.WriteFile(path+".proxy", roll, 0o600)
	}
	r.HeapMiB = gcs.liveMiB()
	if err := at.Wait(); err != nil {
		return fail(fmt.Errorf("the viewer: %w: %s", err, tail(aerr.String(), 2000)))
	}
	return r, nil
}

// ProxyGCWait bounds the wait for the proxy's GC cycle after the flood:
// the runtime forces one every two minutes in a process that makes no
// garbage.
const ProxyGCWait = 150 * time.Second

// gcTrace reads a child's stderr with GODEBUG=gctrace=1: it counts the GC
// cycles the child reports and keeps their live heaps, and keeps every
// other line (String).
type gcTrace struct {
	rest    bytes.Buffer
	mu      sync.Mutex
	partial []byte
	n       int
	live    float64 // MB marked live by the latest cycle
	cycle   chan struct{}
}

func newGCTrace() *gcTrace { return &gcTrace{cycle: make(chan struct{})} }

// String is what the child wrote that is not a GC report.
func (g *gcTrace) String() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.rest.String()
}

func (g *gcTrace) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.partial = append(g.partial, p...)
	for {
		i := bytes.IndexByte(g.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := g.partial[:i+1]
		if live, ok := gcLive(line); ok {
			g.n++
			g.live = live
			close(g.cycle)
			g.cycle = make(chan struct{})
		} else {
			g.rest.Write(line)
		}
		g.partial = g.partial[i+1:]
	}
}

// gcLive reads the live heap (MB) of a gctrace line: "gc 7 @1.2s 1%: …,
// 40->42->21 MB, 43 MB goal, …".
func gcLive(line []byte) (float64, bool) {
	if !bytes.HasPrefix(line, []byte("gc ")) {
		return 0, false
	}
	for _, f := range strings.Split(string(line), ",") {
		f = strings.TrimSpace(f)
		if sizes, ok := strings.CutSuffix(f, " MB"); ok && strings.Count(sizes, "->") == 2 {
			live, err := strconv.ParseFloat(sizes[strings.LastIndex(sizes, "->")+2:], 64)
			return live * 1e6 / (1 << 20), err == nil
		}
	}
	return 0, false
}

func (g *gcTrace) cycles() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

func (g *gcTrace) liveMiB() float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.live
}

// waitCycleAfter waits until the child has reported more than n cycles,
// at most for d.
func (g *gcTrace) waitCycleAfter(n int, d time.Duration) bool {
	deadline := time.After(d)
	for {
		g.mu.Lock()
		done, next := g.n > n, g.cycle
		g.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-next:
		case <-deadline:
			return false
		}
	}
}

// settledRSS is VmRSS, and RssAnon, of the process whose status file is
// status once the runtime's scavenger has given back what a GC cycle
// freed: sampled every 200 ms until five samples in a row agree within
// 1 % (at most 10 s), the median of those five.
func settledRSS(status string) (rss, anon int64) {
	var rs, as []int64
	for i := 0; i < 50; i++ {
		if i > 0 {
			time.Sleep(200 * time.Millisecond)
		}
		rs, as = append(rs, statusField(status, "VmRSS")), append(as, statusField(status, "RssAnon"))
		if len(as) >= 5 && flat(as[len(as)-5:]) {
			break
		}
	}
	rs, as = slices.Clone(rs[max(0, len(rs)-5):]), slices.Clone(as[max(0, len(as)-5):])
	slices.Sort(rs)
	slices.Sort(as)
	return rs[len(rs)/2], as[len(as)/2]
}

// flat reports whether the samples agree within 1 %.
func flat(samples []int64) bool {
	lo, hi := slices.Min(samples), slices.Max(samples)
	return float64(hi-lo) <= 0.01*float64(hi)
}
