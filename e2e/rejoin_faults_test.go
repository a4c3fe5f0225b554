package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/connect"
	"mcpscope/internal/shell"
	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/testkit/clienttest"
	"mcpscope/testkit/peers"
	"mcpscope/testkit/redistest"
	"mcpscope/testkit/testservers"
)

// box is one machine's mcpscope: its own HOME and XDG folders (kept from
// one command to the next) and host name; it shares nothing with another
// box but what the test gives both (a Redis).
type box struct {
	t    *testing.T
	host string
	home string
}

func newBox(t *testing.T, host string) *box { return &box{t: t, host: host, home: t.TempDir()} }

func (b *box) cmd(args ...string) *exec.Cmd {
	b.t.Helper()
	cmd := exec.Command(binary(b.t), args...)
	cmd.Env = append(os.Environ(), "HOME="+b.home, "XDG_STATE_HOME="+filepath.Join(b.home, "state"),
		"XDG_CONFIG_HOME="+filepath.Join(b.home, "config"), "XDG_CACHE_HOME="+filepath.Join(b.home, "cache"),
		statestore.EnvHost+"="+b.host, "MCPSCOPE_STATE=")
	return cmd
}

// ran is one command's outcome.
type ran struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

func (b *box) run(args ...string) ran {
	b.t.Helper()
	return runCmd(b.t, b.cmd(args...))
}

// runCmd runs cmd to its end and says how it went.
func runCmd(t *testing.T, cmd *exec.Cmd) ran {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := ran{stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	return r
}

// detachWith runs cmd, a `call … --detach --json`, and returns what it
// printed (the call goes on on the server) and how it ran.
func detachWith(t *testing.T, cmd *exec.Cmd) (session.Detachment, ran) {
	t.Helper()
	cmd.Args = append(cmd.Args, "--detach", "--json")
	r := runCmd(t, cmd)
	var d session.Detachment
	if err := json.Unmarshal([]byte(r.stdout), &d); r.code != 0 || err != nil || d.Handle == "" || d.State == "" {
		t.Fatalf("%v: exit %d, printed %q (%v); want {handle, state}\nstderr: %s", cmd.Args, r.code, r.stdout, err, r.stderr)
	}
	return d, r
}

// detach runs `call slow … --detach --json` on b and returns the handle.
func (b *box) detach(url string, args ...string) (string, ran) {
	b.t.Helper()
	d, r := detachWith(b.t, b.cmd(append(append([]string{"call", "slow", "--era", "legacy", "--no-journal"}, args...), url)...))
	return d.Handle, r
}

// inspectorStreamingSlow starts the inspector (in tmux, its state under
// dir/state) against the Go SDK's HTTP server with an event store, with
// args before the server's URL, and leaves the slow tool called with
// seconds and steps, its result awaited in the background.
func inspectorStreamingSlow(t *testing.T, dir string, seconds, steps string, args ...string) (tm *tmux, state string) {
	t.Helper()
	url := testservers.StartHTTP(t, testservers.HTTPOpts{EventStore: true})
	state = filepath.Join(dir, "state")
	tm = pane(t, dir, []string{"XDG_STATE_HOME=" + state, "XDG_CONFIG_HOME=" + dir + "/config"}, 140, 40,
		append(append(args, "--era", "legacy", "--no-journal"), url)...)
	tm.openTool("slow", "slow")
	tm.fillField("seconds", seconds)
	tm.fillField("steps", steps)
	tm.keys("Enter")
	tm.waitFor("(waiting for the response)")
	tm.keys("Escape")
	tm.waitRe(`slow\s+streaming`)
	return tm, state
}

// files lists what b's file store and Redis fallback folders hold
// (records, marks, leases).
func (b *box) files() []string {
	var left []string
	root := filepath.Join(b.home, "state", "mcpscope")
	for _, dir := range []string{filepath.Join(root, "calls"), filepath.Join(root, "calls.leases"), filepath.Join(root, "fallback")} {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Name() != ".lock" {
				left = append(left, p)
			}
			return nil
		})
	}
	return left
}

// Redis stopped with SHUTDOWN and started again on the same folder between
// `call --detach` on one machine and `rejoin` on another: the record is
// still there and the rejoin gets the result; nothing is left in Redis.
func TestRejoinAcrossARedisRestart(t *testing.T) {
	srv, state, _ := sharedRedis(t)
	url := testservers.StartHTTP(t, testservers.HTTPOpts{EventStore: true})
	h, _ := newBox(t, "machine-a").detach(url, "seconds=1", "steps=4", "--state", state)
	srv.Restart(t)
	r := newBox(t, "machine-b").run("rejoin", h, "--state", state, "--no-journal")
	if r.code != 0 || !strings.Contains(r.stdout, "finished 4 steps") {
		t.Fatalf("rejoin after the restart: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if left := redisKeys(t, srv); len(left) != 0 {
		t.Fatalf("keys left in Redis: %v", left)
	}
}

// Redis unreachable when `call --detach` runs: the call is still detached,
// its record kept in that Redis's local fallback folder, and the user told
// where and how to rejoin it: the same --state. While Redis is down the
// listing says it can show only the local copies (exit 3); another machine
// cannot rejoin (exit 3, the store named); the machine that kept the copy
// can: the call is claimed in the folder and finishes. The local copy is
// listed under that Redis alone, labelled: neither another Redis nor the
// plain file store lists it. Once Redis answers, the printed command gets
// the result of a second such call. No file and no key is left.
func TestDetachAndRejoinWhileRedisIsUnreachable(t *testing.T) {
	srv, other := redistest.Start(t), redistest.Start(t)
	state := srv.URL(0)
	srv.Kill()
	url := testservers.StartHTTP(t, testservers.HTTPOpts{EventStore: true})
	a := newBox(t, "machine-a")
	h, d := a.detach(url, "seconds=1", "steps=4", "--state", state)
	line := shell.Join([]string{"mcpscope", "rejoin", "--state", state, h})
	if !strings.Contains(d.stderr, "kept in file store "+filepath.Join(a.home, "state", "mcpscope", "fallback")+"/") ||
		!strings.Contains(d.stderr, line) {
		t.Fatalf("the user is not told where the record of %s went, or how to rejoin it (%s):\n%s", h, line, d.stderr)
	}
	h2, _ := a.detach(url, "seconds=1", "steps=4", "--state", state)

	r := a.run("rejoin", "--state", state)
	if r.code != 3 || !strings.Contains(r.stdout, h) || !strings.Contains(r.stdout, h2) || !strings.Contains(r.stdout, statestore.FallbackLabel) ||
		!strings.Contains(r.stderr, "listed below are only the 2 call(s) this machine kept a local copy of") {
		t.Fatalf("rejoin --state %s while it is down: exit %d\n%s\n%s", state, r.code, r.stdout, r.stderr)
	}
	r = newBox(t, "machine-b").run("rejoin", h, "--state", state, "--no-journal")
	if r.code != 3 || !strings.Contains(r.stderr, "state store "+state) || r.took > 30*time.Second {
		t.Fatalf("rejoin through an unreachable Redis on another machine: exit %d after %s\n%s", r.code, r.took, r.stderr)
	}
	t.Logf("a rejoin through an unreachable Redis failed in %s: %s", r.took, strings.TrimSpace(r.stderr))
	for _, elsewhere := range []string{other.URL(0), "file"} {
		if r := a.run("rejoin", "--state", elsewhere); r.code != 0 || strings.Contains(r.stdout, h) {
			t.Fatalf("rejoin --state %s (not the Redis %s fell back from): exit %d\n%s\n%s", elsewhere, h, r.code, r.stdout, r.stderr)
		}
	}
	r = a.run(append(strings.Fields(line)[1:], "--no-journal")...)
	if r.code != 0 || !strings.Contains(r.stdout, "finished 4 steps") || !strings.Contains(r.stderr, statestore.FallbackLabel) {
		t.Fatalf("%s on the machine that kept it, Redis still down: exit %d\n%s\n%s", line, r.code, r.stdout, r.stderr)
	}

	srv.Restart(t)
	r = a.run("rejoin", "--state", state, "--json")
	var rows []struct {
		Handle      string `json:"handle"`
		Local       bool   `json:"local"`
		LocalFolder string `json:"localFolder"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 1 || rows[0].Handle != h2 || !rows[0].Local ||
		!strings.HasPrefix(rows[0].LocalFolder, filepath.Join(a.home, "state", "mcpscope", "fallback")) {
		t.Fatalf("rejoin --json once Redis answers: %v\n%s", err, r.stdout)
	}
	r = a.run("rejoin", h2, "--state", state, "--no-journal")
	if r.code != 0 || !strings.Contains(r.stdout, "finished 4 steps") {
		t.Fatalf("rejoin %s once Redis answers: exit %d\n%s\n%s", h2, r.code, r.stdout, r.stderr)
	}
	if left := a.files(); len(left) != 0 {
		t.Fatalf("files left: %v", left)
	}
	if left := redisKeys(t, srv); len(left) != 0 {
		t.Fatalf("keys left in Redis: %v", left)
	}
}

// 20 cycles of `call --detach` on one machine and `rejoin` on another
// leave no key in Redis and no file on either machine.
func TestTwentyDetachRejoinCyclesLeaveNothing(t *testing.T) {
	srv, state, _ := sharedRedis(t)
	url := testservers.StartHTTP(t, testservers.HTTPOpts{EventStore: true})
	a, b := newBox(t, "machine-a"), newBox(t, "machine-b")
	for i := range 20 {
		h, _ := a.detach(url, "seconds=0.2", "steps=2", "--state", state)
		r := b.run("rejoin", h, "--state", state, "--no-journal")
		if r.code != 0 || !strings.Contains(r.stdout, "finished 2 steps") {
			t.Fatalf("cycle %d: rejoin exit %d\n%s\n%s", i, r.code, r.stdout, r.stderr)
		}
	}
	if left := redisKeys(t, srv); len(left) != 0 {
		t.Fatalf("keys left in Redis after 20 cycles: %v", left)
	}
	if left := append(a.files(), b.files()...); len(left) != 0 {
		t.Fatalf("files left after 20 cycles: %v", left)
	}
}

// Two rejoiners race from two machines for one detached call, 20 times:
// exactly one wins each time; the other names the holder (host and pid)
// and exits non-zero at once. The winner is then interrupted (the call
// goes on, its record kept, the lease let go) and the next round races
// for the same call.
func TestTwoRejoinersOneWinner(t *testing.T) {
	_, state, store := sharedRedis(t)
	url := testservers.StartHTTP(t, testservers.HTTPOpts{EventStore: true})
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	s := clienttest.Connect(t, connect.Spec{URL: url, NoJournal: true, Era: "legacy", StateStore: store})
	c := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 120, "steps": 120}})
	clienttest.WaitFor(t, s, func() bool { return c.Snapshot().Progress.Updates >= 1 })
	h, err := s.Detach(c)
	if err != nil {
		t.Fatal(err)
	}
	racers := [2]*box{newBox(t, "racer-0"), newBox(t, "racer-1")}
	type exit struct {
		i    int
		code int
	}
	for round := range 20 {
		var cmds [2]*exec.Cmd
		var outs [2]bytes.Buffer
		exits := make(chan exit, 2)
		for i := range 2 {
			cmds[i] = racers[i].cmd("rejoin", h, "--state", state, "--no-journal")
			cmds[i].Stderr = &outs[i]
			if err := cmds[i].Start(); err != nil {
				t.Fatal(err)
			}
			go func() {
				err := cmds[i].Wait()
				code := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					code = ee.ExitCode()
				}
				exits <- exit{i, code}
			}()
		}
		first := <-exits // the loser: told at once
		winner := 1 - first.i
		if first.code == 0 || !strings.Contains(outs[first.i].String(), "is held by the mcpscope with pid") ||
			!strings.Contains(outs[first.i].String(), fmt.Sprintf("racer-%d", winner)) {
			cmds[winner].Process.Kill()
			<-exits
			t.Fatalf("round %d: the first racer out (%d) exited %d\n%s", round, first.i, first.code, outs[first.i].String())
		}
		holders, err := store.Holders(statestore.CallLease(h))
		if err != nil || len(holders) != 1 || holders[0].Owner.Host != fmt.Sprintf("racer-%d", winner) {
			t.Fatalf("round %d: holders %+v %v; want racer-%d alone", round, holders, err, winner)
		}
		cmds[winner].Process.Signal(os.Interrupt)
		if last := <-exits; last.code != 130 {
			t.Fatalf("round %d: the winner exited %d on an interrupt\n%s", round, last.code, outs[winner].String())
		}
		if d, err := store.Get(h); err != nil || d.Owner != nil {
			t.Fatalf("round %d: after the winner's interrupt the record is %+v %v; want it kept, free", round, d, err)
		}
	}
}

// Redis unreachable while the inspector runs a call it keeps a record of:
// the status bar marks the store as failing for as long as it
// fails (its stderr is the screen, so the person is told there), and the
// notes pane keeps what failed, naming the Redis. (The footer's warning, shown until
// a key is pressed, is TestSessionWarningInTheFooter in ui.)
func TestE2ERedisUnreachableIsShownInTheInspector(t *testing.T) {
	srv := redistest.Start(t)
	redisURL := srv.URL(0)
	srv.Kill()
	dir := t.TempDir()
	url := testservers.StartHTTP(t, testservers.HTTPOpts{EventStore: true})
	tm := pane(t, dir, []string{"XDG_STATE_HOME=" + filepath.Join(dir, "state"), "XDG_CONFIG_HOME=" + dir + "/config"}, 200, 40,
		"--state", redisURL, "--era", "legacy", "--no-journal", url)
	tm.openTool("slow", "slow")
	tm.fillField("seconds", "1")
	tm.fillField("steps", "2")
	tm.keys("Enter")
	tm.waitFor("(waiting for the response)")
	tm.keys("Escape")
	// The status bar shows on every screen: wait for the detail to close
	// first, or the q below reaches it with the Escape as alt+q.
	tm.waitUntil("the detail to close", func(s string) bool { return !strings.Contains(s, "(waiting for the response)") })
	tm.waitRe(`│ state Redis( \S+ ⚠ failing| ⚠) `)
	tm.waitFor("in the state store (Redis " + redisURL + ")")
	tm.keys("q")
	tm.waitFor("EXITED 0")
}

// Redis unreachable when q in the inspector leaves a running call to the
// server: the record is kept in that Redis's local fallback folder, the
// user is told where and given the command that rejoins it (the same
// --state), and that command, once Redis answers, gets the result and
// leaves no file and no key.
func TestE2EQuitWhileRedisIsUnreachable(t *testing.T) {
	srv := redistest.Start(t)
	redisURL := srv.URL(0)
	srv.Kill()
	dir := t.TempDir()
	tm, state := inspectorStreamingSlow(t, dir, "3", "6", "--state", redisURL)
	tm.keys("q")
	tm.waitFor("EXITED 0")
	b, err := os.ReadFile(filepath.Join(dir, "stderr.log"))
	if err != nil {
		t.Fatal(err)
	}
	fallback := filepath.Join(state, "mcpscope", "fallback")
	var handle string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 5 && f[0] == "mcpscope" && f[1] == "rejoin" && f[2] == "--state" && f[3] == redisURL {
			handle = f[4]
			if !strings.Contains(l, "could not be reached: kept in file store "+fallback+"/") {
				t.Fatalf("the user is not told where the record went: %s", l)
			}
		}
	}
	if handle == "" {
		t.Fatalf("no rejoin command with --state %s after q:\n%s", redisURL, b)
	}
	srv.Restart(t)
	out, err := mcpscope(t, state, "rejoin", "--state", redisURL, handle, "--no-journal").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "finished 6 steps") {
		t.Fatalf("rejoin once Redis answers: %v\n%s", err, out)
	}
	var left []string
	_ = filepath.WalkDir(fallback, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".json") {
			left = append(left, p)
		}
		return nil
	})
	if len(left) != 0 {
		t.Fatalf("records left in the fallback: %v", left)
	}
	if keys := redisKeys(t, srv); len(keys) != 0 {
		t.Fatalf("keys left in Redis: %v", keys)
	}
}

// The reference server across two machines that share only Redis: `call
// --detach` on A, the server goes on, `rejoin` on B shows the progress
// missed meanwhile, the rest and the result, each step once. It logs the
// time from the rejoin's start to the first missed step shown.
func TestRejoinEverythingFromAnotherMachine(t *testing.T) {
	srv, state, store := sharedRedis(t)
	url := peers.StartEverythingHTTP(t, "streamableHttp")
	d, _ := detachWith(t, newBox(t, "machine-a").cmd("call", "trigger-long-running-operation", "duration=6", "steps=12",
		"--state", state, "--no-journal", url))
	rec, err := store.Get(d.Handle)
	if err != nil {
		t.Fatal(err)
	}
	serverProgressed(t, url, rec)
	rr := runRejoinCmd(t, newBox(t, "machine-b").cmd("rejoin", d.Handle, "--state", state, "--no-journal"))
	if rr.code != 0 || !strings.Contains(rr.stdout, "Long running operation completed") {
		t.Fatalf("rejoin on B: exit %d\n%s\n%s", rr.code, rr.stdout, rr.stderr)
	}
	seen := map[int]int{}
	for _, v := range rr.progress {
		seen[v]++
	}
	for step := rec.Progress.Updates + 1; step <= 12; step++ {
		if seen[step] != 1 {
			t.Errorf("step %d shown %d times on B (A showed %d): %v", step, seen[step], rec.Progress.Updates, rr.progress)
		}
	}
	for step := 1; step <= rec.Progress.Updates; step++ {
		if seen[step] != 0 {
			t.Errorf("step %d, which A had, shown again on B: %v", step, rr.progress)
		}
	}
	if left := redisKeys(t, srv); len(left) != 0 {
		t.Fatalf("keys left in Redis: %v", left)
	}
	t.Logf("server-everything across two machines via Redis: first missed progress shown %s after the rejoin started", rr.firstProgress)
}

// d in the inspector, then `mcpscope rejoin` in another process finishes
// the call: the inspector's row leaves "detached" and ends as it ended
// there (ok).
func TestE2EDetachedInTheInspectorFinishedElsewhere(t *testing.T) {
	tm, state := inspectorStreamingSlow(t, t.TempDir(), "2", "8")
	tm.keys("d")
	tm.waitRe(`slow\s+detached`)
	l, err := callStore(state).List()
	if err != nil || len(l) != 1 {
		t.Fatalf("records after d: %+v %v", l, err)
	}
	out, err := mcpscope(t, state, "rejoin", l[0].Handle, "--no-journal").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "finished 8 steps") {
		t.Fatalf("rejoin: %v\n%s", err, out)
	}
	tm.waitRe(`slow\s+ok`)
	tm.keys("q")
	tm.waitFor("EXITED 0")
}
