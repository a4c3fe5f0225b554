package connect_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/connect"
	"mcpscope/session"
	"mcpscope/testkit/clienttest"
	"mcpscope/testkit/peers"
	"mcpscope/transport"
)

// A person who takes longer to log in than the handshake's timeout still
// gets a session: the first request's 401 starts the login (no speculative
// GET goes first), the wait is shown (auth-wait, auth-done) and the clocks
// stand still meanwhile. Against the TS SDK's own OAuth example, with a
// "browser" that dawdles a second longer than the timeout.
//
// The handshake's own steps (discovery, registration, the token,
// initialize) must fit in the timeout, and how long they take is the
// machine's business: a loaded one outran a 1 s timeout. So a try that
// times out is made again with twice the timeout (2 s up to 32 s). A clock
// that does not stop fails every try, since the person alone outlasts it.
func TestPersonLoginStopsTheClock(t *testing.T) {
	url := peers.StartTSv1OAuth(t)
	browser := peers.Node(t) + " " + peers.Script(t, "fake-browser.mjs")
	for timeout := 2 * time.Second; ; timeout *= 2 {
		slow := filepath.Join(t.TempDir(), "slow-browser")
		script := fmt.Sprintf("#!/bin/sh\nsleep %d\nexec %s \"$@\"\n", int((timeout+time.Second)/time.Second), browser)
		if err := os.WriteFile(slow, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("BROWSER", slow)
		t.Setenv("XDG_STATE_HOME", t.TempDir()) // no login kept from the try before
		s, err := clienttest.TryConnect(connect.Spec{URL: url, NoJournal: true, Timeout: timeout,
			Auth: connect.Auth{Interactive: true}})
		if err != nil && timeout < 32*time.Second && (errors.Is(err, session.ErrTimeout) || errors.Is(err, context.DeadlineExceeded)) {
			t.Logf("with a %v timeout: %v; again with twice the timeout", timeout, err)
			continue
		}
		if err != nil {
			t.Fatalf("connect with a %v timeout and a person taking %v longer: %v", timeout, time.Second, err)
		}
		t.Cleanup(func() { s.Close() })
		if in := s.Info(); in.ServerInfo.Name == "" {
			t.Fatalf("no session after the login: %+v", in)
		}
		var waited, done bool
		for _, it := range s.Store().Since(0, 0) {
			m := it.Frame.Meta
			if m.HTTPMethod == "GET" && it.Frame.Dir == transport.Out {
				t.Errorf("a GET went out before the handshake: %+v", m)
			}
			waited = waited || (m.Event == transport.EvAuthWait && strings.Contains(m.Detail, "URL to open"))
			done = done || m.Event == transport.EvAuthDone
		}
		if !waited || !done {
			t.Fatalf("the wait for the person was not shown (auth-wait %v, auth-done %v)", waited, done)
		}
		// The session's call timeout is the short one too: this call is not
		// what is under test, so it gets the usual minute.
		res := clienttest.Call(t, s.CallWith("tools/list", nil, session.CallOptions{Timeout: time.Minute}))
		if !strings.Contains(string(res), "greet") {
			t.Fatalf("tools/list after the login: %s", res)
		}
		return
	}
}
