package e2e

import (
	"bytes"
	"mcpscope/connect"
	"mcpscope/internal/clienttest"
	"mcpscope/internal/peers"
	"mcpscope/session"
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

	first := mcpscope(t, state, "call", "slow", "steps=25", "intervalMs=100", "--era", "legacy", url)
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

	list := mcpscope(t, state, "rejoin")
	out, err := list.CombinedOutput()
	if err != nil || !strings.Contains(string(out), rec.Handle) || !strings.Contains(string(out), "rejoinable") {
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
}

// A task is a rejoin handle: kill -9 the mcpscope that created it, and a new
// one follows the task to its result (server-everything, 2025-11-25 tasks).
func TestRejoinTaskAfterKill9(t *testing.T) {
	url := peers.StartEverythingHTTP(t, "streamableHttp")
	state := t.TempDir()

	first := mcpscope(t, state, "call", "simulate-research-query", "topic=tides", "--task", url)
	killAfterTaskCreated(t, first)

	store := &session.FileStore{Dir: filepath.Join(state, "mcpscope", "calls")}
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

	store := &session.FileStore{Dir: filepath.Join(state, "mcpscope", "calls")}
	l, _ := store.List()
	if len(l) != 1 || l[0].TaskID == "" || l[0].Era != session.EraModern {
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
