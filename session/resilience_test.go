package session_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/testkit/faultproxy"
	"mcpscope/testkit/testservers"
	"mcpscope/transport"
)

// httpSession is an initialized session with the Streamable HTTP server at url.
func httpSession(t *testing.T, url string) *session.Session {
	t.Helper()
	s := session.New(transport.NewHTTP(transport.HTTPOptions{URL: url}), session.Options{})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := s.Initialize(ctx); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return s
}

func waitUntil(t *testing.T, s *session.Session, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for !cond() {
		select {
		case <-s.Store().Changed():
		case <-deadline:
			t.Fatalf("%s did not happen within 30s", what)
		}
	}
}

func countOut(s *session.Session, method string) int {
	n := 0
	for _, it := range s.Store().Since(0, 0) {
		if it.Frame.Dir == transport.Out && it.Env != nil && it.Env.Method == method {
			n++
		}
	}
	return n
}

// The server forgets the session: in-flight calls are reported lost, and the
// session re-initializes exactly once however many requests hit the 404.
func TestSessionExpiryReinitializesOnce(t *testing.T) {
	srv := testservers.StartHTTPServer(t, testservers.HTTPOpts{EventStore: true})
	s := httpSession(t, srv.URL)
	old := s.Info().SessionID
	slow := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 20, "steps": 20}})
	waitUntil(t, s, "first progress", func() bool { return slow.Snapshot().Progress.Updates > 0 })

	if ids := srv.ExpireSessions(); len(ids) != 1 || ids[0] != old {
		t.Fatalf("expired %v, want [%s]", ids, old)
	}
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Call("ping", nil).Wait(context.Background())
		}()
	}
	wg.Wait()
	waitUntil(t, s, "re-initialize", func() bool {
		id := s.Info().SessionID
		return id != "" && id != old && countOut(s, "notifications/initialized") == 2
	})
	if _, err := slow.Wait(context.Background()); err == nil || !strings.Contains(err.Error(), "session expired") {
		t.Fatalf("the in-flight call should be reported lost to the expiry, got %v", err)
	}
	// The new session works.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := s.Call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "again"}}).Wait(ctx); err != nil {
		t.Fatalf("call in the new session: %v", err)
	}
	if n := countOut(s, "initialize"); n != 2 {
		t.Fatalf("want exactly one re-initialize (2 initialize requests in all), got %d", n)
	}
	notes := 0
	for _, it := range s.Store().Since(0, 0) {
		if strings.Contains(it.Frame.Meta.Detail, "expired (HTTP") {
			notes++
		}
	}
	if notes != 1 {
		t.Fatalf("want the expiry shown once, got %d", notes)
	}
}

// Every connection is cut mid-call (a network drop): the stream resumes with
// Last-Event-ID and the call completes with each progress step once.
func TestDroppedConnectionResumes(t *testing.T) {
	srv := testservers.StartHTTPServer(t, testservers.HTTPOpts{EventStore: true})
	s := httpSession(t, srv.URL)
	c := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 1.5, "steps": 10}})
	waitUntil(t, s, "progress", func() bool { return c.Snapshot().Progress.Updates >= 2 })
	srv.DropConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Wait(ctx); err != nil {
		t.Fatalf("the call should complete over the resumed stream: %v", err)
	}
	if p := c.Snapshot().Progress; p.Updates != 10 || p.Value != 10 {
		t.Fatalf("want 10 progress steps exactly once, got %d ending at %g", p.Updates, p.Value)
	}
	resumed := false
	for _, it := range s.Store().Since(0, 0) {
		if it.Frame.Meta.Event == transport.EvStreamResumed && it.Frame.Meta.Resumes == "post:"+c.Key {
			resumed = true
		}
	}
	if !resumed {
		t.Fatal("no resumed stream recorded")
	}
}

// The initialize stream breaks after its priming event and the server has
// forgotten the session by the time the client resumes (the Go SDK drops a
// session whose initialize POST ends before initialize was handled): the
// handshake starts a new session instead of failing, as the spec says for
// 404. This is what made TestFaultInjection fail once under load.
func TestHandshakeStartsANewSessionWhenTheServerForgotIt(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "forgetful", Version: "1"}, nil)
	held, release := make(chan struct{}), make(chan struct{})
	var inits atomic.Int32
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "initialize" && inits.Add(1) == 1 {
				close(held)
				<-release // the first handshake never gets its answer
			}
			return next(ctx, method, req)
		}
	})
	srv := testservers.StartHTTPServer(t, testservers.HTTPOpts{Server: server, EventStore: true})
	t.Cleanup(func() { close(release) }) // before the server's shutdown waits for that handler
	s := session.New(transport.NewHTTP(transport.HTTPOptions{URL: srv.URL}), session.Options{})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := s.Initialize(ctx)
		done <- err
	}()
	waitUntil(t, s, "the priming event", func() bool {
		for _, it := range s.Store().Since(0, 0) {
			if it.Frame.Meta.Event == transport.EvPrime {
				return true
			}
		}
		return false
	})
	<-held // the server has the first initialize, so the next one is answered
	gone := srv.ExpireSessions()
	srv.DropConnections()
	if err := <-done; err != nil {
		t.Fatalf("the handshake should start a new session, got: %v", err)
	}
	if len(gone) != 1 || s.Info().SessionID == "" || s.Info().SessionID == gone[0] {
		t.Fatalf("want a new session instead of %v, got %q", gone, s.Info().SessionID)
	}
	if n := countOut(s, "initialize"); n != 2 {
		t.Fatalf("want exactly one new initialize, sent %d in all", n)
	}
	said := false
	for _, it := range s.Store().Since(0, 0) {
		said = said || strings.Contains(it.Frame.Meta.Detail, "gone before the handshake ended")
	}
	if !said {
		t.Fatal("the new session is not explained in the session's events")
	}
	ping, pcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer pcancel()
	if _, err := s.Call("ping", nil).Wait(ping); err != nil {
		t.Fatalf("the new session does not work: %v", err)
	}
}

// Detach leaves the call running on the server (no DELETE at close); a new
// session rejoins it from the state store and gets the rest and the result.
func TestDetachThenRejoin(t *testing.T) {
	srv := testservers.StartHTTPServer(t, testservers.HTTPOpts{EventStore: true})
	store := &statestore.FileStore{Dir: t.TempDir()}
	s1 := session.New(transport.NewHTTP(transport.HTTPOptions{URL: srv.URL}),
		session.Options{StateStore: store, Rejoin: session.RejoinInfo{Target: srv.URL}})
	if err := s1.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s1.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	c := s1.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 1.5, "steps": 10}})
	waitUntil(t, s1, "progress", func() bool { return c.Snapshot().Progress.Updates >= 2 })
	handle, err := s1.Detach(c)
	if err != nil {
		t.Fatal(err)
	}
	if st := c.Snapshot().State; st != session.StateDetached {
		t.Fatalf("state after detach: %s", st)
	}
	s1.Close()
	for _, it := range s1.Store().Since(0, 0) {
		if it.Frame.Meta.HTTPMethod == "DELETE" {
			t.Fatal("Close sent DELETE although a call was detached")
		}
	}

	d, err := store.Get(handle)
	if err != nil {
		t.Fatal(err)
	}
	s2 := session.New(transport.NewHTTP(transport.HTTPOptions{URL: d.Target}), session.Options{StateStore: store})
	if err := s2.Start(); err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	c2, err := s2.Rejoin(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Wait(ctx); err != nil {
		t.Fatalf("rejoined call: %v", err)
	}
	if p := c2.Snapshot().Progress; p.Value != 10 {
		t.Fatalf("rejoined call should see progress to the end, got %+v", p)
	}
	waitUntil(t, s2, "record removed", func() bool { _, err := store.Get(handle); return err != nil })
}

// A call cancelled while its stream waits to resume leaves no resume armed:
// nothing is fetched for a call that is over.
func TestCancelDisarmsTheResume(t *testing.T) {
	srv := testservers.StartHTTPServer(t, testservers.HTTPOpts{EventStore: true})
	url, proxy := faultproxy.Start(t, srv.URL, faultproxy.Faults{})
	s := httpSession(t, url)
	c := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 20, "steps": 20}})
	waitUntil(t, s, "progress", func() bool { return c.Snapshot().Progress.Updates >= 1 })
	// Only the call's stream breaks: the listen stream arms no resume.
	// (Cut by method: a POST of notifications/initialized whose 202 the
	// client has had may still be finishing in the proxy.)
	if n := proxy.CutCall("tools/call"); n != 1 {
		t.Fatalf("cut %d streams of tools/call, want the call's one", n)
	}
	waitUntil(t, s, "a resume armed", func() bool {
		for _, it := range s.Store().Since(0, 0) {
			if it.Frame.Meta.Event == transport.EvResumeAttempt && it.Frame.Meta.Stream == "post:"+c.Key {
				return true
			}
		}
		return false
	})
	if err := s.Cancel(c, ""); err != nil {
		t.Fatal(err)
	}
	if n := s.ReconnectNow(); n != 0 {
		t.Fatalf("%d resume(s) still armed for a cancelled call", n)
	}
}
