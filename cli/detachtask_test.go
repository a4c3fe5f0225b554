package cli

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

	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/testkit/peers"
	"mcpscope/testkit/testservers"
)

// detachJSON runs `call … --detach --json` with its state in state and
// returns what it printed.
func detachJSON(t *testing.T, state string, args ...string) session.Detachment {
	t.Helper()
	code, out, errb := runIn(t, state, append(append([]string{"call"}, args...), "--detach", "--json", "--no-journal")...)
	var d session.Detachment
	if err := json.Unmarshal([]byte(out), &d); code != exitOK || err != nil || d.Handle == "" {
		t.Fatalf("call %v --detach: exit %d (%v)\nstdout: %s\nstderr: %s", args, code, err, out, errb)
	}
	return d
}

// The README's line against `mcpscope demo --http` in its default era
// (2026-07-28, which cannot resume streams): `call slow seconds=600
// --detach URL` gets a task at once and prints its handle, its record in
// the store; another mcpscope process (its own XDG dirs but the state
// ones, which hold the file store) rejoins a task and follows it to its
// result, and the record goes.
func TestDetachDemoDefaultEra(t *testing.T) {
	url := testservers.StartDemoHTTP(t)
	state := t.TempDir()
	start := time.Now()
	d := detachJSON(t, state, "slow", "seconds=600", url)
	if took := time.Since(start); d.TaskID == "" || d.Handle != protocol.TaskHandle(d.TaskID) || took > 30*time.Second {
		t.Fatalf("detach %+v after %s: want a task's handle, at once", d, took)
	}
	store := &statestore.FileStore{Dir: filepath.Join(state, "mcpscope", "calls")}
	if rec, err := store.Get(d.Handle); err != nil || rec.TaskID != d.TaskID || rec.Era != protocol.EraModern {
		t.Fatalf("the task's record: %+v %v", rec, err)
	}

	d = detachJSON(t, state, "slow", "seconds=1", "steps=4", "task=always", url)
	bin := testservers.BuildMCPScope(t)
	other := t.TempDir()
	cmd := exec.Command(bin, "rejoin", d.Handle, "--no-journal")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+other+"/config", "XDG_CACHE_HOME="+other+"/cache",
		"XDG_RUNTIME_DIR="+other+"/run", "MCPSCOPE_HOST=elsewhere")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := runBounded(ctx, cmd); err != nil || !strings.Contains(out.String(), "slow: finished 4 steps") {
		t.Fatalf("rejoin from another process: %v\nstdout: %s\nstderr: %s", err, out.String(), errb.String())
	}
	if _, err := store.Get(d.Handle); err == nil {
		t.Fatal("the finished task's record is still in the store")
	}
}

// runBounded runs cmd, killing it when ctx ends first.
func runBounded(ctx context.Context, cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-done
		return ctx.Err()
	}
}

// --detach is refused before anything is sent when no call of the session
// could be detached: a 2026-07-28 server without the tasks extension (it
// cannot resume streams), and stdio. Exit 2, saying why and what would
// work; the server never sees the call, and no record is left.
func TestDetachRefusedBeforeSending(t *testing.T) {
	var log bytes.Buffer
	h := testservers.StartHTTPServer(t, testservers.HTTPOpts{Stateless: true, RequestLog: &log})
	state := t.TempDir()
	code, out, errb := runIn(t, state, "call", "slow", "seconds=5", "--detach", "--no-journal", "--era", "modern", h.URL)
	if code != exitUsage || !strings.Contains(errb, "declares no tasks extension") || !strings.Contains(errb, "--era legacy") {
		t.Fatalf("2026 without tasks: exit %d (want %d)\nstdout: %s\nstderr: %s", code, exitUsage, out, errb)
	}
	if sent := log.String(); !strings.Contains(sent, "server/discover") || strings.Contains(sent, "tools/") {
		t.Fatalf("the server saw more than the era probe:\n%s", sent)
	}
	code, out, errb = runIn(t, state, "call", "slow", "seconds=5", "--detach", "--no-journal", "--", testservers.BuildStdio(t))
	if code != exitUsage || !strings.Contains(errb, "only calls over HTTP") {
		t.Fatalf("stdio: exit %d (want %d)\nstdout: %s\nstderr: %s", code, exitUsage, out, errb)
	}
	if l, _ := (&statestore.FileStore{Dir: filepath.Join(state, "mcpscope", "calls")}).List(); len(l) != 0 {
		t.Fatalf("a refused --detach left records: %+v", l)
	}
}

// A call that times out before it could be detached (no task, no event id
// came) says so: exit 4, never "ended before it could be detached".
func TestDetachTimeoutIsATimeout(t *testing.T) {
	url := testservers.StartHTTP(t, testservers.HTTPOpts{JSONResponse: true})
	code, out, errb := runIn(t, t.TempDir(), "call", "delay", "ms=5000", "--timeout", "300ms", "--detach", "--no-journal", "--era", "legacy", url)
	if code != exitTimeout || strings.Contains(errb, "ended before") || !strings.Contains(errb, "timed out before it could be detached") {
		t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, exitTimeout, out, errb)
	}
}

// A tool whose execution.taskSupport is "required" runs as a task without
// --task (server-everything's simulate-research-query, 2025-11-25), and
// --detach leaves that task.
func TestTaskSupportRequired(t *testing.T) {
	url := peers.StartEverythingHTTP(t, "streamableHttp")
	state := t.TempDir()
	code, out, errb := runIn(t, state, "call", "simulate-research-query", "topic=tides", "--no-journal", url)
	if code != exitOK || !strings.Contains(out, "Research Report: tides") || !strings.Contains(errb, "runs as one") || !strings.Contains(errb, " created") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errb)
	}
	d := detachJSON(t, state, "simulate-research-query", "topic=kelp", url)
	if d.TaskID == "" {
		t.Fatalf("detach: %+v; want a task", d)
	}
	code, out, errb = runIn(t, state, "rejoin", d.Handle, "--no-journal")
	if code != exitOK || !strings.Contains(out, "Research Report: kelp") {
		t.Fatalf("rejoin: exit %d\nstdout: %s\nstderr: %s", code, out, errb)
	}
}
