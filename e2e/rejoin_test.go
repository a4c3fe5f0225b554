package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mcpscope/connect"
	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/statestore"
	"mcpscope/testkit/clienttest"
	"mcpscope/testkit/peers"
	"mcpscope/transport"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// kill -9 mcpscope mid-call; a new mcpscope lists the call, rejoins it, and
// gets the remaining progress and the result.
func TestRejoinAfterKill9(t *testing.T) {
	url := peers.StartTSv1Resumable(t)
	state := t.TempDir()

	// Steps come faster than the record is rewritten (every 250 ms): each
	// is marked in the store before it is journaled or shown, so a kill at
	// any moment leaves the store no behind what was shown.
	first := mcpscope(t, state, "call", "slow", "steps=25", "intervalMs=60", "--era", "legacy", url)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	store := &statestore.FileStore{Dir: filepath.Join(state, "mcpscope", "calls")}
	rec := waitRecord(t, store)
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	rec, err := store.Get(rec.Handle)
	if err != nil {
		t.Fatal(err)
	}
	at := rec.Progress.Value

	list := mcpscope(t, state, "rejoin")
	out, err := list.CombinedOutput()
	if err != nil || !strings.Contains(string(out), rec.Handle) || !strings.Contains(string(out), "expired") {
		t.Fatalf("rejoin list: %v\n%s", err, out)
	}

	var stdout, stderr bytes.Buffer
	again := mcpscope(t, state, "rejoin", rec.Handle)
	again.Stdout, again.Stderr = &stdout, &stderr
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
	// Across the kill, every step was delivered exactly once: what the
	// first process journaled, then what the rejoin printed.
	seen := map[int]int{}
	for _, v := range journaledProgress(t, rec.Journal) {
		seen[v]++
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		var v, total int
		if _, err := fmt.Sscanf(l, "progress %d/%d", &v, &total); err == nil {
			seen[v]++
		}
	}
	for step := 1; step <= 25; step++ {
		if seen[step] != 1 {
			t.Errorf("step %d was delivered %d times across the kill (want once); counts %v", step, seen[step], seen)
		}
	}
}

// killMidCall starts mcpscope call with args, kill -9s it once its call's
// rejoin record shows progress, and returns the record.
func killMidCall(t *testing.T, state string, args ...string) statestore.Detached {
	t.Helper()
	first := mcpscope(t, state, append([]string{"call"}, args...)...)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	rec := waitRecord(t, &statestore.FileStore{Dir: filepath.Join(state, "mcpscope", "calls")})
	first.Process.Signal(syscall.SIGKILL)
	first.Wait()
	return rec
}

// journaledProgress is the progress values of every notifications/progress
// a journal holds, in order (a torn last line is fine: kill -9).
func journaledProgress(t *testing.T, path string) []int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("the killed process's journal: %v", err)
	}
	defer f.Close()
	var out []int
	_, _ = journal.Read(f, func(_ uint64, fr transport.Frame) error {
		var n struct {
			Method string `json:"method"`
			Params struct {
				Progress float64 `json:"progress"`
			} `json:"params"`
		}
		if fr.Dir == transport.In && json.Unmarshal(fr.Data, &n) == nil && n.Method == "notifications/progress" {
			out = append(out, int(n.Params.Progress))
		}
		return nil
	})
	return out
}

// A call detached by a process that is still running (the inspector, here
// this test) is rejoined from another mcpscope, which must leave the MCP
// session alone when it is done: the first process goes on using it.
func TestRejoinLeavesALiveSessionAlone(t *testing.T) {
	url := peers.StartTSv1Resumable(t)
	s := clienttest.Connect(t, connect.Spec{URL: url, NoJournal: true, Era: "legacy"})
	state := os.Getenv("XDG_STATE_HOME") // clienttest.Connect's
	sid := s.Info().SessionID
	c := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 10, "intervalMs": 100}})
	clienttest.WaitFor(t, s, func() bool { return c.Snapshot().Progress.Updates >= 2 })
	handle, err := s.Detach(c)
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	again := mcpscope(t, state, "rejoin", handle, "--no-journal")
	again.Stdout, again.Stderr = &out, &errb
	if err := again.Run(); err != nil || !strings.Contains(out.String(), "done 10 steps") {
		t.Fatalf("rejoin: %v\n%s\n%s", err, out.String(), errb.String())
	}
	res := clienttest.Call(t, s.Call("tools/list", nil))
	if !strings.Contains(string(res), "slow") || s.Info().SessionID != sid {
		t.Fatalf("the first process's session after the rejoin: id %q (was %q), tools/list %.200s", s.Info().SessionID, sid, res)
	}
	for _, it := range s.Store().Since(0, 0) {
		if it.Frame.Meta.Event == transport.EvSessionID && it.Frame.Meta.Detail != sid {
			t.Fatalf("the session was re-initialized: the rejoin deleted it (%+v)", it.Frame.Meta)
		}
	}
}

// After an mcpscope is killed, a running inspector on the same server
// rejoins the call left behind in the killed one's MCP session, beside its
// own session, which stays as it was.
func TestRejoinForeignSessionHere(t *testing.T) {
	url := peers.StartTSv1Resumable(t)
	state := t.TempDir()
	rec := killMidCall(t, state, "slow", "steps=15", "intervalMs=100", "--era", "legacy", url)

	// The inspector shares the killed one's store: a rejoin takes the
	// record's lease there and writes the record under it.
	t.Setenv("XDG_STATE_HOME", state)
	s, err := clienttest.TryConnect(connect.Spec{URL: url, NoJournal: true, Era: "legacy"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sid := s.Info().SessionID
	if sid == rec.SessionID {
		t.Fatal("the new session has the killed one's id")
	}
	c, err := s.Rejoin(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	if res := clienttest.Call(t, c); !strings.Contains(string(res), "done 15 steps") {
		t.Fatalf("the rejoined call: %s", res)
	}
	if s.Info().SessionID != sid {
		t.Fatalf("the rejoin switched this session's id to %q (was %q)", s.Info().SessionID, sid)
	}
	if res := clienttest.Call(t, s.Call("tools/list", nil)); !strings.Contains(string(res), "slow") {
		t.Fatalf("this session after the rejoin: %s", res)
	}
}

// An interrupted rejoin leaves the record for the next one.
func TestInterruptedRejoinKeepsTheRecord(t *testing.T) {
	url := peers.StartTSv1Resumable(t)
	state := t.TempDir()
	rec := killMidCall(t, state, "slow", "steps=30", "intervalMs=100", "--era", "legacy", url)
	store := &statestore.FileStore{Dir: filepath.Join(state, "mcpscope", "calls")}

	second := mcpscope(t, state, "rejoin", rec.Handle, "--no-journal")
	stderr, err := second.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	var seen []byte
	for !bytes.Contains(seen, []byte("progress ")) {
		n, err := stderr.Read(buf)
		seen = append(seen, buf[:n]...)
		if err != nil {
			t.Fatalf("the rejoin ended before any progress: %s", seen)
		}
	}
	second.Process.Signal(os.Interrupt)
	go io.Copy(io.Discard, stderr)
	if err := second.Wait(); err == nil || second.ProcessState.ExitCode() != 130 {
		t.Fatalf("the interrupted rejoin: %v (exit %d)", err, second.ProcessState.ExitCode())
	}
	if _, err := store.Get(rec.Handle); err != nil {
		t.Fatalf("the interrupt deleted the record: %v", err)
	}
	var out bytes.Buffer
	third := mcpscope(t, state, "rejoin", rec.Handle, "--no-journal")
	third.Stdout = &out
	if err := third.Run(); err != nil || !strings.Contains(out.String(), "done 30 steps") {
		t.Fatalf("the next rejoin: %v\n%s", err, out.String())
	}
}

// A task is a rejoin handle: kill -9 the mcpscope that created it, and a new
// one follows the task to its result (server-everything, 2025-11-25 tasks).
func TestRejoinTaskAfterKill9(t *testing.T) {
	url := peers.StartEverythingHTTP(t, "streamableHttp")
	state := t.TempDir()

	first := mcpscope(t, state, "call", "simulate-research-query", "topic=tides", "--task", url)
	killAfterTaskCreated(t, first)

	store := &statestore.FileStore{Dir: filepath.Join(state, "mcpscope", "calls")}
	l, _ := store.List()
	if len(l) != 1 || l[0].TaskID == "" {
		t.Fatalf("want one task record, got %+v", l)
	}
	var out, errb bytes.Buffer
	again := mcpscope(t, state, "rejoin", l[0].Handle)
	again.Stdout, again.Stderr = &out, &errb
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

// The first mcpscope creates an extension task and is killed -9; a second
// one rejoins it from the state store (stateless, tasks/get polling) and
// prints its result.
func TestTasksExtRejoinAfterKill9(t *testing.T) {
	url := peers.StartTSv2Tasks(t)
	state := t.TempDir()

	first := mcpscope(t, state, "call", "report", "topic=tides", "steps=20", "intervalMs=100", url)
	killAfterTaskCreated(t, first)

	store := &statestore.FileStore{Dir: filepath.Join(state, "mcpscope", "calls")}
	l, _ := store.List()
	if len(l) != 1 || l[0].TaskID == "" || l[0].Era != protocol.EraModern {
		t.Fatalf("want one modern task record, got %+v", l)
	}
	var out, errb bytes.Buffer
	again := mcpscope(t, state, "rejoin", l[0].Handle)
	again.Stdout, again.Stderr = &out, &errb
	if err := again.Run(); err != nil {
		t.Fatalf("rejoin: %v\n%s\n%s", err, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "report: tides") || !strings.Contains(errb.String(), "completed") {
		t.Fatalf("rejoin output:\n%s\n%s", out.String(), errb.String())
	}
	if l, _ := store.List(); len(l) != 0 {
		t.Fatalf("the task record should be gone once its result was fetched: %+v", l)
	}
}

// `mcpscope listen --task-id ID` prints the task's notifications/tasks up
// to completed.
func TestTasksExtListenCLI(t *testing.T) {
	url := peers.StartTSv2Tasks(t)
	s := clienttest.Connect(t, connect.Spec{URL: url, NoJournal: true})
	id := clienttest.StartReportTask(t, s, 3, 200)
	cmd := mcpscope(t, t.TempDir(), "listen", "--task-id", id, "--no-journal", url)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		buf := make([]byte, 0, 4096)
		tmp := make([]byte, 1024)
		for {
			n, err := stdout.Read(tmp)
			buf = append(buf, tmp[:n]...)
			for {
				i := bytes.IndexByte(buf, '\n')
				if i < 0 {
					break
				}
				lines <- string(buf[:i])
				buf = buf[i+1:]
			}
			if err != nil {
				return
			}
		}
	}()
	timeout := time.After(30 * time.Second)
	var got []string
	for done := false; !done; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("listen ended early: %v\n%s\n%s", cmd.Wait(), strings.Join(got, "\n"), errb.String())
			}
			got = append(got, l)
			done = strings.Contains(l, "notifications/tasks "+id+" completed")
		case <-timeout:
			t.Fatalf("no completed notification:\n%s\n%s", strings.Join(got, "\n"), errb.String())
		}
	}
	_ = cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("listen after Ctrl-C: %v\n%s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "acknowledged") || !strings.Contains(errb.String(), id) {
		t.Fatalf("the ack was not shown:\n%s", errb.String())
	}
}
