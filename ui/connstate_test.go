package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"mcpscope/session"
	"mcpscope/testkit/testservers"
	"mcpscope/themes"
	"mcpscope/transport"
)

// statusLine is the screen's first line: the status bar.
func statusLine(m *Model) string { l, _, _ := strings.Cut(screen(m), "\n"); return l }

// The status bar and the info view follow a real HTTP server that goes
// away and comes back (issue 40): connected; after its listen stream
// dropped, its resume was refused and a send failed, disconnected and
// why; after it restarted and a request re-initialized the session,
// connected again.
func TestConnectionStateFollowsTheServer(t *testing.T) {
	srv := testservers.StartHTTPServer(t, testservers.HTTPOpts{})
	s := session.New(transport.NewHTTP(transport.HTTPOptions{URL: srv.URL}), session.Options{Timeout: 20 * time.Second})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), uiWait)
	defer cancel()
	if _, err := s.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	m := New(Options{Session: s, Theme: themes.ByName("dark"), Target: []string{srv.URL}})
	m.Update(windowSize(120, 30))
	waitStoreFor(t, m, "the listen stream", func() bool {
		return strings.Contains(statusLine(m), "connected") && strings.Contains(screen(m), "stream-opened listen stream")
	})

	addr := srv.Addr()
	srv.Stop()
	// The listen stream ends and is resumed after a backoff: ctrl+r fires
	// the resume at once, and the refusal is what makes it disconnected.
	waitStoreFor(t, m, "reconnecting", func() bool { return strings.Contains(statusLine(m), "reconnecting") })
	press(m, "reconnect")
	waitStoreFor(t, m, "disconnected", func() bool { return strings.Contains(statusLine(m), "disconnected") })
	ping := s.Call("ping", nil)
	if _, err := ping.Wait(ctx); err == nil {
		t.Fatal("a ping to a stopped server succeeded")
	}
	refresh(m)
	if l := statusLine(m); !strings.Contains(l, "disconnected: POST") || !strings.Contains(l, "connection ref") {
		t.Fatalf("after a failed send the status bar says:\n%s", l)
	}
	press(m, "info")
	if sc := screen(m); !strings.Contains(sc, "connection    disconnected: POST") {
		t.Fatalf("the info view does not say disconnected:\n%s", sc)
	}
	press(m, "info")

	// A server started again at the address knows none of our sessions:
	// the next request gets 404, the session re-initializes, and a ping
	// (it only reads) is sent again in the new session.
	testservers.StartHTTPServerAt(t, addr, testservers.HTTPOpts{})
	s.Call("ping", nil)
	waitStoreFor(t, m, "connected after the re-initialize", func() bool {
		l := statusLine(m)
		return strings.Contains(l, "connected") && !strings.Contains(l, "disconnected") && strings.Contains(screen(m), "re-initialized") && pingedAgain(s)
	})
	press(m, "info")
	if sc := screen(m); !strings.Contains(sc, "connection    connected") {
		t.Fatalf("the info view after the re-initialize:\n%s", sc)
	}
}

// pingedAgain reports whether the newest call is a ping that succeeded.
func pingedAgain(s *session.Session) bool {
	calls := s.Calls()
	last := calls[len(calls)-1].Snapshot()
	return last.Method == "ping" && last.State == session.StateOK
}
