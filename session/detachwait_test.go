package session

import (
	"context"
	"errors"
	"testing"
	"time"

	"mcpscope/statestore"
	"mcpscope/testkit/testservers"
	"mcpscope/transport"
)

// A call being given up (a timeout or a cancel under way) is ending: the
// server's answer to notifications/cancelled, a JSON body without an SSE
// event id, must not make --detach say the stream carries no event ids.
// The wait ends with the call instead (CI saw exit 3 for a timeout).
func TestDetachWaitsOutAGiveUp(t *testing.T) {
	s, c, ctx := delayedCall(t, &statestore.FileStore{Dir: t.TempDir()}, nil)
	if !s.giveUp(c) {
		t.Fatal("the call ended before it could be given up")
	}
	// The server's answer to notifications/cancelled, as the Go SDK sends
	// it in JSON mode: on the call's own POST, without an event id. (Made
	// here, not asked for: a cancel that reaches the server before the call
	// does is ignored, and the answer would never come.)
	s.Ingest(transport.Frame{Time: time.Now(), Dir: transport.In, Kind: transport.Message,
		Meta: transport.Meta{Stream: "post:" + c.Key},
		Data: []byte(`{"jsonrpc":"2.0","id":` + string(c.ID) + `,"error":{"code":0,"message":"context canceled"}}`)})
	s.mu.Lock()
	st := s.streams["post:"+c.Key]
	bare := st != nil && st.bare
	s.mu.Unlock()
	if !bare {
		t.Fatal("the answer did not mark the call's stream as one without event ids")
	}
	// Asked while the give-up is under way, it waits (here on a context
	// already done, so that nothing races): it must not decide.
	done, stop := context.WithCancel(ctx)
	stop()
	if _, _, err := s.DetachWhenRejoinable(done, c); !errors.Is(err, context.Canceled) {
		t.Fatalf("detach during a give-up: %v (want it to wait for the call's end)", err)
	}
	s.tellServer(c, "test") // as Cancel does: the server's handler ends now
	s.endGivenUp(c, StateCancelled, &Failure{Reason: "cancelled: test", Kind: ErrCancelled})
	if _, ended, err := s.DetachWhenRejoinable(ctx, c); err != nil || !ended {
		t.Fatalf("detach after the give-up: ended %v, err %v (want the call's end)", ended, err)
	}
}

// delayedCall starts a session on a Go SDK server that answers in JSON,
// keeping rejoinable calls in store and telling warn (nil: nobody), and
// leaves a call to its delay tool running (ten minutes: the test ends
// first). ctx is a hang guard for the test's waits.
func delayedCall(t *testing.T, store statestore.Store, warn func(string)) (*Session, *Call, context.Context) {
	t.Helper()
	url := testservers.StartHTTP(t, testservers.HTTPOpts{JSONResponse: true})
	s := New(transport.NewHTTP(transport.HTTPOptions{URL: url}), Options{Timeout: -1, MaxTimeout: -1,
		StateStore: store, Rejoin: RejoinInfo{Target: url}, Warn: warn})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	if _, err := s.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	return s, s.Call("tools/call", map[string]any{"name": "delay", "arguments": map[string]any{"ms": 600000}}), ctx
}
