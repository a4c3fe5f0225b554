package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/internal/peers"
	"mcpscope/session"
)

// startTaskT calls the peer's report tool and returns the task it created.
func startTaskT(t *testing.T, s *session.Session, steps, intervalMs int) string {
	t.Helper()
	c := s.Call("tools/call", map[string]any{"name": "report", "arguments": map[string]any{"topic": "tides", "steps": steps, "intervalMs": intervalMs}})
	res := callT(t, c)
	id := c.Snapshot().TaskID
	if session.ResultType(res) != "task" || id == "" {
		t.Fatalf("want a CreateTaskResult, got %s", res)
	}
	return id
}

// A tools/call declared with the extension gets a task; FollowTask polls
// tasks/get through working to completed and returns the inlined result.
func TestTasksExtFollow(t *testing.T) {
	s := connectT(t, &options{url: peers.StartTSv2Tasks(t), noJournal: true})
	if s.Era() != session.EraModern {
		t.Fatalf("era %s", s.Era())
	}
	id := startTaskT(t, s, 3, 100)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var seen []string
	res, err := s.FollowTask(ctx, id, func(tk session.Task) { seen = append(seen, tk.Status) })
	if err != nil {
		t.Fatalf("follow: %v", err)
	}
	if resultText(res) != "report: tides" {
		t.Fatalf("result %s", res)
	}
	if len(seen) == 0 || seen[len(seen)-1] != "completed" {
		t.Fatalf("statuses %v", seen)
	}
	if tk, _ := s.Task(id); tk.Status != "completed" || tk.PollInterval != 100 || tk.TTL == nil || *tk.TTL != 600000 {
		t.Fatalf("task as recorded: %+v", tk)
	}
}

// mcpscope task get|cancel from another process, then the task is
// cancelled for good.
func TestTasksExtHeadlessCancel(t *testing.T) {
	url := peers.StartTSv2Tasks(t)
	s := connectT(t, &options{url: url, noJournal: true})
	id := startTaskT(t, s, 1000, 1000)
	bin := mcpscopeBinary(t)
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		cmd := exec.Command(bin, append(args, "--no-journal", url)...)
		cmd.Env, cmd.Stdout, cmd.Stderr = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir()), &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s\n%s", args, err, out.String(), errb.String())
		}
		return out.String()
	}
	if out := run("task", "get", id); !strings.Contains(out, `"working"`) {
		t.Fatalf("task get: %s", out)
	}
	run("task", "cancel", id)
	var tk session.Task
	if err := json.Unmarshal(callT(t, s.Call("tasks/get", map[string]any{"taskId": id})), &tk); err != nil || tk.Status != "cancelled" {
		t.Fatalf("after cancel: %+v %v", tk, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.FollowTask(ctx, id, nil); err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("following a cancelled task: %v", err)
	}
}

// `mcpscope call report` prints the final result of the task it created.
func TestTasksExtHeadlessCall(t *testing.T) {
	url := peers.StartTSv2Tasks(t)
	var out, errb bytes.Buffer
	cmd := exec.Command(mcpscopeBinary(t), "call", "report", "topic=kelp", "steps=2", "intervalMs=50", "--task", "--no-journal", url)
	cmd.Env, cmd.Stdout, cmd.Stderr = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir()), &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("call: %v\n%s\n%s", err, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "report: kelp") || !strings.Contains(errb.String(), " created") || !strings.Contains(errb.String(), "completed") {
		t.Fatalf("call output:\n%s\n%s", out.String(), errb.String())
	}
}

// A listen stream with taskIds receives notifications/tasks, which update
// the task as the session knows it, up to completed with its result.
func TestTasksExtListen(t *testing.T) {
	s := connectT(t, &options{url: peers.StartTSv2Tasks(t), noJournal: true})
	id := startTaskT(t, s, 4, 100)
	l := s.Listen(session.ListenFilter{TaskIDs: []string{id}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var seq uint64
	var notes int
	for {
		for _, it := range s.Store().Since(seq, 0) {
			seq = it.Seq
			if it.Env != nil && it.Env.Method == "notifications/tasks" && it.CallKey == l.Key {
				notes++
			}
		}
		if tk, _ := s.Task(id); tk.Status == "completed" {
			break
		}
		select {
		case <-s.Store().Changed():
		case <-l.Done():
			t.Fatalf("the listen stream ended: %v", l.Snapshot().Err())
		case <-ctx.Done():
			tk, _ := s.Task(id)
			t.Fatalf("no completed notification; task %+v, %d notifications", tk, notes)
		}
	}
	if notes < 2 {
		t.Fatalf("%d notifications/tasks on the listen stream", notes)
	}
	if ack := string(l.Snapshot().Ack); !strings.Contains(ack, id) {
		t.Fatalf("ack %s lacks the task id", ack)
	}
}

// The first mcpscope creates an extension task and is killed -9; a second
// one rejoins it from the state store (stateless, tasks/get polling) and
// prints its result.
func TestTasksExtRejoinAfterKill9(t *testing.T) {
	url := peers.StartTSv2Tasks(t)
	bin := mcpscopeBinary(t)
	state := t.TempDir()
	env := append(os.Environ(), "XDG_STATE_HOME="+state)

	first := exec.Command(bin, "call", "report", "topic=tides", "steps=20", "intervalMs=100", url)
	first.Env = env
	killAfterTaskCreated(t, first)

	store := &session.FileStore{Dir: filepath.Join(state, "mcpscope", "calls")}
	l, _ := store.List()
	if len(l) != 1 || l[0].TaskID == "" || l[0].Era != session.EraModern {
		t.Fatalf("want one modern task record, got %+v", l)
	}
	var out, errb bytes.Buffer
	again := exec.Command(bin, "rejoin", l[0].Handle)
	again.Env, again.Stdout, again.Stderr = env, &out, &errb
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
