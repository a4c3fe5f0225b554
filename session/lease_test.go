package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/testkit/peers"
	"mcpscope/testkit/testservers"
	"mcpscope/transport"
)

// storeSession is an initialized HTTP session on url that keeps its calls
// in store, as connect makes them.
func storeSession(t *testing.T, url string, store statestore.Store) *session.Session {
	t.Helper()
	s := session.New(transport.NewHTTP(transport.HTTPOptions{URL: url}), session.Options{Timeout: -1, MaxTimeout: -1,
		StateStore: store, Rejoin: session.RejoinInfo{Target: url}})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// detachedCall starts the slow tool (seconds, steps) in a session of its
// own on url (or in z), detaches it after its first step and returns its
// record and the session.
func detachedCall(t *testing.T, url string, store statestore.Store, seconds, steps int) statestore.Detached {
	t.Helper()
	d, _ := detachIn(t, storeSession(t, url, store), store, seconds, steps)
	return d
}

func detachIn(t *testing.T, z *session.Session, store statestore.Store, seconds, steps int) (statestore.Detached, *session.Session) {
	t.Helper()
	x := z.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": seconds, "steps": steps}})
	waitUntil(t, z, "progress", func() bool { return x.Snapshot().Progress.Updates >= 1 })
	h, err := z.Detach(x)
	if err != nil {
		t.Fatal(err)
	}
	d, err := store.Get(h)
	if err != nil {
		t.Fatal(err)
	}
	return d, z
}

// rejoiner is a session as mcpscope rejoin makes it for d: the record's
// target, no MCP session of its own.
func rejoiner(t *testing.T, store statestore.Store, d statestore.Detached) *session.Session {
	t.Helper()
	b := session.New(transport.NewHTTP(transport.HTTPOptions{URL: d.Target}), session.Options{StateStore: store,
		Rejoin: session.RejoinInfo{Target: d.Target}})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// rejoinAndWait rejoins d in s and waits for the call's result.
func rejoinAndWait(ctx context.Context, t *testing.T, s *session.Session, d statestore.Detached) {
	t.Helper()
	c, err := s.Rejoin(ctx, d)
	if err != nil {
		t.Fatalf("rejoin %s: %v", d.Handle, err)
	}
	if _, err := c.Wait(ctx); err != nil {
		t.Fatalf("rejoin %s: %v", d.Handle, err)
	}
}

func sentDelete(s *session.Session) bool {
	for _, it := range s.Store().Since(0, 0) {
		if it.Frame.Meta.HTTPMethod == "DELETE" {
			return true
		}
	}
	return false
}

// An inspector (A) that itself rejoined another session's call, then
// detached one of its own, is still open when another process (B) rejoins
// that call: B must not end A's session when it is done. (A's lease on its
// session says it uses it; records kept the PID of nobody, and B deleted it.)
func TestRejoinNeverEndsASessionLeasedElsewhere(t *testing.T) {
	srv := testservers.StartHTTPServer(t, testservers.HTTPOpts{EventStore: true})
	store := &statestore.FileStore{Dir: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	dx := detachedCall(t, srv.URL, store, 2, 10)

	a := storeSession(t, srv.URL, store)
	sid := a.Info().SessionID
	if _, err := a.Rejoin(ctx, dx); err != nil { // D → r in the TUI
		t.Fatal(err)
	}
	y := a.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 1, "steps": 5}})
	waitUntil(t, a, "progress on y", func() bool { return y.Snapshot().Progress.Updates >= 1 })
	hy, err := a.Detach(y)
	if err != nil {
		t.Fatal(err)
	}
	dy, _ := store.Get(hy)

	b := rejoiner(t, store, dy)
	rejoinAndWait(ctx, t, b, dy)
	b.Close()
	if sentDelete(b) {
		t.Fatal("B ended A's MCP session, which A still uses")
	}
	if _, err := a.Call("tools/list", nil).Wait(ctx); err != nil || a.Info().SessionID != sid {
		t.Fatalf("A's session after B: %v (id %q, was %q)", err, a.Info().SessionID, sid)
	}
}

// A second rejoin of a call another holds is refused with who and until
// when; CanRejoin, the rule the TUI asks, says the same.
func TestRejoinRefusedWhileHeld(t *testing.T) {
	srv := testservers.StartHTTPServer(t, testservers.HTTPOpts{EventStore: true})
	store := &statestore.FileStore{Dir: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d := detachedCall(t, srv.URL, store, 2, 10)
	h := d.Handle
	a := storeSession(t, srv.URL, store)
	// Another rejoiner, on another machine, holds it.
	t.Setenv(statestore.EnvHost, "elsewhere")
	claim, err := statestore.Hold(store, statestore.CallLease(h), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(statestore.EnvHost, "")
	if ok, why := a.CanRejoin(store, d); ok || !strings.Contains(why, "held by the mcpscope with pid") || !strings.Contains(why, "elsewhere") {
		t.Fatalf("CanRejoin while held: %v %q", ok, why)
	}
	claim.Release()
	if ok, why := a.CanRejoin(store, d); !ok {
		t.Fatalf("CanRejoin once free: %q", why)
	}
	c, err := a.Rejoin(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Rejoin(ctx, d)
	var he *statestore.HeldError
	if !errors.As(err, &he) || he.Holder.Owner != statestore.Me() {
		t.Fatalf("second rejoin: %v", err)
	}
	if _, err := c.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

// After a 404 a rejoined session re-initializes too; the call that hit it
// is lost with the reason, and a read-only request is sent once more in
// the new session.
func TestExpiryAfterRejoinReinitializesAndResendsReads(t *testing.T) {
	srv := testservers.StartHTTPServer(t, testservers.HTTPOpts{EventStore: true})
	store := &statestore.FileStore{Dir: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d := detachedCall(t, srv.URL, store, 1, 5)
	b := rejoiner(t, store, d)
	rejoinAndWait(ctx, t, b, d)
	srv.ExpireSessions()
	l := b.Call("tools/list", nil)
	res, err := l.WaitFinal(ctx)
	if err != nil || !strings.Contains(string(res), "slow") {
		t.Fatalf("tools/list after the session expired: %v %.200s", err, res)
	}
	if sn := l.Snapshot(); sn.Next == "" || !strings.Contains(sn.Err().Error(), "sent again") {
		t.Fatalf("the lost tools/list does not say it was sent again: %+v", sn.Err())
	}
	if b.Info().SessionID == d.SessionID || b.Info().SessionID == "" {
		t.Fatalf("no new session after the 404: %q", b.Info().SessionID)
	}
}

// What a rejoin does to the MCP session when it is done: it ends it (HTTP
// DELETE) only when nothing else references it, whichever process made
// it: no other process's lease on it, no record in the store of a call or
// task in it. The last user cleans up; anyone else leaves it alone.
func TestLastRejoinEndsTheSessionOnlyWhenNothingElseUsesIt(t *testing.T) {
	srv := testservers.StartHTTPServer(t, testservers.HTTPOpts{EventStore: true})
	store := &statestore.FileStore{Dir: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	z := storeSession(t, srv.URL, store)
	dx, _ := detachIn(t, z, store, 1, 5)
	dy, _ := detachIn(t, z, store, 1, 5)
	z.Close() // it quits: its calls go on, so it keeps the session
	if sentDelete(z) {
		t.Fatal("the session's maker ended it with calls detached in it")
	}
	rejoinAndClose := func(d statestore.Detached) *session.Session {
		b := rejoiner(t, store, d)
		rejoinAndWait(ctx, t, b, d)
		b.Close()
		return b
	}
	if b := rejoinAndClose(dx); sentDelete(b) {
		t.Fatal("a rejoin ended the session while another call detached in it waits to be rejoined")
	}
	if b := rejoinAndClose(dy); !sentDelete(b) {
		t.Fatal("the last rejoin left a session nothing references on the server")
	}
	if l, _ := store.List(); len(l) != 0 {
		t.Fatalf("records left: %+v", l)
	}
}

// gateStore holds every write of a task's record until the test opens it.
type gateStore struct {
	statestore.Store
	entered chan string
	gate    chan struct{}
}

func (g *gateStore) Put(d statestore.Detached) error {
	if strings.HasPrefix(d.Handle, "task-") {
		select {
		case g.entered <- d.Handle:
		default:
		}
		<-g.gate
	}
	return g.Store.Put(d)
}

// A task's record is written off the session lock: a store that takes its
// time (Redis far away) never stops the session (server-everything, whose
// research tool runs as a 2025-11-25 task).
func TestTaskRecordWrittenOffTheSessionLock(t *testing.T) {
	url := peers.StartEverythingHTTP(t, "streamableHttp")
	g := &gateStore{Store: &statestore.FileStore{Dir: t.TempDir()}, entered: make(chan string, 1), gate: make(chan struct{})}
	opened := false
	open := func() {
		if !opened {
			opened = true
			close(g.gate)
		}
	}
	defer open()
	s := storeSession(t, url, g)
	c := s.CallAsTask("tools/call", map[string]any{"name": "simulate-research-query", "arguments": map[string]any{"topic": "tides"}}, time.Minute)
	var h string
	select {
	case h = <-g.entered:
	case <-time.After(60 * time.Second): // a hang guard
		t.Fatal("no task record was written within 60s")
	}
	answered := make(chan struct{})
	go func() {
		s.Info()
		c.Snapshot()
		close(answered)
	}()
	select {
	case <-answered:
	case <-time.After(30 * time.Second): // a hang guard: it answers at once
		open()
		t.Fatal("the session stood still while the store wrote a task's record: the write holds the session lock")
	}
	open()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dt, _, err := s.DetachWhenRejoinable(ctx, c)
	if err != nil || dt.Handle != h {
		t.Fatalf("detach of the task: %+v %v", dt, err)
	}
}

// A call detached in one session (the inspector) and finished by a rejoin
// elsewhere does not stay "detached" there: its record leaves the store,
// and the session follows the server's replay of the call's stream from
// where it left it, so the call ends here as it ended there, with its
// result and every step, and no record comes back.
func TestDetachedCallFinishedElsewhereShowsHowItEnded(t *testing.T) {
	srv := testservers.StartHTTPServer(t, testservers.HTTPOpts{EventStore: true})
	store := &statestore.FileStore{Dir: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a := session.New(transport.NewHTTP(transport.HTTPOptions{URL: srv.URL}), session.Options{Timeout: -1, MaxTimeout: -1,
		StateStore: store, Rejoin: session.RejoinInfo{Target: srv.URL}, WatchDetached: 20 * time.Millisecond})
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	d, _ := detachIn(t, a, store, 1, 5)
	x := a.Calls()[len(a.Calls())-1]
	if x.Snapshot().State != session.StateDetached {
		t.Fatalf("the call is %s, want detached", x.Snapshot().State)
	}
	b := rejoiner(t, store, d)
	rejoinAndWait(ctx, t, b, d)
	b.Close()
	waitUntil(t, a, "the detached call to end as it ended elsewhere", func() bool { return x.Snapshot().State == session.StateOK })
	sn := x.Snapshot()
	if !strings.Contains(string(sn.Result), "finished 5 steps") || sn.Progress.Updates != 5 {
		t.Fatalf("ended with %s after %d steps", sn.Result, sn.Progress.Updates)
	}
	a.Close()
	if l, _ := store.List(); len(l) != 0 {
		t.Fatalf("records after: %+v", l)
	}
}
