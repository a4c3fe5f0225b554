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
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"mcpscope/proxy"
	"mcpscope/session"
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
	m := ui.New(ui.Options{Session: s, Clipboard: func(string) error { return nil }, StateStore: &session.FileStore{Dir: dir}})
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
	Frames     int   // notifications the host read through the proxy
	PeakRSSKiB int64 // the proxy's VmHWM
	RSSKiB     int64 // the proxy's VmRSS when the viewer measured itself
	Attach     AttachResult
	Err        error // the row could not be measured (the viewer was dropped, say)
}

// proxyName names the bench's proxy (its socket is in a private dir).
const proxyName = "mcpscope-bench-memory"

// ProxyAttach runs `mcpscope proxy` over a flood server of n
// notifications, this process its host (initialize, then every line read),
// and `mcpscope bench attach` as its viewer from before the flood starts.
// Once the host has read the flood and the viewer has seen every
// notification and idled for idle, it reads the proxy's RSS.
func ProxyAttach(self string, n int, dir, idle string) (ProxyResult, error) {
	r := ProxyResult{}
	pdir, err := os.MkdirTemp(dir, "proxy-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(pdir)
	env := append(os.Environ(), "XDG_STATE_HOME="+pdir, "XDG_CONFIG_HOME="+pdir, "XDG_CACHE_HOME="+pdir, "XDG_RUNTIME_DIR="+pdir)
	px := exec.Command(self, "proxy", "--name", proxyName, "--journal", filepath.Join(pdir, "p.jsonl"), "--",
		self, "bench", "serve", "--burst", strconv.Itoa(n))
	px.Env = env
	var perr bytes.Buffer
	px.Stderr = &perr
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
		return r, fmt.Errorf("%w\nthe proxy said: %s", err, tail(perr.String(), 2000))
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
	// The viewer has seen the flood and idled: now the proxy's figures.
	status := fmt.Sprintf("/proc/%d/status", px.Process.Pid)
	r.RSSKiB, r.PeakRSSKiB = statusField(status, "VmRSS"), statusField(status, "VmHWM")
	if err := at.Wait(); err != nil {
		return fail(fmt.Errorf("the viewer: %w: %s", err, tail(aerr.String(), 2000)))
	}
	return r, nil
}
