package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpscope/testkit/peers"
)

// stdioWait is generous: the machine is shared and tests run with -race.
const stdioWait = testWait

// stdioRec records frames and lets a test wait for one to arrive.
type stdioRec struct {
	mu      sync.Mutex
	frames  []Frame
	changed chan struct{}
	delay   time.Duration // a slow consumer
}

func newStdioRec() *stdioRec { return &stdioRec{changed: make(chan struct{})} }

func (r *stdioRec) sink(f Frame) {
	if r.delay > 0 {
		time.Sleep(r.delay) // simulates a slow consumer, not synchronisation
	}
	r.mu.Lock()
	r.frames = append(r.frames, f)
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

func (r *stdioRec) all() []Frame {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Frame(nil), r.frames...)
}

// waitFor returns the index and frame of the first frame matching ok.
func (r *stdioRec) waitFor(t *testing.T, what string, ok func(Frame) bool) (int, Frame) {
	t.Helper()
	deadline := time.NewTimer(stdioWait)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		for i, f := range r.frames {
			if ok(f) {
				r.mu.Unlock()
				return i, f
			}
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("no %s within %v; frames:\n%s", what, stdioWait, stdioDump(r.all()))
		}
	}
}

// waitN waits until n frames match ok.
func (r *stdioRec) waitN(t *testing.T, n int, ok func(Frame) bool) {
	t.Helper()
	deadline := time.NewTimer(stdioWait)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		seen := 0
		for _, f := range r.frames {
			if ok(f) {
				seen++
			}
		}
		ch := r.changed
		r.mu.Unlock()
		if seen >= n {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("%d of %d frames within %v", seen, n, stdioWait)
		}
	}
}

func (r *stdioRec) event(t *testing.T, name string) (int, Frame) {
	t.Helper()
	return r.waitFor(t, "event "+name, func(f Frame) bool { return f.Kind == Event && f.Meta.Event == name })
}

func (r *stdioRec) in(t *testing.T, kind Kind, data string) (int, Frame) {
	t.Helper()
	return r.waitFor(t, fmt.Sprintf("%s frame %.60q", kind, data), func(f Frame) bool {
		return f.Dir == In && f.Kind == kind && string(f.Data) == data
	})
}

// count returns how many frames match ok.
func (r *stdioRec) count(ok func(Frame) bool) int {
	n := 0
	for _, f := range r.all() {
		if ok(f) {
			n++
		}
	}
	return n
}

func stdioDump(fs []Frame) string {
	var b strings.Builder
	for i, f := range fs {
		d := string(f.Data)
		if len(d) > 80 {
			d = d[:80] + fmt.Sprintf("…(%d bytes)", len(f.Data))
		}
		fmt.Fprintf(&b, "  %d %s %s %q %+v\n", i, f.Dir, f.Kind, d, f.Meta)
	}
	return b.String()
}

// startStdio starts o and closes it when the test ends; tweak may adjust the
// transport before Start (e.g. lower maxLine below the public floor). The
// servers these tests start are POSIX programs (sh, cat, sleep, true).
func stdioStart(t *testing.T, o StdioOptions, tweak func(*Stdio)) (*Stdio, *stdioRec) {
	t.Helper()
	peers.POSIX(t, "sh, cat, sleep and true as the servers")
	s := NewStdio(o)
	if tweak != nil {
		tweak(s)
	}
	rec := newStdioRec()
	if err := s.Start(rec.sink); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, rec
}

func stdioShell(script string) StdioOptions {
	return StdioOptions{Command: script, Shell: true, Grace: 5 * time.Second}
}

// send sends synchronously and returns done's error.
func stdioSend(t *testing.T, s *Stdio, data string) error {
	t.Helper()
	errc := make(chan error, 2)
	s.Send(Outgoing{Data: []byte(data)}, func(err error) { errc <- err })
	select {
	case err := <-errc:
		select {
		case <-errc:
			t.Fatal("done called twice")
		default:
		}
		return err
	case <-time.After(stdioWait):
		t.Fatalf("done not called within %v", stdioWait)
	}
	return nil
}

func stdioWaitDone(t *testing.T, s *Stdio) {
	t.Helper()
	select {
	case <-s.Done():
	case <-time.After(stdioWait):
		t.Fatalf("Done not closed within %v", stdioWait)
	}
}

func TestStdioRoundTripCat(t *testing.T) {
	s, rec := stdioStart(t, StdioOptions{Command: "cat"}, nil)
	_, sp := rec.event(t, EvSpawned)
	if sp.Meta.PID == 0 || sp.Meta.Detail != "cat" || sp.Dir != Local {
		t.Fatalf("spawned frame: %+v", sp)
	}
	msg := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	if err := stdioSend(t, s, msg); err != nil {
		t.Fatalf("send: %v", err)
	}
	iIn, in := rec.in(t, Message, msg)
	iOut, out := rec.waitFor(t, "out frame", func(f Frame) bool { return f.Dir == Out })
	if iOut > iIn || out.Kind != Message || string(out.Data) != msg {
		t.Fatalf("out frame %d %+v must precede in frame %d", iOut, out, iIn)
	}
	for _, f := range rec.all() {
		if f.Time.IsZero() {
			t.Fatalf("frame without time: %+v", f)
		}
	}
	if in.Meta.PID != sp.Meta.PID {
		t.Fatalf("in frame pid %d, spawned %d", in.Meta.PID, sp.Meta.PID)
	}
	if got := s.Describe(); got != "stdio: cat" {
		t.Fatalf("Describe = %q", got)
	}
}

func TestStdioBannerThenMessages(t *testing.T) {
	s, rec := stdioStart(t, stdioShell(`echo "Starting server v1.2 on stdio..."; exec cat`), nil)
	rec.in(t, Garbage, "Starting server v1.2 on stdio...")
	for i := range 3 {
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, i)
		if err := stdioSend(t, s, msg); err != nil {
			t.Fatal(err)
		}
		rec.in(t, Message, msg)
	}
}

func TestStdioStderrLines(t *testing.T) {
	s, rec := stdioStart(t, stdioShell(`printf 'log one\nlog two\r\n\n' >&2; exec cat`), nil)
	rec.in(t, Stderr, "log one")
	rec.in(t, Stderr, "log two")
	if err := stdioSend(t, s, `{"id":1}`); err != nil {
		t.Fatal(err)
	}
	rec.in(t, Message, `{"id":1}`)
	if n := rec.count(func(f Frame) bool { return f.Kind == Stderr }); n != 2 {
		t.Fatalf("%d stderr frames, want 2 (empty line ignored):\n%s", n, stdioDump(rec.all()))
	}
}

func TestStdioCRLFAndLastLineWithoutNewline(t *testing.T) {
	s, rec := stdioStart(t, stdioShell(`printf '{"a":1}\r\n\r\n\nnot json\r\n{"b":2}'`), nil)
	rec.event(t, EvExited)
	stdioWaitDone(t, s)
	var got []string
	for _, f := range rec.all() {
		if f.Dir == In {
			got = append(got, f.Kind.String()+" "+string(f.Data))
		}
	}
	want := []string{`message {"a":1}`, "garbage not json", `message {"b":2}`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestStdioHugeLine(t *testing.T) {
	s, rec := stdioStart(t, StdioOptions{Command: "cat"}, nil)
	blob := strings.Repeat("a", 20<<20)
	msg := `{"jsonrpc":"2.0","id":1,"result":{"blob":"` + blob + `"}}`
	if err := stdioSend(t, s, msg); err != nil {
		t.Fatal(err)
	}
	_, in := rec.waitFor(t, "20 MB message", func(f Frame) bool { return f.Dir == In })
	if in.Kind != Message || len(in.Data) != len(msg) || string(in.Data) != msg {
		t.Fatalf("got %s frame of %d bytes, want message of %d", in.Kind, len(in.Data), len(msg))
	}
	// A small line after it arrives on its own.
	if err := stdioSend(t, s, `{"id":2}`); err != nil {
		t.Fatal(err)
	}
	rec.in(t, Message, `{"id":2}`)
}

func TestStdioLineTooLong(t *testing.T) {
	for _, tc := range []struct {
		name    string
		maxLine int
		size    int // of the long line
	}{
		{"within one read", 1000, 6000},
		{"across reads", 100_000, 300_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, rec := stdioStart(t, StdioOptions{Command: "cat"}, func(s *Stdio) { s.maxLine = tc.maxLine })
			long := strings.Repeat("x", tc.size)
			atLimit := `"` + strings.Repeat("y", tc.maxLine-2) + `"` // JSON, exactly maxLine
			for _, m := range []string{atLimit, atLimit + "\r", long + "\r", `{"ok":1}`} {
				if err := stdioSend(t, s, m); err != nil {
					t.Fatal(err)
				}
			}
			_, ev := rec.event(t, EvLineTooLong)
			if !strings.Contains(ev.Meta.Detail, "stdout line of "+strconv.Itoa(tc.size)+" bytes") {
				t.Fatalf("detail %q", ev.Meta.Detail)
			}
			rec.in(t, Message, `{"ok":1}`)
			var in []Frame
			for _, f := range rec.all() {
				if f.Dir == In {
					in = append(in, f)
				}
			}
			if len(in) != 4 {
				t.Fatalf("%d in frames, want 4:\n%s", len(in), stdioDump(rec.all()))
			}
			if in[0].Kind != Message || string(in[0].Data) != atLimit || string(in[1].Data) != atLimit {
				t.Fatalf("a line of exactly MaxLine (with or without CR) must stay whole:\n%s", stdioDump(in))
			}
			if in[2].Kind != Garbage || string(in[2].Data) != long[:4096] {
				t.Fatalf("too-long line: want garbage with its first 4096 bytes, got %s of %d", in[2].Kind, len(in[2].Data))
			}
		})
	}
}

func TestStdioStderrLineTooLong(t *testing.T) {
	s, rec := stdioStart(t, stdioShell(`head -c 6000 /dev/zero | tr '\0' e >&2; printf '\nafter\n' >&2`),
		func(s *Stdio) { s.maxLine = 1000 })
	_, ev := rec.event(t, EvLineTooLong)
	if !strings.HasPrefix(ev.Meta.Detail, "stderr line of 6000 bytes") {
		t.Fatalf("detail %q", ev.Meta.Detail)
	}
	rec.in(t, Stderr, strings.Repeat("e", 4096))
	rec.in(t, Stderr, "after")
	stdioWaitDone(t, s)
}

func TestStdioMaxLineFloor(t *testing.T) {
	if got := NewStdio(StdioOptions{Command: "x", MaxLine: 1 << 20}).maxLine; got != 16<<20 {
		t.Fatalf("MaxLine 1 MiB became %d, want the 16 MiB floor", got)
	}
	if got := NewStdio(StdioOptions{Command: "x"}).maxLine; got != 64<<20 {
		t.Fatalf("default MaxLine %d", got)
	}
}

func TestStdioExitCode(t *testing.T) {
	s, rec := stdioStart(t, stdioShell(`echo '{"id":1}'; echo bye >&2; exit 3`), nil)
	iEx, ex := rec.event(t, EvExited)
	stdioWaitDone(t, s)
	iMsg, _ := rec.in(t, Message, `{"id":1}`)
	iErr, _ := rec.in(t, Stderr, "bye")
	if iMsg > iEx || iErr > iEx {
		t.Fatalf("output must precede exited:\n%s", stdioDump(rec.all()))
	}
	if ex.Meta.ExitCode == nil || *ex.Meta.ExitCode != 3 || ex.Meta.Signal != "" {
		t.Fatalf("exited meta %+v", ex.Meta)
	}
	if code, sig, exited := s.ExitStatus(); code != 3 || sig != "" || !exited {
		t.Fatalf("ExitStatus = %d %q %v", code, sig, exited)
	}
}

func TestStdioExitSignal(t *testing.T) {
	s, rec := stdioStart(t, stdioShell(`kill -KILL $$`), nil)
	_, ex := rec.event(t, EvExited)
	stdioWaitDone(t, s)
	if ex.Meta.ExitCode != nil || ex.Meta.Signal != "killed" || !strings.Contains(ex.Meta.Detail, "SIGKILL") {
		t.Fatalf("exited meta %+v", ex.Meta)
	}
	if code, sig, exited := s.ExitStatus(); code != -1 || sig != "killed" || !exited {
		t.Fatalf("ExitStatus = %d %q %v", code, sig, exited)
	}
}

func TestStdioSendAfterExitFailsFast(t *testing.T) {
	s, rec := stdioStart(t, StdioOptions{Command: "true"}, nil)
	stdioWaitDone(t, s)
	start := time.Now()
	err := stdioSend(t, s, `{"id":1}`)
	if err == nil || !strings.Contains(err.Error(), "has exited") {
		t.Fatalf("send after exit: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("send after exit took %v", d)
	}
	rec.event(t, EvSendFailed)
	if n := rec.count(func(f Frame) bool { return f.Dir == Out }); n != 0 {
		t.Fatalf("%d out frames for a message never written", n)
	}
}

func TestStdioSendBrokenPipe(t *testing.T) {
	// The server closes its stdin but lives on: the write hits EPIPE.
	s, rec := stdioStart(t, stdioShell(`exec 0<&-; echo ready; exec sleep 60`), func(s *Stdio) { s.grace = 100 * time.Millisecond })
	rec.in(t, Garbage, "ready")
	err := stdioSend(t, s, `{"id":1}`)
	if err == nil || !strings.Contains(err.Error(), "broken pipe") || !strings.Contains(err.Error(), "stdin (pid ") {
		t.Fatalf("send to closed stdin: %v", err)
	}
	_, ev := rec.event(t, EvSendFailed)
	if ev.Meta.Detail != err.Error() {
		t.Fatalf("send-failed detail %q", ev.Meta.Detail)
	}
}

func TestStdioSendRejects(t *testing.T) {
	s, rec := stdioStart(t, StdioOptions{Command: "cat"}, nil)
	if err := stdioSend(t, s, "{\n}"); err == nil || !strings.Contains(err.Error(), "newline at byte 1") {
		t.Fatalf("raw newline: %v", err)
	}
	if err := stdioSend(t, s, ""); err == nil {
		t.Fatal("empty message accepted")
	}
	if n := rec.count(func(f Frame) bool { return f.Dir == Out }); n != 0 {
		t.Fatalf("%d out frames for rejected messages", n)
	}
	if n := rec.count(func(f Frame) bool { return f.Meta.Event == EvSendFailed }); n != 2 {
		t.Fatalf("%d send-failed events, want 2", n)
	}
	// Not started.
	var got error
	NewStdio(StdioOptions{Command: "cat"}).Send(Outgoing{Data: []byte("{}")}, func(err error) { got = err })
	if got == nil || !strings.Contains(got.Error(), "call Start") {
		t.Fatalf("send before Start: %v", got)
	}
}

func TestStdioConcurrentSends(t *testing.T) {
	s, rec := stdioStart(t, StdioOptions{Command: "cat"}, nil)
	const workers, each = 16, 25
	pad := strings.Repeat("p", 9000) // over PIPE_BUF, so unlocked writes could interleave
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				msg := fmt.Sprintf(`{"id":"%d-%d","pad":"%s"}`, w, i, pad)
				s.Send(Outgoing{Data: []byte(msg)}, func(err error) { errs <- err })
			}
		})
	}
	wg.Wait()
	for range workers * each {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	rec.waitN(t, workers*each, func(f Frame) bool { return f.Dir == In })
	seen := map[string]bool{}
	for _, f := range rec.all() {
		if f.Dir != In {
			continue
		}
		var v struct{ ID, Pad string }
		if f.Kind != Message || json.Unmarshal(f.Data, &v) != nil || v.Pad != pad {
			t.Fatalf("mangled line: %s %.100q", f.Kind, f.Data)
		}
		seen[v.ID] = true
	}
	if len(seen) != workers*each {
		t.Fatalf("%d distinct ids, want %d", len(seen), workers*each)
	}
}

func TestStdioSlowSinkKeepsEverythingBeforeExited(t *testing.T) {
	const lines = 2000
	script := `i=0; while [ $i -lt ` + strconv.Itoa(lines) + ` ]; do echo "{\"n\":$i,\"pad\":\"` +
		strings.Repeat("z", 100) + `\"}"; i=$((i+1)); done`
	s := NewStdio(stdioShell(script))
	rec := newStdioRec()
	rec.delay = 300 * time.Microsecond
	if err := s.Start(rec.sink); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	stdioWaitDone(t, s)
	n := 0
	for _, f := range rec.all() {
		if f.Meta.Event == EvExited {
			break
		}
		if f.Dir == In {
			var v struct{ N int }
			if err := json.Unmarshal(f.Data, &v); err != nil || v.N != n {
				t.Fatalf("frame %d: %q (%v)", n, f.Data, err)
			}
			n++
		}
	}
	if n != lines {
		t.Fatalf("%d lines before exited, want %d", n, lines)
	}
}

func TestStdioCloseStdinFastPath(t *testing.T) {
	s, rec := stdioStart(t, StdioOptions{Command: "cat", Grace: 5 * time.Second}, nil)
	rec.event(t, EvSpawned)
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Fatalf("cat took %v to exit on stdin EOF", d)
	}
	iEx, _ := rec.event(t, EvExited)
	iCl, cl := rec.event(t, EvClosed)
	if cl.Meta.Detail != "exited after stdin closed" || iEx > iCl {
		t.Fatalf("closed %q at %d, exited at %d", cl.Meta.Detail, iCl, iEx)
	}
	if code, _, exited := s.ExitStatus(); code != 0 || !exited {
		t.Fatalf("ExitStatus %d %v", code, exited)
	}
	stdioWaitDone(t, s)
	if err := stdioSend(t, s, "{}"); err == nil {
		t.Fatal("send after Close succeeded")
	}
}

// closeWithin closes s, which must take less than its shutdown ladder
// allows, and checks how the process ended.
func closeWithin(t *testing.T, s *Stdio, rec *stdioRec, grace time.Duration, detail, signal string) {
	t.Helper()
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*grace+3*time.Second {
		t.Fatalf("Close took %v", d)
	}
	_, cl := rec.event(t, EvClosed)
	_, ex := rec.event(t, EvExited)
	if cl.Meta.Detail != detail || ex.Meta.Signal != signal {
		t.Fatalf("closed %q, exited %+v", cl.Meta.Detail, ex.Meta)
	}
}

func TestStdioCloseNeedsSIGTERM(t *testing.T) {
	const grace = 300 * time.Millisecond
	s, rec := stdioStart(t, StdioOptions{Command: "sleep", Args: []string{"60"}, Grace: grace}, nil)
	rec.event(t, EvSpawned)
	closeWithin(t, s, rec, grace, "exited after SIGTERM", "terminated")
}

func TestStdioCloseNeedsSIGKILLAndKillsGroup(t *testing.T) {
	const grace = 300 * time.Millisecond
	// sh and its background child both ignore TERM (SIG_IGN is inherited).
	s, rec := stdioStart(t, StdioOptions{Command: `trap '' TERM; sleep 60 & echo "child $!"; wait`, Shell: true, Grace: grace}, nil)
	_, f := rec.waitFor(t, "child pid", func(f Frame) bool { return bytes.HasPrefix(f.Data, []byte("child ")) })
	child, err := strconv.Atoi(strings.TrimPrefix(string(f.Data), "child "))
	if err != nil {
		t.Fatal(err)
	}
	closeWithin(t, s, rec, grace, "exited after SIGKILL", "killed")
	stdioWaitProcessGone(t, child)
}

// stdioWaitProcessGone polls /proc: a killed child may linger as a zombie if
// PID 1 here does not reap orphans, which still counts as dead.
func stdioWaitProcessGone(t *testing.T, pid int) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(stdioWait)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return
		}
		if i := bytes.LastIndexByte(b, ')'); i > 0 && i+2 < len(b) && b[i+2] == 'Z' {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("child pid %d of the process group is still running", pid)
		}
	}
}

func TestStdioCloseIdempotentAndAfterExit(t *testing.T) {
	s, rec := stdioStart(t, StdioOptions{Command: "true", Grace: 10 * time.Second}, nil)
	stdioWaitDone(t, s)
	start := time.Now()
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if err := s.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Close of an exited process took %v", d)
	}
	if n := rec.count(func(f Frame) bool { return f.Meta.Event == EvClosed }); n != 1 {
		t.Fatalf("%d closed events, want 1", n)
	}
	_, cl := rec.event(t, EvClosed)
	if !strings.Contains(cl.Meta.Detail, "already exited") {
		t.Fatalf("closed detail %q", cl.Meta.Detail)
	}
}

func TestStdioCloseBeforeStart(t *testing.T) {
	s := NewStdio(StdioOptions{Command: "cat"})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	stdioWaitDone(t, s)
	if err := s.Start(nil); err == nil {
		t.Fatal("Start after Close succeeded")
	}
}

func TestStdioLeftoverHolderDoesNotStallExit(t *testing.T) {
	// sh exits at once, its background child keeps stdout open.
	s, rec := stdioStart(t, stdioShell(`sleep 60 & echo "child $!"; echo '{"a":1}'`), nil)
	_, f := rec.waitFor(t, "child pid", func(f Frame) bool { return bytes.HasPrefix(f.Data, []byte("child ")) })
	if child, err := strconv.Atoi(strings.TrimPrefix(string(f.Data), "child ")); err == nil {
		t.Cleanup(func() {
			if p, err := os.FindProcess(child); err == nil {
				p.Kill()
			}
		})
	}
	rec.in(t, Message, `{"a":1}`)
	stdioWaitDone(t, s)
	_, ex := rec.event(t, EvExited)
	if ex.Meta.ExitCode == nil || *ex.Meta.ExitCode != 0 {
		t.Fatalf("exited %+v", ex.Meta)
	}
	rec.waitFor(t, "note on stdout", func(f Frame) bool {
		return f.Meta.Event == EvNote && strings.Contains(f.Meta.Detail, "still holds its stdout open")
	})
}

func TestStdioStartFails(t *testing.T) {
	s := NewStdio(StdioOptions{Command: "/nonexistent/mcp-server", Args: []string{"--x"}})
	err := s.Start(nil)
	if err == nil || !strings.Contains(err.Error(), "start stdio server /nonexistent/mcp-server --x") {
		t.Fatalf("Start: %v", err)
	}
	stdioWaitDone(t, s)
	if err := NewStdio(StdioOptions{}).Start(nil); err == nil || !strings.Contains(err.Error(), "no command") {
		t.Fatalf("empty command: %v", err)
	}
}

func TestStdioEnvDirAndRedaction(t *testing.T) {
	dir := t.TempDir()
	o := StdioOptions{
		Command: `echo "$MCPSCOPE_MODE $MCPSCOPE_TEST_TOKEN"; pwd`,
		Shell:   true,
		Env:     []string{"MCPSCOPE_TEST_TOKEN=sekrit", "MCPSCOPE_MODE=dev mode"},
		Dir:     dir,
	}
	s, rec := stdioStart(t, o, nil)
	rec.in(t, Garbage, "dev mode sekrit")
	real, _ := filepath.EvalSymlinks(dir)
	rec.waitFor(t, "pwd", func(f Frame) bool { return string(f.Data) == dir || string(f.Data) == real })
	_, sp := rec.event(t, EvSpawned)
	for _, want := range []string{"MCPSCOPE_TEST_TOKEN=[redacted]", "MCPSCOPE_MODE='dev mode'", "sh -c ", "(in " + dir + ")"} {
		if !strings.Contains(sp.Meta.Detail, want) {
			t.Errorf("spawned detail %q lacks %q", sp.Meta.Detail, want)
		}
	}
	if strings.Contains(sp.Meta.Detail+s.Describe(), "sekrit") {
		t.Errorf("secret shown: %q / %q", sp.Meta.Detail, s.Describe())
	}
}

func TestStdioDescribe(t *testing.T) {
	for _, tc := range []struct {
		o    StdioOptions
		want string
	}{
		{StdioOptions{Command: "node", Args: []string{"server.js", "--api-key=abc", "two words"}},
			"stdio: node server.js --api-key=[redacted] 'two words'"},
		{StdioOptions{Command: `GITHUB_TOKEN="a b" node server.js; echo ok`, Shell: true},
			"stdio: GITHUB_TOKEN=[redacted] node server.js; echo ok"},
		{StdioOptions{Command: "npx server", Args: []string{"it's"}, Shell: true},
			`stdio: npx server 'it'\''s'`},
	} {
		if got := NewStdio(tc.o).Describe(); got != tc.want {
			t.Errorf("Describe = %q, want %q", got, tc.want)
		}
	}
}

func TestStdioCloseFreesBlockedSend(t *testing.T) {
	// sleep never reads stdin: a 4 MiB write fills the pipe and blocks.
	s, rec := stdioStart(t, StdioOptions{Command: "sleep", Args: []string{"60"}, Grace: 300 * time.Millisecond}, nil)
	errc := make(chan error, 1)
	go s.Send(Outgoing{Data: bytes.Repeat([]byte("q"), 4<<20)}, func(err error) { errc <- err })
	rec.waitFor(t, "out frame", func(f Frame) bool { return f.Dir == Out })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "write to server stdin (pid ") {
			t.Fatalf("blocked send ended with %v", err)
		}
	case <-time.After(stdioWait):
		t.Fatal("Send still blocked after Close")
	}
	_, cl := rec.event(t, EvClosed)
	if cl.Meta.Detail != "exited after SIGTERM" {
		t.Fatalf("closed %q", cl.Meta.Detail)
	}
}

// A line's frame is timed when its bytes arrived, not when the sink got
// to it: while the sink holds the first of two lines written at once, the
// second has already arrived, and its time is from before it was let go.
func TestStdioLineTimeIsArrival(t *testing.T) {
	s := NewStdio(stdioShell(`printf '{"n":1}\n{"n":2}\n'; exec cat >/dev/null`))
	held, release := make(chan struct{}), make(chan struct{})
	second := make(chan Frame, 1)
	n := 0
	if err := s.Start(func(f Frame) {
		if f.Dir != In {
			return
		}
		if n++; n == 1 {
			close(held)
			<-release
			return
		}
		second <- f
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	select {
	case <-held:
	case <-time.After(testWait): // a hang guard
		t.Fatal("no first line")
	}
	let := time.Now()
	close(release)
	select {
	case f := <-second:
		if string(f.Data) != `{"n":2}` || f.Time.IsZero() || f.Time.After(let) {
			t.Fatalf("second line %q at %v, after the first was let go at %v", f.Data, f.Time, let)
		}
	case <-time.After(testWait):
		t.Fatal("no second line")
	}
}

// A line's bytes from a shared chunk are its own: a copy, not the
// reader's buffer, and an append to one line never writes over the next
// line's bytes, across chunks and for a line too long to share one.
func TestLineChunkCopiesAreTheirOwn(t *testing.T) {
	var c lineChunk
	var lines, want [][]byte
	for i := range 2000 {
		src := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"m","params":{"n":%d}}`, i))
		if i%300 == 7 {
			src = bytes.Repeat([]byte{byte('a' + i%26)}, stdioChunkMax+1+i)
		}
		want = append(want, bytes.Clone(src))
		lines = append(lines, c.copy(src))
		clear(src) // the reader's buffer is read into again
	}
	for i := range lines {
		_ = append(lines[i], "appended"...)
	}
	for i := range lines {
		if !bytes.Equal(lines[i], want[i]) {
			t.Fatalf("line %d is %q, want %q", i, lines[i], want[i])
		}
	}
}
