package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/connect"
	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/testkit/clienttest"
	"mcpscope/testkit/peers"
	"mcpscope/testkit/testservers"
	"mcpscope/testkit/waitfor"
	"mcpscope/transport"
)

// detach runs `mcpscope call … --detach --json` and returns what it printed;
// the call goes on on the server.
func detach(t *testing.T, state string, args ...string) session.Detachment {
	t.Helper()
	d, _ := detachWith(t, mcpscope(t, state, append([]string{"call"}, args...)...))
	return d
}

// rejoinRun is one `mcpscope rejoin` run: its output, exit code, the
// progress values it showed, and how long after its start it showed the
// first of them.
type rejoinRun struct {
	stdout, stderr string
	code           int
	progress       []int
	firstProgress  time.Duration
}

func runRejoin(t *testing.T, state string, args ...string) rejoinRun {
	t.Helper()
	return runRejoinCmd(t, mcpscope(t, state, append([]string{"rejoin"}, args...)...))
}

// runRejoinCmd runs cmd, a `mcpscope rejoin`, as runRejoin does.
func runRejoinCmd(t *testing.T, cmd *exec.Cmd) rejoinRun {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout = &out
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var r rejoinRun
	var errb strings.Builder
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		l := sc.Text()
		errb.WriteString(l + "\n")
		var v, total int
		if _, err := fmt.Sscanf(l, "progress %d/%d", &v, &total); err == nil {
			if len(r.progress) == 0 {
				r.firstProgress = time.Since(start)
			}
			r.progress = append(r.progress, v)
		}
	}
	err = cmd.Wait()
	r.stdout, r.stderr, r.code = out.String(), errb.String(), cmd.ProcessState.ExitCode()
	if err != nil && r.code <= 0 {
		t.Fatalf("rejoin: %v", err)
	}
	return r
}

// wire counts what a journal says went out that would end a call or a
// session on the server: notifications/cancelled, and DELETEs.
func wire(t *testing.T, path string) (cancels, deletes int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("journal: %v", err)
	}
	defer f.Close()
	_, _ = journal.Read(f, func(_ uint64, fr transport.Frame) error {
		if fr.Meta.HTTPMethod == "DELETE" {
			deletes++
		}
		if fr.Dir == transport.Out && bytes.Contains(fr.Data, []byte(`"notifications/cancelled"`)) {
			cancels++
		}
		return nil
	})
	return cancels, deletes
}

// onceEach checks that across the runs every step 1..n was shown exactly
// once.
func onceEach(t *testing.T, n int, runs ...[]int) { shownOnce(t, n, true, runs...) }

// shownOnce checks that across the runs no step of 1..n was shown twice,
// and with every that each was shown.
func shownOnce(t *testing.T, n int, every bool, runs ...[]int) {
	t.Helper()
	seen := map[int]int{}
	for _, r := range runs {
		for _, v := range r {
			seen[v]++
		}
	}
	for step := 1; step <= n; step++ {
		if seen[step] > 1 || every && seen[step] != 1 {
			t.Errorf("step %d was shown %d times (want once); counts %v", step, seen[step], seen)
		}
	}
}

func callStore(state string) *statestore.FileStore {
	return &statestore.FileStore{Dir: filepath.Join(state, "mcpscope", "calls")}
}

// detachThenRejoin: `call --detach` leaves a call with progress running; a
// second process rejoins it and shows every step once (no step twice and
// the last one, when every is false), then the result, without a cancel.
// It returns the rejoin.
func detachThenRejoin(t *testing.T, steps int, every bool, want string, callArgs ...string) rejoinRun {
	t.Helper()
	state := t.TempDir()
	j1, j2 := filepath.Join(state, "detach.jsonl"), filepath.Join(state, "rejoin.jsonl")
	d := detach(t, state, append(callArgs, "--journal", j1)...)
	if d.State != "detached" {
		t.Fatalf("detach state %q", d.State)
	}
	if _, err := callStore(state).Get(d.Handle); err != nil {
		t.Fatalf("no record for %s: %v", d.Handle, err)
	}
	r := runRejoin(t, state, d.Handle, "--journal", j2)
	if r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Fatalf("rejoin: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	shownOnce(t, steps, every, journaledProgress(t, j1), r.progress)
	if len(r.progress) == 0 || r.progress[len(r.progress)-1] != steps {
		t.Errorf("the rejoin did not show the last step: %v", r.progress)
	}
	for _, j := range []string{j1, j2} {
		if cancels, _ := wire(t, j); cancels != 0 {
			t.Errorf("%s: %d notifications/cancelled went out; the call was only detached and rejoined", j, cancels)
		}
	}
	if _, deletes := wire(t, j1); deletes != 0 {
		t.Errorf("call --detach ended the MCP session its call runs in (%d DELETE)", deletes)
	}
	if l, _ := callStore(state).List(); len(l) != 0 {
		t.Errorf("the record should be gone after the rejoin got the result: %+v", l)
	}
	return r
}

// server-everything over Streamable HTTP: its resumed stream goes quiet
// after the replay (its event store's replay answers an event id for a
// stream id), so the rejoin must ask again from its newest event id.
func TestDetachRejoinEverything(t *testing.T) {
	url := peers.StartEverythingHTTP(t, "streamableHttp")
	r := detachThenRejoin(t, 12, true, "Long running operation completed",
		"trigger-long-running-operation", "duration=6", "steps=12", url)
	t.Logf("server-everything: first progress shown %s after the rejoin started", r.firstProgress)
}

// The inspector's d then q (Detach, then Close) on server-everything, then
// `mcpscope rejoin` from another process: the progress missed meanwhile,
// the rest, the result; nothing shown twice; no cancel, and the detaching
// process left the session open.
func TestDetachQuitRejoinEverything(t *testing.T) {
	url := peers.StartEverythingHTTP(t, "streamableHttp")
	dir := t.TempDir()
	j1, j2 := filepath.Join(dir, "inspector.jsonl"), filepath.Join(dir, "rejoin.jsonl")
	s := clienttest.Connect(t, connect.Spec{URL: url, Journal: j1})
	state := os.Getenv("XDG_STATE_HOME") // clienttest.Connect's
	c := s.Call("tools/call", map[string]any{"name": "trigger-long-running-operation", "arguments": map[string]any{"duration": 8, "steps": 16}})
	clienttest.WaitFor(t, s, func() bool { return c.Snapshot().Progress.Updates >= 2 })
	handle, err := s.Detach(c)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	rec, err := callStore(state).Get(handle)
	if err != nil {
		t.Fatal(err)
	}
	serverProgressed(t, url, rec)
	r := runRejoin(t, state, handle, "--journal", j2)
	if r.code != 0 || !strings.Contains(r.stdout, "Long running operation completed") {
		t.Fatalf("rejoin: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	onceEach(t, 16, journaledProgress(t, j1), r.progress)
	if len(r.progress) == 0 || r.progress[len(r.progress)-1] != 16 {
		t.Fatalf("the rejoin did not show the last step: %v", r.progress)
	}
	c1, d1 := wire(t, j1)
	c2, _ := wire(t, j2)
	if c1+c2 != 0 || d1 != 0 {
		t.Fatalf("on the wire: %d cancels from the inspector, %d from the rejoin, %d DELETEs from the inspector; want none", c1, c2, d1)
	}
	t.Logf("server-everything after d, q: first missed progress shown %s after the rejoin started", r.firstProgress)
}

// serverProgressed returns once the server has sent progress on rec's
// stream after the record's last event id (seen with raw GETs, each
// replaying from that id): a rejoin then has missed progress to show.
func serverProgressed(t *testing.T, url string, rec statestore.Detached) {
	t.Helper()
	var lastID string
	for _, id := range rec.LastEventIDs {
		lastID = id
	}
	if !waitfor.Within(30*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", rec.SessionID)
		req.Header.Set("Mcp-Protocol-Version", rec.ProtocolVersion)
		req.Header.Set("Last-Event-ID", lastID)
		found := false
		if resp, err := http.DefaultClient.Do(req); err == nil {
			sc := bufio.NewScanner(resp.Body)
			for !found && sc.Scan() {
				found = strings.HasPrefix(sc.Text(), "data:") && strings.Contains(sc.Text(), "notifications/progress")
			}
			resp.Body.Close()
		}
		cancel()
		return found
	}) {
		t.Fatal("the server sent no progress after the detach within 30s")
	}
}

// A rejoin that gives up (here its --timeout passes before the next step)
// only stops following: exit 4 saying so, no notifications/cancelled, no
// DELETE, the record kept; the next rejoin gets the result from the same
// session.
func TestRejoinGiveUpLeavesTheSession(t *testing.T) {
	url := peers.StartEverythingHTTP(t, "streamableHttp")
	state := t.TempDir()
	j2 := filepath.Join(state, "rejoin.jsonl")
	d := detach(t, state, "trigger-long-running-operation", "duration=8", "steps=2", "--no-journal", url)
	r := runRejoin(t, state, d.Handle, "--timeout", "1s", "--journal", j2)
	if r.code != 4 || !strings.Contains(r.stderr, "goes on on the server") || !strings.Contains(r.stderr, "mcpscope rejoin "+d.Handle) {
		t.Fatalf("the give-up: exit %d (want 4)\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if cancels, deletes := wire(t, j2); cancels != 0 || deletes != 0 {
		t.Fatalf("the rejoin that gave up sent %d cancels and %d DELETEs; want none", cancels, deletes)
	}
	if _, err := callStore(state).Get(d.Handle); err != nil {
		t.Fatalf("the give-up dropped the record: %v", err)
	}
	again := runRejoin(t, state, d.Handle, "--no-journal")
	if again.code != 0 || !strings.Contains(again.stdout, "Long running operation completed") {
		t.Fatalf("the next rejoin: exit %d\nstdout: %s\nstderr: %s", again.code, again.stdout, again.stderr)
	}
	onceEach(t, 2, r.progress, again.progress)
}

// The Go SDK's Streamable HTTP server with its memory event store.
func TestDetachRejoinGoSDK(t *testing.T) {
	url := testservers.StartHTTP(t, testservers.HTTPOpts{EventStore: true})
	detachThenRejoin(t, 12, true, "slow", "slow", "seconds=3", "steps=12", url)
}

// mark3labs/mcp-go's Streamable HTTP server with its in-memory event store,
// in the initialize era (it speaks 2026-07-28 too, which cannot resume).
// Once its client is gone, mcp-go v1.2.1 stores only every other progress
// notification on the call's stream (a raw GET replays the same gaps), so
// only "none twice, the last one, the result" holds.
func TestDetachRejoinMCPGo(t *testing.T) {
	url := testservers.StartMCPGoHTTPResumable(t)
	detachThenRejoin(t, 12, false, "done 12 steps", "slow", "steps=12", "intervalMs=250", "--era", "legacy", url)
}

// Calls that cannot be rejoined are not detached: stdio (the server ends
// with this process) and a 2026-07-28 server without the tasks extension
// are refused before the call is sent (exit 2); an HTTP server whose stream
// turns out to have no event ids, once it answers (exit 3). Each says why,
// and no record is left.
func TestDetachRefused(t *testing.T) {
	for name, target := range map[string]struct {
		argv []string
		code int
	}{
		"stdio":       {[]string{"--", testservers.BuildStdio(t)}, 2},
		"no event id": {[]string{testservers.StartHTTP(t, testservers.HTTPOpts{})}, 3},
		"2026 stream": {[]string{testservers.StartMCPGoHTTPResumable(t)}, 2},
	} {
		t.Run(name, func(t *testing.T) {
			state := t.TempDir()
			var out, errb bytes.Buffer
			cmd := mcpscope(t, state, append([]string{"call", "slow", "seconds=5", "steps=5", "--detach", "--no-journal"}, target.argv...)...)
			cmd.Stdout, cmd.Stderr = &out, &errb
			_ = cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != target.code || !strings.Contains(errb.String(), "--detach: ") && !strings.Contains(errb.String(), "cannot be") {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, target.code, out.String(), errb.String())
			}
			if l, _ := callStore(state).List(); len(l) != 0 {
				t.Fatalf("a refused --detach left records: %+v", l)
			}
		})
	}
}

// 2026-07-28: --detach makes a task (the server decides; this one does for
// review), its id goes into the store, and another process rejoins it by
// polling tasks/get, answering the input it asks for with --answer.
func TestTasksExtDetachRejoinAnswer(t *testing.T) {
	url := peers.StartTSv2Tasks(t)
	state := t.TempDir()
	d := detach(t, state, "review", "topic=reef", "--no-journal", url)
	rec, err := callStore(state).Get(d.Handle)
	if err != nil || d.TaskID == "" || rec.TaskID != d.TaskID || rec.Era != protocol.EraModern {
		t.Fatalf("detach %+v; record %+v (%v): want the task's record", d, rec, err)
	}
	r := runRejoin(t, state, d.Handle, "--no-journal", "--answer", `approve-reef={"action":"accept","content":{"approve":true}}`)
	if r.code != 0 || !strings.Contains(r.stdout, "review: reef approved") || !strings.Contains(r.stderr, "input_required") {
		t.Fatalf("rejoin: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if l, _ := callStore(state).List(); len(l) != 0 {
		t.Fatalf("the finished task's record should be gone: %+v", l)
	}
}

// 2025-11-25 tasks: --task --detach leaves the task with its record, and
// the MCP session it lives in open (no DELETE); another process follows
// the task to its result.
func TestDetachTaskEverything(t *testing.T) {
	url := peers.StartEverythingHTTP(t, "streamableHttp")
	state := t.TempDir()
	j1 := filepath.Join(state, "detach.jsonl")
	d := detach(t, state, "simulate-research-query", "topic=tides", "--task", "--journal", j1, url)
	if d.TaskID == "" || d.Handle != protocol.TaskHandle(d.TaskID) {
		t.Fatalf("detach: %+v; want a task and its handle", d)
	}
	if cancels, deletes := wire(t, j1); cancels != 0 || deletes != 0 {
		t.Fatalf("call --task --detach sent %d cancels and %d DELETEs; the task lives in that session", cancels, deletes)
	}
	r := runRejoin(t, state, d.Handle, "--no-journal")
	if r.code != 0 || !strings.Contains(r.stdout, "Research Report: tides") {
		t.Fatalf("rejoin: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if l, _ := callStore(state).List(); len(l) != 0 {
		t.Fatalf("the task's record should be gone once its result was fetched: %+v", l)
	}
}
