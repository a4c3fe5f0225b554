package connect_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/connect"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/testkit/nodetest"
	"mcpscope/testkit/testservers"
)

// A stdio server that starts slowly (as npx -y … does while it fetches the
// package) is no legacy server that ignored server/discover: the probe's
// wait starts when the server reads the request, so the probe neither times
// out nor answers late, and the era is the one the server names. The
// server here waits on a FIFO before it even starts; the test opens it
// once the probe's own limit has passed several times over.
func TestStdioProbeWaitsForASlowStart(t *testing.T) {
	const probe = 100 * time.Millisecond
	defer connect.SetStdioProbeTimeout(probe)()
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	fifo := filepath.Join(dir, "go")
	nodetest.LoneFIFO(t, fifo) // and sh: a POSIX test
	journal := filepath.Join(dir, "j.jsonl")
	argv := []string{"sh", "-c", `read _ < "$0"; exec "$@"`, fifo, testservers.BuildStdio(t)}
	type result struct {
		s   *session.Session
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := connect.Connect(context.Background(), connect.Spec{Command: argv, Journal: journal, Timeout: 2 * time.Minute})
		done <- result{s, err}
	}()
	// The probe is on its way once the journal holds it (written before
	// it is sent); the server has not started.
	for deadline := time.Now().Add(time.Minute); ; {
		if b, _ := os.ReadFile(journal); strings.Contains(string(b), "server/discover") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no server/discover in the journal within a minute")
		}
		select {
		case r := <-done:
			t.Fatalf("connected before the server started: %v", r.err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	// The slow start: ten times the probe's limit (the limit that used to
	// run from the send).
	select {
	case r := <-done:
		t.Fatalf("the handshake ended while the server was still starting: %v", r.err)
	case <-time.After(10 * probe):
	}
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("start\n")
	f.Close()
	var r result
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute): // a hang guard
		t.Fatal("no handshake within 2 minutes of the start")
	}
	if r.err != nil {
		t.Fatalf("connect: %v", r.err)
	}
	defer r.s.Close()
	in := r.s.Info()
	if in.Era != protocol.EraModern || strings.Contains(in.EraReason, "timed out") {
		t.Errorf("era %s (%s), want modern from the server's answer", in.Era, in.EraReason)
	}
	for _, call := range r.s.Calls() {
		if c := call.Snapshot(); c.Method == "server/discover" {
			if w := session.StateWord(&c); w != "ok" {
				t.Errorf("the probe's row says %q (late %d), want ok", w, c.Late)
			}
		}
	}
	// The note comes from the watch that saw the server read the probe,
	// which may be after the answer.
	for deadline := time.Now().Add(time.Minute); ; {
		notes := ""
		for _, it := range r.s.Store().Since(0, 0) {
			notes += it.Frame.Meta.Detail + "\n"
		}
		if strings.Contains(notes, "it was still starting") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no note that the server was still starting:\n%s", notes)
		}
		select {
		case <-r.s.Store().Changed():
		case <-time.After(50 * time.Millisecond):
		}
	}
}
