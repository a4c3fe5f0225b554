package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcpscope/statestore"
	"mcpscope/statestore/redisstore"
	"mcpscope/testkit/redistest"
	"mcpscope/testkit/testservers"
	"mcpscope/testkit/waitfor"
)

// machine is the command that runs the binary as if on its own machine,
// with a fresh box (its own HOME, XDG folders and host name).
func machine(t *testing.T, host string, args ...string) *exec.Cmd {
	t.Helper()
	return newBox(t, host).cmd(args...)
}

// progressLines are the "progress N/T" steps a command printed.
func progressSteps(out string) []int {
	var steps []int
	for _, l := range strings.Split(out, "\n") {
		var v, total int
		if _, err := fmt.Sscanf(strings.TrimSpace(l), "progress %d/%d", &v, &total); err == nil {
			steps = append(steps, v)
		}
	}
	return steps
}

// sharedRedis is a real redis-server for a test, its URL for --state, and
// a store on it for the test's own look at what is kept.
func sharedRedis(t *testing.T) (*redistest.Server, string, *redisstore.Store) {
	t.Helper()
	srv := redistest.Start(t)
	state := srv.URL(0)
	store, err := redisstore.Open(redisstore.Options{URL: state})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return srv, state, store
}

// kill -9 of the owner mid-call on machine A, at whatever moment its third
// step is journaled; machine B, which shares nothing with A but Redis,
// lists the call (its lease expired), rejoins it and gets the rest: every
// step shown once across the two (A marks each step in the store before it
// journals or shows it), the result, and no key left in Redis.
func TestRejoinFromAnotherMachine(t *testing.T) {
	srv, state, store := sharedRedis(t)
	url := testservers.StartHTTP(t, testservers.HTTPOpts{EventStore: true})

	a := machine(t, "machine-a", "call", "slow", "seconds=6", "steps=20", "--era", "legacy", "--state", state,
		"--lease-ttl", "2s", url)
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	var rec statestore.Detached
	if !waitfor.Within(60*time.Second, func() bool {
		if l, _ := store.List(); len(l) == 1 {
			rec = l[0]
			return len(journaledProgress(t, rec.Journal)) >= 3
		}
		return false
	}) {
		a.Process.Kill()
		t.Fatal("A journaled no third step within 60s")
	}
	a.Process.Signal(syscall.SIGKILL)
	a.Wait()
	seenA := journaledProgress(t, rec.Journal)
	// B's machine has none of A's files: A's journal, which a rejoin on
	// A's machine would read for the steps A showed, is out of B's reach.
	if err := os.Rename(rec.Journal, rec.Journal+".on-machine-a"); err != nil {
		t.Fatal(err)
	}
	rec, err := store.Get(rec.Handle)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Owner == nil || rec.Owner.Host != "machine-a" {
		t.Fatalf("the record does not name its owner: %+v", rec.Owner)
	}

	// B lists it: while A's lease lives it is held, then expired.
	for deadline := time.Now().Add(30 * time.Second); ; {
		out, err := machine(t, "machine-b", "rejoin", "--state", state).CombinedOutput()
		if err != nil {
			t.Fatalf("rejoin list: %v\n%s", err, out)
		}
		if strings.Contains(string(out), rec.Handle) && strings.Contains(string(out), "expired (pid") &&
			strings.Contains(string(out), "machine-a") {
			break
		}
		if !strings.Contains(string(out), "held by pid") || time.Now().After(deadline) {
			t.Fatalf("B's list: %s", out)
		}
		time.Sleep(200 * time.Millisecond) // A's 2s lease runs out
	}
	var stdout, stderr bytes.Buffer
	b := machine(t, "machine-b", "rejoin", rec.Handle, "--state", state)
	b.Stdout, b.Stderr = &stdout, &stderr
	if err := b.Run(); err != nil {
		t.Fatalf("rejoin on B: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "finished 20 steps") {
		t.Fatalf("B printed no result: %s", stdout.String())
	}
	seen := map[int]int{}
	for _, v := range seenA {
		seen[v]++
	}
	for _, v := range progressSteps(stderr.String()) {
		seen[v]++
	}
	for step := 1; step <= 20; step++ {
		if seen[step] != 1 {
			t.Errorf("step %d shown %d times across the two machines (A %v, B:\n%s)", step, seen[step], seenA, stderr.String())
		}
	}
	if left := redisKeys(t, srv); len(left) != 0 {
		t.Fatalf("keys left in Redis after the rejoin: %v", left)
	}
}

func redisKeys(t *testing.T, srv *redistest.Server) []string {
	t.Helper()
	out, err := exec.Command("redis-cli", "-h", "127.0.0.1", "-p", strings.Split(srv.Addr, ":")[1], "--raw", "KEYS", "*").Output()
	if err != nil {
		t.Fatalf("redis-cli: %v", err)
	}
	return strings.Fields(string(out))
}

// open and attach take --state like every command that lists detached
// calls: their inspector's D view lists the Redis store's calls, and the
// status bar names it.
func TestE2EOpenAndAttachListTheStateStore(t *testing.T) {
	_, state, store := sharedRedis(t)
	d := statestore.Detached{Handle: "kept-in-redis-1", Target: "http://127.0.0.1:1/mcp", Transport: "http",
		RequestID: []byte("4"), Method: "tools/call", Name: "slow", LastEventIDs: map[string]string{"post:4": "e1"},
		Started: time.Now()}
	if err := store.Put(d); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	env := attachEnv(t, dir)
	path := filepath.Join(dir, "session.jsonl")
	rec := exec.Command(binary(t), "call", "echo", "message=recorded", "--journal", path)
	rec.Env = env
	if out, err := rec.CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, out)
	}
	tm := pane(t, dir, env, 140, 30, "open", path, "--state", state)
	tm.waitRe(`recording: offline`, `tools/call\s+echo\s+ok`)
	tm.keys("D")
	tm.waitFor("Detached calls 1", "kept-in-redis-1")
	tm.keys("Escape")
	tm.waitFor("Requests")
	tm.keys("q")
	tm.waitFor("EXITED 0")

	h := startHost(t, env, "state-host")
	h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"scripted-host","version":"1"}}}`)
	if a := h.answer(1); a.Error != nil {
		t.Fatalf("initialize: %s", a.raw)
	}
	ta := pane(t, dir, env, 140, 30, "attach", "state-host", "--state", state)
	ta.waitRe(`attached: proxy state-host`)
	ta.keys("D")
	ta.waitFor("Detached calls 1", "kept-in-redis-1")
	ta.keys("Escape")
	ta.waitFor("Requests")
	ta.keys("q")
	ta.waitFor("EXITED 0")
}
