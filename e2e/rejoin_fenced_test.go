package e2e

// The fault suite of the rejoin leases (issue 36): real redis-server, real
// servers (the reference server-everything from the pinned peers, and the
// demo in its default 2026-07-28 era, whose calls detach as tasks), real
// processes on "machines" that share nothing but Redis. Each scenario
// asserts: no step shown by two processes, no step lost while a record
// exists, exactly one process shows the result, every loss reported, and
// nothing left in Redis. Each logs a "figures:" line (runs, ok, steps
// shown twice, steps lost) for the notes.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"mcpscope/connect"
	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/statestore/redisstore"
	"mcpscope/testkit/clienttest"
	"mcpscope/testkit/faultproxy"
	"mcpscope/testkit/peers"
	"mcpscope/testkit/redistest"
	"mcpscope/testkit/testservers"
	"mcpscope/testkit/waitfor"
)

// faultTTL is the lease of every holder in the suite: short, so that a
// pause or a cut outlives it quickly.
const faultTTL = 1500 * time.Millisecond

// proc is a mcpscope command running in the background; its stderr is
// read as it comes, its progress steps counted.
type proc struct {
	t      *testing.T
	name   string
	cmd    *exec.Cmd
	stdout bytes.Buffer

	mu      sync.Mutex
	stderr  strings.Builder
	steps   []int
	changed chan struct{} // closed and replaced at every line and at exit
	exited  bool
	code    int
}

func startProc(t *testing.T, name string, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{t: t, name: name, cmd: cmd, changed: make(chan struct{})}
	cmd.Stdout = &p.stdout
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			l := sc.Text()
			p.mu.Lock()
			p.stderr.WriteString(l + "\n")
			var v, total int
			if _, err := fmt.Sscanf(l, "progress %d/%d", &v, &total); err == nil {
				p.steps = append(p.steps, v)
			}
			p.signalLocked()
			p.mu.Unlock()
		}
		err := cmd.Wait()
		p.mu.Lock()
		p.exited, p.code = true, cmd.ProcessState.ExitCode()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			p.code = -1
		}
		p.signalLocked()
		p.mu.Unlock()
	}()
	t.Cleanup(func() {
		if !p.done() {
			_ = cmd.Process.Signal(sigCont)
			_ = cmd.Process.Kill()
			p.until(func() bool { return p.exited }, "its end after a kill")
		}
	})
	return p
}

func (p *proc) signalLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// until waits, on its output and not on time, for cond (read under the
// lock); a hang guard fails the test.
func (p *proc) until(cond func() bool, what string) {
	p.t.Helper()
	guard := time.NewTimer(hangGuard)
	defer guard.Stop()
	for {
		p.mu.Lock()
		ok, ch := cond(), p.changed
		p.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-guard.C:
			p.t.Fatalf("%s: no %s within %v\nstderr:\n%s", p.name, what, hangGuard, p.errText())
		}
	}
}

// firstStep waits for the process's first progress step (or its end).
func (p *proc) firstStep() {
	p.t.Helper()
	p.until(func() bool { return len(p.steps) > 0 || p.exited }, "progress step")
}

// firstLine waits for a stderr line containing s (or the end).
func (p *proc) firstLine(s string) {
	p.t.Helper()
	p.until(func() bool { return strings.Contains(p.stderr.String(), s) || p.exited }, fmt.Sprintf("line %q", s))
}

func (p *proc) wait() (code int, stdout, stderr string, steps []int) {
	p.t.Helper()
	p.until(func() bool { return p.exited }, "exit")
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.code, p.stdout.String(), p.stderr.String(), append([]int(nil), p.steps...)
}

func (p *proc) done() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited
}

func (p *proc) errText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// faultTally adds up a scenario's runs for its figures line.
type faultTally struct {
	runs, ok, twice, lost int
}

func (f *faultTally) log(t *testing.T, scenario string) {
	t.Logf("figures: %s: %d runs, %d ok, %d steps shown twice, %d steps lost", scenario, f.runs, f.ok, f.twice, f.lost)
}

// steps counts, across the runs, the steps of from..to shown twice and
// those not shown at all.
func stepCounts(from, to int, runs ...[]int) (twice, lost int) {
	seen := map[int]int{}
	for _, r := range runs {
		for _, v := range r {
			seen[v]++
		}
	}
	for s := from; s <= to; s++ {
		switch {
		case seen[s] > 1:
			twice += seen[s] - 1
		case seen[s] == 0:
			lost++
		}
	}
	return twice, lost
}

// leaseGone waits until nobody holds the call's lease in the store (a
// paused or cut-off holder's lease ran out).
func leaseGone(t *testing.T, store *redisstore.Store, handle string) {
	t.Helper()
	if !waitfor.Within(hangGuard, func() bool {
		h, err := store.Holders(statestore.CallLease(handle))
		return err == nil && len(h) == 0
	}) {
		t.Fatalf("the lease on %s was still held %v later", handle, hangGuard)
	}
}

// noKeysLeft fails unless Redis is empty (records, marks, leases, fences).
func noKeysLeft(t *testing.T, srv *redistest.Server) bool {
	t.Helper()
	if left := redisKeys(t, srv); len(left) != 0 {
		t.Errorf("keys left in Redis: %v", left)
		return false
	}
	return true
}

// holderLost checks a holder that lost its lease: it said so, exited 5
// and showed no result.
func holderLost(t *testing.T, name string, code int, stdout, stderr, result string) bool {
	t.Helper()
	if code != 5 || !strings.Contains(stderr, "lease on") || strings.Contains(stdout, result) {
		t.Errorf("%s, which lost its lease: exit %d (want 5, saying the lease was lost, no result)\nstdout:\n%s\nstderr:\n%s", name, code, stdout, stderr)
		return false
	}
	return true
}

// A holder stopped (SIGSTOP) past its lease, a second machine takes the
// call over, then the first resumes: it stops acting at once (no step,
// no result, exit 5, says so) and the new holder finishes; each step is
// shown once across the two. Ten times against server-everything (a
// resumable SSE stream) and ten against the demo in its default era (a
// task).
func TestPausedHolderStopsActing(t *testing.T) {
	peers.POSIX(t, "SIGSTOP and SIGCONT to pause a holder")
	srv, state, store := sharedRedis(t)
	everything := peers.StartEverythingHTTP(t, "streamableHttp")
	demoURL := testservers.StartDemoHTTP(t)
	for _, sc := range []struct {
		name, result string
		call         []string
		steps        int // progress steps to count (0: a task, whose steps a rejoin does not show)
	}{
		{"server-everything", "Long running operation completed", []string{"call", "trigger-long-running-operation", "duration=8", "steps=32", everything}, 32},
		{"demo", "finished 12 steps", []string{"call", "slow", "seconds=6", "steps=12", "task=always", demoURL}, 0},
	} {
		t.Run(sc.name, func(t *testing.T) { pausedHolderRuns(t, srv, state, store, sc.name, sc.result, sc.call, sc.steps) })
	}
}

// pausedHolderRuns is TestPausedHolderStopsActing against one server.
func pausedHolderRuns(t *testing.T, srv *redistest.Server, state string, store *redisstore.Store, name, result string, call []string, steps int) {
	ttl := faultTTL.String()
	var tally faultTally
	for run := range 10 {
		tally.runs++
		a, b, c := newBox(t, "machine-a"), newBox(t, "machine-b"), newBox(t, "machine-c")
		d, _ := detachWith(t, a.cmd(append(call, "--state", state, "--no-journal")...))
		rec, err := store.Get(d.Handle)
		if err != nil {
			t.Fatalf("%s run %d: the record of %s: %v", name, run, d.Handle, err)
		}
		before := rec.Progress.Updates
		rejoin := []string{"rejoin", d.Handle, "--state", state, "--lease-ttl", ttl, "--no-journal"}
		pb := startProc(t, "B", b.cmd(rejoin...))
		if steps > 0 {
			pb.firstStep()
		} else {
			pb.firstLine("rejoining task")
		}
		pb.cmd.Process.Signal(sigStop)
		leaseGone(t, store, d.Handle)
		pc := startProc(t, "C", c.cmd(rejoin...))
		if steps > 0 {
			pc.firstStep()
		} else {
			pc.firstLine("rejoining task")
		}
		pb.cmd.Process.Signal(sigCont)
		bCode, bOut, bErr, bSteps := pb.wait()
		cCode, cOut, cErr, cSteps := pc.wait()
		ok := holderLost(t, name+" B", bCode, bOut, bErr, result)
		if cCode != 0 || !strings.Contains(cOut, result) {
			t.Errorf("%s run %d: C, the new holder: exit %d, want 0 and the result\nstdout:\n%s\nstderr:\n%s", name, run, cCode, cOut, cErr)
			ok = false
		}
		if steps > 0 {
			twice, lost := stepCounts(before+1, steps, bSteps, cSteps)
			tally.twice += twice
			tally.lost += lost
			if twice+lost > 0 {
				t.Errorf("%s run %d: steps %d..%d: %d shown twice, %d lost (A had %d; B %v, C %v)", name, run, before+1, steps, twice, lost, before, bSteps, cSteps)
				ok = false
			}
		}
		if ok && noKeysLeft(t, srv) {
			tally.ok++
		}
		if t.Failed() {
			break
		}
	}
	tally.log(t, "holder paused past its lease, "+name)
}

// The holder's link to Redis cut (the other machines still reach it) for
// half, one and a half and six times the lease, while a competitor tries
// to take the call: under the lease the competitor is refused and the
// holder goes on once the link heals; past it the holder stops on its
// own (no step, no result, exit 5, says so) and the competitor finishes.
// Each step shown once either way.
func TestRedisCutOffHolder(t *testing.T) {
	srv, state, store := sharedRedis(t)
	link := faultproxy.StartTCP(t, srv.Addr)
	viaLink := "redis://" + link.Addr() + "/0"
	url := peers.StartEverythingHTTP(t, "streamableHttp")
	const result, steps = "Long running operation completed", 40
	ttl := faultTTL.String()
	for _, cut := range []float64{0.5, 1.5, 6} {
		var tally faultTally
		tally.runs++
		a, b, c := newBox(t, "machine-a"), newBox(t, "machine-b"), newBox(t, "machine-c")
		d, _ := detachWith(t, a.cmd("call", "trigger-long-running-operation", "duration=12", fmt.Sprintf("steps=%d", steps), "--state", state, "--no-journal", url))
		rec, err := store.Get(d.Handle)
		if err != nil {
			t.Fatal(err)
		}
		before := rec.Progress.Updates
		pb := startProc(t, "B", b.cmd("rejoin", d.Handle, "--state", viaLink, "--lease-ttl", ttl, "--no-journal"))
		pb.firstStep()
		link.Cut()
		cutAt := time.Now()
		outlives := cut > 1
		var pc *proc
		if outlives {
			leaseGone(t, store, d.Handle) // the cut outlives the lease
			pc = startProc(t, "C", c.cmd("rejoin", d.Handle, "--state", state, "--lease-ttl", ttl, "--no-journal"))
			pc.firstStep()
		} else {
			// Within the lease: the competitor is told who holds the call.
			r := c.run("rejoin", d.Handle, "--state", state, "--lease-ttl", ttl, "--no-journal")
			if r.code == 0 || !strings.Contains(r.stderr, "machine-b") {
				t.Errorf("cut %.1f×: a competitor during a cut shorter than the lease: exit %d\n%s", cut, r.code, r.stderr)
			}
		}
		// Keep the link cut for its whole span (the holder's steps pile up
		// on the server meanwhile), then heal it.
		if wait := time.Until(cutAt.Add(time.Duration(cut * float64(faultTTL)))); wait > 0 {
			time.Sleep(wait) // the fault's length, not a synchronisation
		}
		link.Heal()
		bCode, bOut, bErr, bSteps := pb.wait()
		ok := true
		var (
			cSteps  []int
			cStderr string
		)
		if outlives {
			ok = holderLost(t, fmt.Sprintf("cut %.1f× B", cut), bCode, bOut, bErr, result)
			cCode, cOut, cErr, s := pc.wait()
			cSteps, cStderr = s, cErr
			if cCode != 0 || !strings.Contains(cOut, result) {
				t.Errorf("cut %.1f×: C: exit %d, want 0 and the result\n%s\n%s", cut, cCode, cOut, cErr)
				ok = false
			}
		} else if bCode != 0 || !strings.Contains(bOut, result) {
			t.Errorf("cut %.1f×: B, cut off for less than its lease: exit %d, want 0 and the result\n%s\n%s", cut, bCode, bOut, bErr)
			ok = false
		}
		twice, lost := stepCounts(before+1, steps, bSteps, cSteps)
		tally.twice, tally.lost = twice, lost
		if outlives && lost == 1 && twice == 0 {
			// The README's limit. B rejoins into a burst of replayed steps
			// and the cut lands while it marks them: the mark of the step
			// after B's last went in, its answer was held by the cut, and
			// B lost the lease before it could know. C resumes after that
			// mark. Neither shows the step as a row, but it is not lost
			// silently: B names it as in doubt and C counts it in its
			// "progress so far".
			if n, ok := boundaryStep(before, bSteps, cSteps); ok &&
				strings.Contains(bErr, fmt.Sprintf("rejoin: progress %d/%d was not shown here", n, steps)) &&
				strings.Contains(cStderr, fmt.Sprintf("progress so far %d/%d)", n, steps)) {
				t.Logf("cut %.1f×: step %d, marked as the link was cut, was named in doubt by B and counted by C", cut, n)
				lost = 0
			}
		}
		if twice+lost > 0 {
			t.Errorf("cut %.1f×: steps %d..%d: %d shown twice, %d lost (B %v, C %v)", cut, before+1, steps, twice, lost, bSteps, cSteps)
			ok = false
		}
		if ok && noKeysLeft(t, srv) {
			tally.ok++
		}
		tally.log(t, fmt.Sprintf("holder's Redis link cut for %.1f× the lease, with a competitor", cut))
	}
	if link.Cuts() != 3 {
		t.Fatalf("%d cuts made, want 3", link.Cuts())
	}
}

// Redis restarted under a running holder. Without persistence the lease,
// fence and record are gone: the holder stops acting and says that Redis
// restarted and kept nothing. With its append-only file the holder goes
// on and finishes, each step once.
func TestRedisRestartUnderAHolder(t *testing.T) {
	url := peers.StartEverythingHTTP(t, "streamableHttp")
	const result, steps = "Long running operation completed", 24
	for _, keeps := range []bool{true, false} {
		srv, state, store := sharedRedis(t)
		var tally faultTally
		tally.runs++
		a, b := newBox(t, "machine-a"), newBox(t, "machine-b")
		d, _ := detachWith(t, a.cmd("call", "trigger-long-running-operation", "duration=8", fmt.Sprintf("steps=%d", steps), "--state", state, "--no-journal", url))
		rec, err := store.Get(d.Handle)
		if err != nil {
			t.Fatal(err)
		}
		before := rec.Progress.Updates
		// A lease long enough to outlive the restart itself.
		pb := startProc(t, "B", b.cmd("rejoin", d.Handle, "--state", state, "--lease-ttl", "20s", "--no-journal"))
		pb.firstStep()
		if keeps {
			srv.Restart(t)
		} else {
			srv.RestartEmpty(t)
		}
		code, out, errText, bSteps := pb.wait()
		ok := true
		if keeps {
			twice, lost := stepCounts(before+1, steps, bSteps)
			tally.twice, tally.lost = twice, lost
			if code != 0 || !strings.Contains(out, result) || twice+lost > 0 {
				t.Errorf("restart with persistence: exit %d, %d steps twice, %d lost (%v)\n%s\n%s", code, twice, lost, bSteps, out, errText)
				ok = false
			}
		} else {
			twice, _ := stepCounts(before+1, steps, bSteps)
			tally.twice = twice
			if code != 5 || !strings.Contains(errText, "restarted") || strings.Contains(out, result) || twice > 0 {
				t.Errorf("restart without persistence: exit %d (want 5, the restart named, no result)\n%s\n%s", code, out, errText)
				ok = false
			}
		}
		if ok && noKeysLeft(t, srv) {
			tally.ok++
		}
		tally.log(t, map[bool]string{true: "Redis restarted with its append-only file", false: "Redis restarted keeping nothing"}[keeps])
	}
}

// maxmemory-policy allkeys-lru: the holder warns when it connects, and
// when Redis evicts the running call's keys, the holder stops acting and
// names the eviction.
func TestRedisEvictsARunningCall(t *testing.T) {
	srv, state, store := sharedRedis(t)
	url := peers.StartEverythingHTTP(t, "streamableHttp")
	srv.Do(t, "CONFIG SET maxmemory-policy allkeys-lru")
	srv.Do(t, "CONFIG SET maxmemory 100mb") // a policy without a limit evicts nothing
	a, b := newBox(t, "machine-a"), newBox(t, "machine-b")
	d, r := detachWith(t, a.cmd("call", "trigger-long-running-operation", "duration=10", "steps=30", "--state", state, "--no-journal", url))
	if !strings.Contains(r.stderr, "maxmemory-policy") {
		t.Errorf("no warning about the eviction policy on detach:\n%s", r.stderr)
	}
	pb := startProc(t, "B", b.cmd("rejoin", d.Handle, "--state", state, "--lease-ttl", "20s", "--no-journal"))
	pb.firstStep()
	// Fill Redis past a small maxmemory until the call's record is gone.
	srv.Do(t, "CONFIG SET maxmemory 2mb")
	junk := strings.Repeat("x", 4096)
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rc.Close()
	for i := 0; ; i++ {
		if _, err := store.Get(d.Handle); errors.Is(err, statestore.ErrNoSuchCall) {
			break
		}
		if i > 100000 {
			t.Fatal("100000 keys written and the record is still in Redis")
		}
		if err := rc.Set(ctx, fmt.Sprintf("junk:%d", i), junk, 0).Err(); err != nil {
			t.Fatalf("junk %d: %v", i, err)
		}
	}
	srv.Do(t, "CONFIG SET maxmemory 0")
	code, out, errText, _ := pb.wait()
	if code != 5 || !strings.Contains(errText, "evicted") || strings.Contains(out, "Long running operation completed") {
		t.Errorf("after the eviction: exit %d (want 5, the eviction named, no result)\nstdout:\n%s\nstderr:\n%s", code, out, errText)
	}
	t.Logf("figures: Redis evicting a running call: 1 runs, %d ok", map[bool]int{false: 1, true: 0}[t.Failed()])
}

// 100 calls detached by three sessions, then raced by three rejoiners on
// three machines, each trying every call in its own order: every call has
// exactly one winner, who shows each of its missed steps once and the
// result; a loser is told the call is held or already finished; nothing is
// left in Redis.
func TestHundredCallsThreeRejoiners(t *testing.T) {
	srv, state, store := sharedRedis(t)
	url := testservers.StartHTTP(t, testservers.HTTPOpts{EventStore: true})
	const calls, steps = 100, 6
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	var handles []string
	var sessions []*session.Session
	before := map[string]int{}
	for m := range 3 {
		s := clienttest.Connect(t, connect.Spec{URL: url, NoJournal: true, Era: "legacy", StateStore: store})
		sessions = append(sessions, s)
		var cs []*session.Call
		for i := m; i < calls; i += 3 {
			cs = append(cs, s.Call("tools/call", map[string]any{"name": "slow",
				"arguments": map[string]any{"seconds": 4, "steps": steps}}))
		}
		clienttest.WaitFor(t, s, func() bool {
			for _, c := range cs {
				if c.Snapshot().Progress.Updates < 1 {
					return false
				}
			}
			return true
		})
		for _, c := range cs {
			h, err := s.Detach(c)
			if err != nil {
				t.Fatal(err)
			}
			handles = append(handles, h)
		}
	}
	for _, h := range handles {
		d, err := store.Get(h)
		if err != nil {
			t.Fatalf("record %s: %v", h, err)
		}
		before[h] = d.Progress.Updates
	}
	type outcome struct {
		racer int
		r     rejoinRun
	}
	results := make([]chan outcome, calls)
	for i := range results {
		results[i] = make(chan outcome, 3)
	}
	var wg sync.WaitGroup
	for racer := range 3 {
		b := newBox(t, fmt.Sprintf("racer-%d", racer))
		wg.Go(func() {
			for k := range calls {
				i := (k + racer*calls/3) % calls
				r := runRejoinCmd(t, b.cmd("rejoin", handles[i], "--state", state, "--no-journal"))
				results[i] <- outcome{racer, r}
			}
		})
	}
	wg.Wait()
	var tally faultTally
	for i, h := range handles {
		tally.runs++
		winners := 0
		ok := true
		var said []string
		for range 3 {
			o := <-results[i]
			said = append(said, fmt.Sprintf("racer-%d: exit %d: %s", o.racer, o.r.code, strings.TrimSpace(o.r.stderr)))
			switch {
			case o.r.code == 0 && strings.Contains(o.r.stdout, fmt.Sprintf("finished %d steps", steps)):
				winners++
				twice, lost := stepCounts(before[h]+1, steps, o.r.progress)
				early, _ := stepCounts(1, before[h], o.r.progress)
				tally.twice += twice + early
				tally.lost += lost
				if twice+lost+early > 0 {
					t.Errorf("call %s: the winner (racer-%d) showed %v; want %d..%d once each", h, o.racer, o.r.progress, before[h]+1, steps)
					ok = false
				}
			case o.r.code == 5 && strings.Contains(o.r.stderr, "is held by"),
				o.r.code == 1 && strings.Contains(o.r.stderr, "already finished"):
			default:
				t.Errorf("call %s: racer-%d exited %d\n%s\n%s", h, o.racer, o.r.code, o.r.stdout, o.r.stderr)
				ok = false
			}
		}
		if winners != 1 {
			t.Errorf("call %s: %d winners, want 1:\n%s", h, winners, strings.Join(said, "\n"))
			ok = false
		}
		if ok {
			tally.ok++
		}
	}
	for _, s := range sessions {
		s.Close() // they let go of their MCP sessions' shares
	}
	noKeysLeft(t, srv)
	tally.log(t, "100 calls from three sessions raced by three rejoiners")
}

// boundaryStep is the one step neither holder showed when it is the one
// right after the first holder's last (or after what the record had).
func boundaryStep(before int, b, c []int) (int, bool) {
	last := before
	for _, v := range b {
		last = max(last, v)
	}
	return last + 1, len(c) > 0 && c[0] == last+2
}
