package cli

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/connect"
	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/taskfollow"
	"mcpscope/testkit/clienttest"
	"mcpscope/testkit/peers"
)

// A tools/call declared with the extension gets a task; taskfollow.Follow polls
// tasks/get through working to completed and returns the inlined result.
func TestTasksExtFollow(t *testing.T) {
	s := clienttest.Connect(t, connect.Spec{URL: peers.StartTSv2Tasks(t), NoJournal: true})
	if s.Era() != protocol.EraModern {
		t.Fatalf("era %s", s.Era())
	}
	id := clienttest.StartReportTask(t, s, 3, 100)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var seen []string
	res, err := taskfollow.Follow(ctx, s, id, func(tk protocol.Task) { seen = append(seen, tk.Status) })
	if err != nil {
		t.Fatalf("follow: %v", err)
	}
	if clienttest.ResultText(res) != "report: tides" {
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
	s := clienttest.Connect(t, connect.Spec{URL: url, NoJournal: true})
	id := clienttest.StartReportTask(t, s, 1000, 1000)
	run := func(args ...string) string {
		t.Helper()
		code, out, errb := runIn(t, t.TempDir(), append(args, "--no-journal", url)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errb)
		}
		return out
	}
	if out := run("task", "get", id); !strings.Contains(out, `"working"`) {
		t.Fatalf("task get: %s", out)
	}
	run("task", "cancel", id)
	var tk protocol.Task
	if err := json.Unmarshal(clienttest.Call(t, s.Call("tasks/get", map[string]any{"taskId": id})), &tk); err != nil || tk.Status != "cancelled" {
		t.Fatalf("after cancel: %+v %v", tk, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := taskfollow.Follow(ctx, s, id, nil); err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("following a cancelled task: %v", err)
	}
}

// `mcpscope call report` prints the final result of the task it created.
func TestTasksExtHeadlessCall(t *testing.T) {
	url := peers.StartTSv2Tasks(t)
	code, out, errb := runIn(t, t.TempDir(), "call", "report", "topic=kelp", "steps=2", "intervalMs=50", "--task", "--no-journal", url)
	if code != exitOK {
		t.Fatalf("call: exit %d\n%s\n%s", code, out, errb)
	}
	if !strings.Contains(out, "report: kelp") || !strings.Contains(errb, " created") || !strings.Contains(errb, "completed") {
		t.Fatalf("call output:\n%s\n%s", out, errb)
	}
}

// A listen stream with taskIds receives notifications/tasks, which update
// the task as the session knows it, up to completed with its result.
func TestTasksExtListen(t *testing.T) {
	s := clienttest.Connect(t, connect.Spec{URL: peers.StartTSv2Tasks(t), NoJournal: true})
	id := clienttest.StartReportTask(t, s, 4, 100)
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

const approve = `{"action":"accept","content":{"approve":true}}`

// An input_required task is answered once per key through the Responder
// and tasks/update, although polls keep showing the request while the
// server's ack is still being applied; the task then completes with what
// the answer decided.
func TestTasksExtInputRequired(t *testing.T) {
	url := peers.StartTSv2Tasks(t)
	r := clienttest.NewResponder(func(req session.ServerRequest) (json.RawMessage, *journal.RPCError) {
		return json.RawMessage(approve), nil
	})
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := connect.Connect(ctx, connect.Spec{URL: url, NoJournal: true, Responder: r, Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := s.Call("tools/call", map[string]any{"name": "review", "arguments": map[string]any{"topic": "kelp", "holdMs": 500}})
	clienttest.Call(t, c)
	id := c.Snapshot().TaskID
	res, err := taskfollow.Follow(ctx, s, id, nil)
	if err != nil {
		t.Fatalf("follow: %v", err)
	}
	if got := clienttest.ResultText(res); got != "review: kelp approved" {
		t.Fatalf("result %q", got)
	}
	asked := r.Requests()
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
	if got := clienttest.ResultText(clienttest.Call(t, s.Call("tools/call", map[string]any{"name": "updates", "arguments": map[string]any{}}))); got != `{"approve-kelp":1}` {
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
	store := &statestore.FileStore{Dir: filepath.Join(state, "mcpscope", "calls")}
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
	s := clienttest.Connect(t, connect.Spec{URL: url, NoJournal: true})
	c := s.Call("tools/call", map[string]any{"name": "review", "arguments": map[string]any{"topic": "dune", "holdMs": 0}})
	clienttest.Call(t, c)
	id := c.Snapshot().TaskID
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for { // wait until the server asks
		var tk protocol.Task
		_ = json.Unmarshal(clienttest.Call(t, s.Call("tasks/get", map[string]any{"taskId": id})), &tk)
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
	s := clienttest.Connect(t, connect.Spec{URL: peers.StartTSv2Tasks(t), NoJournal: true})
	c := s.CallAsTask("tools/call", map[string]any{"name": "report", "arguments": map[string]any{"steps": 1, "intervalMs": 0}}, time.Minute)
	res := clienttest.Call(t, c)
	if strings.Contains(string(protocol.StripMeta(c.Params())), `"task"`) {
		t.Fatalf("params carry a task parameter: %s", c.Params())
	}
	if journal.ResultType(res) != "task" {
		t.Fatalf("want a task, got %s", res)
	}
}

// A task that ends cancelled is no result: following it says how it ended,
// and the command exits 1, the server's word (server-everything, 2025-11-25
// tasks, whose tasks live in the session that made them).
func TestTaskResultOfACancelledTask(t *testing.T) {
	url := peers.StartEverythingHTTP(t, "streamableHttp")
	s := clienttest.Connect(t, connect.Spec{URL: url, NoJournal: true})
	c := s.CallAsTask("tools/call", map[string]any{"name": "simulate-research-query", "arguments": map[string]any{"topic": "moons"}}, time.Minute)
	clienttest.Call(t, c)
	id := c.Snapshot().TaskID
	clienttest.Call(t, s.Call("tasks/cancel", map[string]any{"taskId": id}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := taskfollow.Follow(ctx, s, id, nil)
	if !errors.Is(err, session.ErrTaskEnded) || !strings.Contains(err.Error(), "ended cancelled") {
		t.Fatalf("following a cancelled task: %v", err)
	}
	if code := exitCode(err); code != exitServerErr {
		t.Fatalf("exit code %d for a cancelled task, want %d", code, exitServerErr)
	}
}
