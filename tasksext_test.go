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

// runIn runs mcpscope in-process with argv and the given state dir.
func runIn(t *testing.T, state string, argv ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", state)
	var out, errb bytes.Buffer
	code = run(argv, &out, &errb)
	return code, out.String(), errb.String()
}

const approve = `{"action":"accept","content":{"approve":true}}`

// An input_required task is answered once per key through the Responder
// and tasks/update, although polls keep showing the request while the
// server's ack is still being applied; the task then completes with what
// the answer decided.
func TestTasksExtInputRequired(t *testing.T) {
	url := peers.StartTSv2Tasks(t)
	r := capableResponder(func(req session.ServerRequest) (json.RawMessage, *session.RPCError) {
		return json.RawMessage(approve), nil
	})
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := connect(ctx, &options{url: url, noJournal: true}, r, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := s.Call("tools/call", map[string]any{"name": "review", "arguments": map[string]any{"topic": "kelp", "holdMs": 500}})
	callT(t, c)
	id := c.Snapshot().TaskID
	res, err := s.FollowTask(ctx, id, nil)
	if err != nil {
		t.Fatalf("follow: %v", err)
	}
	if got := resultText(res); got != "review: kelp approved" {
		t.Fatalf("result %q", got)
	}
	asked := r.requests()
	if len(asked) != 1 || asked[0].Key != "approve-kelp" || asked[0].Method != "elicitation/create" || asked[0].TaskID != id ||
		!strings.Contains(string(asked[0].Params), "Publish the review of kelp?") {
		t.Fatalf("the responder was asked %+v", asked)
	}
	// The request stayed visible for several polls after it was answered.
	seen := 0
	for _, it := range s.Store().Since(0, 0) {
		if it.Env != nil && it.Env.Result != nil && strings.Contains(string(it.Env.Result), `"input_required"`) {
			seen++
		}
	}
	if seen < 2 {
		t.Fatalf("only %d tasks/get results showed input_required; the dedupe went untested", seen)
	}
	if got := resultText(callT(t, s.Call("tools/call", map[string]any{"name": "updates", "arguments": map[string]any{}}))); got != `{"approve-kelp":1}` {
		t.Fatalf("the server counted tasks/update keys %s, want exactly one answer", got)
	}
}

// Headless: a task that asks for input nobody answered stops the command
// with the key to answer and the way back; rejoining with --answer finishes
// it; `mcpscope tasks` lists it meanwhile (2026 has no tasks/list).
func TestTasksExtHeadlessAnswer(t *testing.T) {
	url := peers.StartTSv2Tasks(t)
	state := t.TempDir()
	code, out, errb := runIn(t, state, "call", "review", "topic=reef", "--no-journal", url)
	if code != exitServerErr || !strings.Contains(errb, `--answer 'approve-reef=<json>'`) || !strings.Contains(errb, "mcpscope rejoin task-") ||
		!strings.Contains(errb, "still input_required") {
		t.Fatalf("without an answer: code %d\n%s\n%s", code, out, errb)
	}
	store := &session.FileStore{Dir: filepath.Join(state, "mcpscope", "calls")}
	l, _ := store.List()
	if len(l) != 1 || l[0].TaskID == "" {
		t.Fatalf("the open task should keep its rejoin record: %+v", l)
	}
	code, out, errb = runIn(t, state, "tasks", "--no-journal", url)
	if code != exitOK || !strings.Contains(out, l[0].TaskID) || !strings.Contains(out, "no tasks/list") {
		t.Fatalf("tasks: code %d\n%s\n%s", code, out, errb)
	}
	code, out, errb = runIn(t, state, "rejoin", l[0].Handle, "--no-journal", "--answer", "approve-reef="+approve)
	if code != exitOK || !strings.Contains(out, "review: reef approved") {
		t.Fatalf("rejoin with the answer: code %d\n%s\n%s", code, out, errb)
	}
	if l, _ := store.List(); len(l) != 0 {
		t.Fatalf("the finished task's record should be gone: %+v", l)
	}
}

// `mcpscope task update ID --answer` answers a task another client follows;
// a decline is an answer too, and the tool reports it.
func TestTasksExtTaskUpdate(t *testing.T) {
	url := peers.StartTSv2Tasks(t)
	s := connectT(t, &options{url: url, noJournal: true})
	c := s.Call("tools/call", map[string]any{"name": "review", "arguments": map[string]any{"topic": "dune", "holdMs": 0}})
	callT(t, c)
	id := c.Snapshot().TaskID
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for { // wait until the server asks
		var tk session.Task
		_ = json.Unmarshal(callT(t, s.Call("tasks/get", map[string]any{"taskId": id})), &tk)
		if tk.Status == "input_required" {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the task never asked for input: %+v", tk)
		case <-time.After(50 * time.Millisecond): // the server's poll interval is 100ms
		}
	}
	state := t.TempDir()
	code, out, errb := runIn(t, state, "task", "update", id, "--no-journal", "--answer", `approve-dune={"action":"decline"}`, url)
	if code != exitOK || !strings.Contains(errb, "sent 1 answer(s)") {
		t.Fatalf("task update: code %d\n%s\n%s", code, out, errb)
	}
	code, out, errb = runIn(t, state, "task", "result", id, "--no-journal", url)
	if code != exitOK || !strings.Contains(out, "review: dune rejected") {
		t.Fatalf("task result: code %d\n%s\n%s", code, out, errb)
	}
	code, _, errb = runIn(t, state, "task", "update", id, "--no-journal", "--answer", `approve-dune={"action":"decline"}`, url)
	if code != exitServerErr || !strings.Contains(errb, "completed, not input_required") {
		t.Fatalf("updating a finished task: code %d\n%s", code, errb)
	}
}

// In the 2026 era --task adds no task parameter (the extension removed it;
// the server decides), and the tool still runs as a task.
func TestTasksExtNoTaskParam(t *testing.T) {
	s := connectT(t, &options{url: peers.StartTSv2Tasks(t), noJournal: true})
	c := s.CallAsTask("tools/call", map[string]any{"name": "report", "arguments": map[string]any{"steps": 1, "intervalMs": 0}}, time.Minute)
	res := callT(t, c)
	if strings.Contains(string(session.StripMeta(c.Params)), `"task"`) {
		t.Fatalf("params carry a task parameter: %s", c.Params)
	}
	if session.ResultType(res) != "task" {
		t.Fatalf("want a task, got %s", res)
	}
}

// `mcpscope listen --task-id ID` prints the task's notifications/tasks up
// to completed.
func TestTasksExtListenCLI(t *testing.T) {
	url := peers.StartTSv2Tasks(t)
	s := connectT(t, &options{url: url, noJournal: true})
	id := startTaskT(t, s, 3, 200)
	cmd := exec.Command(mcpscopeBinary(t), "listen", "--task-id", id, "--no-journal", url)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
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
