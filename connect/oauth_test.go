package connect_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/connect"
	"mcpscope/internal/clienttest"
	"mcpscope/internal/peers"
	"mcpscope/transport"
)

// A person who takes longer to log in than the handshake's timeout still
// gets a session: the first request's 401 starts the login (no speculative
// GET goes first), the wait is shown (auth-wait, auth-done) and the clocks
// stand still meanwhile. Against the TS SDK's own OAuth example, with a
// "browser" that dawdles for twice the timeout.
func TestPersonLoginStopsTheClock(t *testing.T) {
	url := peers.StartTSv1OAuth(t)
	dir := t.TempDir()
	slow := filepath.Join(dir, "slow-browser")
	script := "#!/bin/sh\nsleep 2\nexec " + peers.Node(t) + " " + peers.Script(t, "fake-browser.mjs") + ` "$@"` + "\n"
	if err := os.WriteFile(slow, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", slow)
	s := clienttest.Connect(t, connect.Spec{URL: url, NoJournal: true, Timeout: time.Second,
		Auth: connect.Auth{Interactive: true}})
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
	res := clienttest.Call(t, s.Call("tools/list", nil))
	if !strings.Contains(string(res), "greet") {
		t.Fatalf("tools/list after the login: %s", res)
	}
}
