package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"mcpscope/internal/faultproxy"
	"mcpscope/internal/peers"
	"mcpscope/session"
	"mcpscope/transport"
)

// SEP-1699: the server closes the POST stream after a priming event with
// retry: 500; mcpscope waits the retry, GETs with Last-Event-ID, and the call
// completes with every progress step exactly once.
func TestResumeAfterServerClose(t *testing.T) {
	url := peers.StartTSv1Resumable(t)
	s := connectT(t, &options{url: url, noJournal: true, era: "legacy"})
	c := s.Call("tools/call", map[string]any{"name": "drop_stream", "arguments": map[string]any{"steps": 6, "intervalMs": 100}})
	res := callT(t, c)
	if !strings.Contains(string(res), "done 6 steps") {
		t.Fatalf("result: %s", res)
	}
	if p := c.Snapshot().Progress; p.Updates != 6 || p.Value != 6 {
		t.Fatalf("want each of 6 progress steps exactly once, got %d updates ending at %g", p.Updates, p.Value)
	}
	var closedAt, resumedAt time.Time
	attempts := 0
	for _, it := range s.Store().Since(0, 0) {
		m := it.Frame.Meta
		switch {
		case m.Event == transport.EvStreamClosed && m.Stream == "post:"+c.Key && closedAt.IsZero():
			closedAt = it.Frame.Time
		case m.Event == transport.EvResumeAttempt:
			attempts++
		case m.Event == transport.EvStreamResumed && m.Resumes == "post:"+c.Key && resumedAt.IsZero():
			resumedAt = it.Frame.Time
		}
	}
	if closedAt.IsZero() || resumedAt.IsZero() || attempts == 0 {
		t.Fatalf("want stream closed, a resume attempt and a resumed stream; got closed=%v attempts=%d resumed=%v", closedAt, attempts, resumedAt)
	}
	if gap := resumedAt.Sub(closedAt); gap < 500*time.Millisecond || gap > 3*time.Second {
		t.Fatalf("resumed %s after the close; want no earlier than the server's retry (500ms) and promptly after", gap)
	}
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// mcpscopeBinary builds the command once per test run.
func mcpscopeBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcpscope-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "mcpscope")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = err
			t.Logf("%s", out)
		}
	})
	if binErr != nil {
		t.Fatalf("build mcpscope: %v", binErr)
	}
	return binPath
}

// waitRecord polls the state store (another process writes it) until a
// record with progress appears.
func waitRecord(t *testing.T, store *session.FileStore) session.Detached {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		if l, _ := store.List(); len(l) == 1 && l[0].Progress.Updates >= 2 {
			return l[0]
		}
		if time.Now().After(deadline) {
			t.Fatal("no call state with progress was persisted within 30s")
		}
	}
	panic("unreachable")
}

// kill -9 mcpscope mid-call; a new mcpscope lists the call, rejoins it, and
// gets the remaining progress and the result.
func TestRejoinAfterKill9(t *testing.T) {
	url := peers.StartTSv1Resumable(t)
	bin := mcpscopeBinary(t)
	state := t.TempDir()
	env := append(os.Environ(), "XDG_STATE_HOME="+state)

	first := exec.Command(bin, "call", "slow", "steps=25", "intervalMs=100", "--era", "legacy", url)
	first.Env = env
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	store := &session.FileStore{Dir: filepath.Join(state, "mcpscope", "calls")}
	rec := waitRecord(t, store)
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	at := rec.Progress.Value

	list := exec.Command(bin, "rejoin")
	list.Env = env
	out, err := list.CombinedOutput()
	if err != nil || !strings.Contains(string(out), rec.Handle) || !strings.Contains(string(out), "rejoinable") {
		t.Fatalf("rejoin list: %v\n%s", err, out)
	}

	var stdout, stderr bytes.Buffer
	again := exec.Command(bin, "rejoin", rec.Handle)
	again.Env, again.Stdout, again.Stderr = env, &stdout, &stderr
	if err := again.Run(); err != nil {
		t.Fatalf("rejoin: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "done 25 steps") {
		t.Fatalf("rejoin printed no result: %s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "progress 25/25") {
		t.Fatalf("rejoin did not show the last progress: %s", stderr.String())
	}
	if strings.Contains(stderr.String(), "progress 1/25 ") && at >= 2 {
		t.Fatalf("progress seen before the kill was replayed as new: %s", stderr.String())
	}
	if l, _ := store.List(); len(l) != 0 {
		t.Fatalf("the record should be gone after a successful rejoin: %+v", l)
	}
}

// A rejoin into a session the server no longer knows says so plainly.
func TestRejoinSessionGone(t *testing.T) {
	url := peers.StartTSv1Resumable(t)
	store := &session.FileStore{Dir: t.TempDir()}
	d := session.Detached{Handle: "gone", Target: url, Transport: "http", SessionID: "no-such-session",
		ProtocolVersion: "2025-11-25", RequestID: json.RawMessage("3"), Method: "tools/call", Name: "slow",
		LastEventIDs: map[string]string{"post:3": "x.1"}, Started: time.Now()}
	s := session.New(transport.NewHTTP(transport.HTTPOptions{URL: url}), session.Options{StateStore: store})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.Rejoin(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = c.Wait(ctx)
	if err == nil || !strings.Contains(err.Error(), "no longer knows this session") {
		t.Fatalf("want a plain 'session gone' error, got %v", err)
	}
}

// A task is a rejoin handle: kill -9 the mcpscope that created it, and a new
// one follows the task to its result (server-everything, 2025-11-25 tasks).
func TestRejoinTaskAfterKill9(t *testing.T) {
	url := peers.StartEverythingHTTP(t, "streamableHttp")
	bin := mcpscopeBinary(t)
	state := t.TempDir()
	env := append(os.Environ(), "XDG_STATE_HOME="+state)

	first := exec.Command(bin, "call", "simulate-research-query", "topic=tides", "--task", url)
	first.Env = env
	killAfterTaskCreated(t, first)

	store := &session.FileStore{Dir: filepath.Join(state, "mcpscope", "calls")}
	l, _ := store.List()
	if len(l) != 1 || l[0].TaskID == "" {
		t.Fatalf("want one task record, got %+v", l)
	}
	var out, errb bytes.Buffer
	again := exec.Command(bin, "rejoin", l[0].Handle)
	again.Env, again.Stdout, again.Stderr = env, &out, &errb
	if err := again.Run(); err != nil {
		t.Fatalf("rejoin: %v\n%s\n%s", err, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "Research Report: tides") || !strings.Contains(errb.String(), "completed") {
		t.Fatalf("rejoin output:\n%s\n%s", out.String(), errb.String())
	}
	if l, _ := store.List(); len(l) != 0 {
		t.Fatalf("the task record should be gone once its result was fetched: %+v", l)
	}
}

// The network drops the POST stream of a call mid-way (our fault proxy cuts
// it after a few events) in front of the TS SDK v1 server with an event
// store: mcpscope resumes with Last-Event-ID and gets every progress step
// exactly once plus the result.
func TestTSv1NetworkDropMidCall(t *testing.T) {
	upstream := peers.StartTSv1Resumable(t)
	var calls atomic.Int32
	url, proxy := faultproxy.Start(t, upstream, faultproxy.Faults{
		// Cut the first tools/call POST stream after ~600 bytes: past the
		// priming event and a few progress events, well before the result.
		Match:         func(r *http.Request) bool { return r.Method == http.MethodPost && calls.Load() == 1 },
		CutAfterBytes: func(*http.Request, int) int { return 600 },
	})
	s := connectT(t, &options{url: url, noJournal: true, era: "legacy"})
	calls.Store(1)
	c := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 12, "intervalMs": 60}})
	res := callT(t, c)
	calls.Store(2)
	if !strings.Contains(string(res), "done 12 steps") {
		t.Fatalf("result: %s", res)
	}
	if p := c.Snapshot().Progress; p.Updates != 12 || p.Value != 12 {
		t.Fatalf("want 12 progress steps exactly once, got %d ending at %g", p.Updates, p.Value)
	}
	if st := proxy.Stats(); st.Cuts != 1 {
		t.Fatalf("want exactly one cut stream, got %+v", st)
	}
	dropped, resumed := false, false
	for _, it := range s.Store().Since(0, 0) {
		m := it.Frame.Meta
		dropped = dropped || (m.Event == transport.EvStreamDropped && m.Stream == "post:"+c.Key)
		resumed = resumed || (m.Event == transport.EvStreamResumed && m.Resumes == "post:"+c.Key)
	}
	if !dropped || !resumed {
		t.Fatalf("want the POST stream dropped and resumed; dropped=%v resumed=%v", dropped, resumed)
	}
}

// killAfterTaskCreated starts cmd, waits until it reports "task … created"
// on stderr (the task then has a rejoin record), and kills it with SIGKILL.
func killAfterTaskCreated(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	created := make(chan bool, 1)
	go func() {
		buf := make([]byte, 4096)
		var seen []byte
		for {
			n, err := stderr.Read(buf)
			seen = append(seen, buf[:n]...)
			if bytes.Contains(seen, []byte(" created")) {
				created <- true
				io.Copy(io.Discard, stderr)
				return
			}
			if err != nil {
				created <- false
				return
			}
		}
	}()
	select {
	case ok := <-created:
		if !ok {
			t.Fatal("the first mcpscope ended before creating the task")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no task created within 30s")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
}
