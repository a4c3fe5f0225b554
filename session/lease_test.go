package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"mcpscope/internal/testservers"
	"mcpscope/session"
	"mcpscope/transport"
)

// storeSession is an initialized HTTP session on url that keeps its calls
// in store, as connect makes them.
func storeSession(t *testing.T, url string, store session.StateStore) *session.Session {
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
	store := &session.FileStore{Dir: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	z := storeSession(t, srv.URL, store)
	x := z.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 2, "steps": 10}})
	waitUntil(t, z, "progress on x", func() bool { return x.Snapshot().Progress.Updates >= 1 })
	hx, err := z.Detach(x)
	if err != nil {
		t.Fatal(err)
	}
	dx, _ := store.Get(hx)

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

	// B, as mcpscope rejoin makes it: the record's target, no session of its own.
	b := session.New(transport.NewHTTP(transport.HTTPOptions{URL: dy.Target}), session.Options{StateStore: store,
		Rejoin: session.RejoinInfo{Target: dy.Target}})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	cy, err := b.Rejoin(ctx, dy)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cy.Wait(ctx); err != nil {
		t.Fatalf("B's rejoin: %v", err)
	}
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
	store := &session.FileStore{Dir: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	z := storeSession(t, srv.URL, store)
	x := z.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 2, "steps": 10}})
	waitUntil(t, z, "progress", func() bool { return x.Snapshot().Progress.Updates >= 1 })
	h, err := z.Detach(x)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := store.Get(h)
	a := storeSession(t, srv.URL, store)
	// Another rejoiner, on another machine, holds it.
	t.Setenv(session.EnvHost, "elsewhere")
	claim, err := session.Hold(store, session.CallLease(h), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(session.EnvHost, "")
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
	var he *session.HeldError
	if !errors.As(err, &he) || he.Holder.Owner != session.Me() {
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
	store := &session.FileStore{Dir: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	z := storeSession(t, srv.URL, store)
	x := z.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 1, "steps": 5}})
	waitUntil(t, z, "progress", func() bool { return x.Snapshot().Progress.Updates >= 1 })
	h, err := z.Detach(x)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := store.Get(h)
	b := session.New(transport.NewHTTP(transport.HTTPOptions{URL: d.Target}), session.Options{StateStore: store,
		Rejoin: session.RejoinInfo{Target: d.Target}})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c, err := b.Rejoin(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(ctx); err != nil {
		t.Fatal(err)
	}
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
