package connect_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"mcpscope/connect"
	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/testkit/clienttest"
	"mcpscope/testkit/faultproxy"
	"mcpscope/testkit/peers"
	"mcpscope/transport"
)

// SEP-1699: the server closes the POST stream after a priming event with
// retry: 500; mcpscope waits the retry, GETs with Last-Event-ID, and the call
// completes with every progress step exactly once.
func TestResumeAfterServerClose(t *testing.T) {
	url := peers.StartTSv1Resumable(t)
	s := clienttest.Connect(t, connect.Spec{URL: url, NoJournal: true, Era: "legacy"})
	c := s.Call("tools/call", map[string]any{"name": "drop_stream", "arguments": map[string]any{"steps": 6, "intervalMs": 100}})
	res := clienttest.Call(t, c)
	if !strings.Contains(string(res), "done 6 steps") {
		t.Fatalf("result: %s", res)
	}
	if p := c.Snapshot().Progress; p.Updates != 6 || p.Value != 6 {
		t.Fatalf("want each of 6 progress steps exactly once, got %d updates ending at %g", p.Updates, p.Value)
	}
	var closedAt, resumedAt time.Time
	attempts := 0
	for _, it := range s.Store().Since(0, 0) {
		m := it.Frame.Meta
		switch {
		case m.Event == transport.EvStreamClosed && m.Stream == "post:"+c.Key && closedAt.IsZero():
			closedAt = it.Frame.Time
		case m.Event == transport.EvResumeAttempt:
			attempts++
		case m.Event == transport.EvStreamResumed && m.Resumes == "post:"+c.Key && resumedAt.IsZero():
			resumedAt = it.Frame.Time
		}
	}
	if closedAt.IsZero() || resumedAt.IsZero() || attempts == 0 {
		t.Fatalf("want stream closed, a resume attempt and a resumed stream; got closed=%v attempts=%d resumed=%v", closedAt, attempts, resumedAt)
	}
	if gap := resumedAt.Sub(closedAt); gap < 500*time.Millisecond || gap > 3*time.Second {
		t.Fatalf("resumed %s after the close; want no earlier than the server's retry (500ms) and promptly after", gap)
	}
}

// A rejoin into a session the server no longer knows says so plainly.
func TestRejoinSessionGone(t *testing.T) {
	url := peers.StartTSv1Resumable(t)
	store := &statestore.FileStore{Dir: t.TempDir()}
	d := statestore.Detached{Handle: "gone", Target: url, Transport: "http", SessionID: "no-such-session",
		ProtocolVersion: "2025-11-25", RequestID: json.RawMessage("3"), Method: "tools/call", Name: "slow",
		LastEventIDs: map[string]string{"post:3": "x.1"}, Started: time.Now()}
	if err := store.Put(d); err != nil { // a rejoin takes a record from its store
		t.Fatal(err)
	}
	s := session.New(transport.NewHTTP(transport.HTTPOptions{URL: url}), session.Options{StateStore: store})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.Rejoin(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = c.Wait(ctx)
	if err == nil || !strings.Contains(err.Error(), "no longer knows this session") {
		t.Fatalf("want a plain 'session gone' error, got %v", err)
	}
}

// The network drops the POST stream of a call mid-way (our fault proxy cuts
// it after a few events) in front of the TS SDK v1 server with an event
// store: mcpscope resumes with Last-Event-ID and gets every progress step
// exactly once plus the result.
func TestTSv1NetworkDropMidCall(t *testing.T) {
	upstream := peers.StartTSv1Resumable(t)
	var calls atomic.Int32
	url, proxy := faultproxy.Start(t, upstream, faultproxy.Faults{
		// Cut the first tools/call POST stream after ~600 bytes: past the
		// priming event and a few progress events, well before the result.
		Match:         func(r *http.Request) bool { return r.Method == http.MethodPost && calls.Load() == 1 },
		CutAfterBytes: func(*http.Request, int) int { return 600 },
	})
	s := clienttest.Connect(t, connect.Spec{URL: url, NoJournal: true, Era: "legacy"})
	calls.Store(1)
	c := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 12, "intervalMs": 60}})
	res := clienttest.Call(t, c)
	calls.Store(2)
	if !strings.Contains(string(res), "done 12 steps") {
		t.Fatalf("result: %s", res)
	}
	if p := c.Snapshot().Progress; p.Updates != 12 || p.Value != 12 {
		t.Fatalf("want 12 progress steps exactly once, got %d ending at %g", p.Updates, p.Value)
	}
	if st := proxy.Stats(); st.Cuts != 1 {
		t.Fatalf("want exactly one cut stream, got %+v", st)
	}
	dropped, resumed := false, false
	for _, it := range s.Store().Since(0, 0) {
		m := it.Frame.Meta
		dropped = dropped || (m.Event == transport.EvStreamDropped && m.Stream == "post:"+c.Key)
		resumed = resumed || (m.Event == transport.EvStreamResumed && m.Resumes == "post:"+c.Key)
	}
	if !dropped || !resumed {
		t.Fatalf("want the POST stream dropped and resumed; dropped=%v resumed=%v", dropped, resumed)
	}
}
