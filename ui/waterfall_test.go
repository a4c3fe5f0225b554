package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"mcpscope/session"
	"mcpscope/themes"
	"mcpscope/transport"
)

// wfClock is a settable clock: the session stamps calls with it and the
// transport below stamps frames with it, so every time the waterfall
// draws is fixed by the test.
type wfClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *wfClock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *wfClock) set(sec float64) { c.mu.Lock(); c.t = at(sec); c.mu.Unlock() }

// clockedTransport is fakeTransport with frames stamped by a wfClock.
type clockedTransport struct {
	clock *wfClock
	sink  transport.Sink
	done  chan struct{}
	once  sync.Once
}

func (f *clockedTransport) Start(s transport.Sink) error { f.sink = s; return nil }
func (f *clockedTransport) Send(m transport.Outgoing, done func(error)) {
	f.sink(transport.Frame{Time: f.clock.now(), Dir: transport.Out, Kind: transport.Message, Data: m.Data})
	done(nil)
}
func (f *clockedTransport) Close() error          { f.once.Do(func() { close(f.done) }); return nil }
func (f *clockedTransport) Done() <-chan struct{} { return f.done }
func (f *clockedTransport) Describe() string      { return "fake: clocked test server" }

// in delivers a server message at sec, on stream when given.
func (f *clockedTransport) in(sec float64, stream, data string) {
	f.clock.set(sec)
	f.sink(transport.Frame{Time: at(sec), Dir: transport.In, Kind: transport.Message, Data: []byte(data), Meta: transport.Meta{Stream: stream}})
}

func (f *clockedTransport) event(sec float64, m transport.Meta) {
	f.clock.set(sec)
	f.sink(transport.Frame{Time: at(sec), Dir: transport.Local, Kind: transport.Event, Meta: m})
}

// answerAt answers the server's questions (MRTR input requests and server
// requests) when the test says, moving the clock to the time given: the
// person's pace, fixed.
type answerAt struct{ at chan float64 }

func (a answerAt) Respond(ctx context.Context, r session.ServerRequest) (json.RawMessage, *session.RPCError) {
	select {
	case <-ctx.Done():
		return nil, &session.RPCError{Code: -32603, Message: "gone"}
	case sec := <-a.at:
		_ = sec // the test moved the clock before sending
		return json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`), nil
	}
}

func (answerAt) Capabilities() json.RawMessage { return json.RawMessage(`{"elicitation":{}}`) }

// wfFixture is a session with one row of each kind the waterfall draws,
// at fixed times (seconds from t0), frames in time order:
//
//	#1  tools/list                 0.0 → 0.05 ok
//	#2  slow, progress ×4, resumed 0.1 → 2.3 ok (first byte 0.6, resumed 1.4)
//	#3  ask: input_required at 0.7; the person answers at 3.0, round 2 (#7) → 3.4 ok
//	#4  fail                       1.0 → 1.2 isError
//	#5  resources/read             1.3 → 1.35 JSON-RPC error
//	#6  slow                       1.5 → cancelled 2.5
//	#8  slow                       3.2 → pending at 4.0; progress 3.6; the server asks the person at 3.7 (no answer yet)
//	#9  echo (2026-07-28)          3.3 → stream broke 3.35, re-issued as #10 → 3.5 ok
//	#11 slow                       3.75 → idle timeout 3.95
func wfFixture(t *testing.T, w, h int) (*Model, *session.Session, *wfClock) {
	t.Helper()
	clock := &wfClock{t: t0}
	f := &clockedTransport{clock: clock, done: make(chan struct{})}
	ans := answerAt{at: make(chan float64)}
	s := session.New(f, session.Options{Responder: ans, Timeout: -1, MaxTimeout: -1, Now: clock.now})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	// send makes a call at sec and waits until its request is on the wire,
	// so the frames injected after it come after it.
	send := func(sec float64, method string, params any, o session.CallOptions) *session.Call {
		t.Helper()
		clock.set(sec)
		c := s.CallWith(method, params, o)
		waitFor(t, "call "+c.Key+" on the wire", func() bool { return c.Snapshot().Seq != 0 })
		return c
	}
	tool := func(name string) map[string]any { return map[string]any{"name": name, "arguments": map[string]any{}} }
	progress := func(sec float64, key string, n int) {
		f.in(sec, "", fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpscope-%s","progress":%d,"total":4}}`, key, n))
	}
	// cancelled waits for the notifications/cancelled of call key on the
	// wire, stamped before the clock moves on.
	cancelled := func(key string) {
		waitFor(t, "notifications/cancelled of #"+key, func() bool {
			found := false
			s.Store().Scan(0, 0, func(e session.Entry) bool {
				found = found || (e.Dir == transport.Out && e.Method == "notifications/cancelled" && e.CallKey == key)
				return true
			})
			return found
		})
	}

	send(0, "tools/list", nil, session.CallOptions{})
	f.in(0.05, "", `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)
	send(0.1, "tools/call", tool("slow"), session.CallOptions{})
	ask := send(0.5, "tools/call", tool("ask"), session.CallOptions{})
	progress(0.6, "2", 1)
	f.in(0.7, "", `{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{"message":"Name?"}}}}}`)
	send(1.0, "tools/call", tool("fail"), session.CallOptions{})
	progress(1.1, "2", 2)
	f.in(1.2, "", `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"boom \u001b[31m"}],"isError":true}}`)
	send(1.3, "resources/read", map[string]any{"uri": "demo://missing\u202e\u001b[2J"}, session.CallOptions{NoProgressToken: true})
	f.in(1.35, "", `{"jsonrpc":"2.0","id":5,"error":{"code":-32002,"message":"resource not found \u001b]0;x\u0007"}}`)
	f.event(1.4, transport.Meta{Event: transport.EvStreamResumed, Stream: "get:r1", Resumes: "post:2"})
	cancelMe := send(1.5, "tools/call", tool("slow"), session.CallOptions{})
	progress(1.6, "2", 3)
	progress(2.1, "2", 4)
	f.in(2.3, "", `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`)
	clock.set(2.5)
	if err := s.Cancel(cancelMe, "test"); err != nil {
		t.Fatal(err)
	}
	cancelled(cancelMe.Key)
	// The person answers #3's question at 3.0: round 2 goes out then.
	clock.set(3.0)
	ans.at <- 3.0
	waitFor(t, "round 2 of #3", func() bool { n := ask.Next(); return n != nil && n.Snapshot().Seq != 0 })
	pending := send(3.2, "tools/call", tool("slow"), session.CallOptions{})
	f.in(3.4, "", `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hello Ada"}]}}`)
	// A 2026-07-28 request whose response stream breaks is sent again.
	s.Adopt(session.EraVerdict{Era: session.EraModern, Reason: "test"})
	echo := send(3.3, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "hi"}}, session.CallOptions{})
	f.event(3.35, transport.Meta{Event: transport.EvStreamDropped, Stream: "post:" + echo.Key, Detail: "cut"})
	waitFor(t, "the re-issue of #"+echo.Key, func() bool { n := echo.Next(); return n != nil && n.Snapshot().Seq != 0 })
	f.in(3.5, "", `{"jsonrpc":"2.0","id":10,"result":{"resultType":"complete","content":[]}}`)
	progress(3.6, pending.Key, 1)
	f.in(3.7, "post:"+pending.Key, `{"jsonrpc":"2.0","id":"srv-1","method":"elicitation/create","params":{"message":"Sure?"}}`)
	// The idle timer runs on the real clock (300ms); the session stamps the
	// end with this one, moved on before the timer can fire.
	timeMe := send(3.75, "tools/call", tool("slow"), session.CallOptions{Timeout: 300 * time.Millisecond})
	clock.set(3.95)
	<-timeMe.Done()
	cancelled(timeMe.Key)
	clock.set(4.0)

	m := New(Options{Session: s, Theme: themes.ByName("dark"), Now: clock.now, Location: time.UTC,
		Clipboard: func(string) error { return nil }, StateStore: &session.FileStore{Dir: t.TempDir()}})
	m.Update(windowSize(w, h))
	waitFor(t, "every call in the history", func() bool { refresh(m); return len(m.h.calls) == 11 })
	return m, s, clock
}

// waitFor polls cond (the session works on its own goroutines) for at
// most 5 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestGoldenWaterfall(t *testing.T) {
	cases := []struct {
		name  string
		setup func(m *Model)
	}{
		{"waterfall", func(m *Model) { press(m, "waterfall", "top", "down", "down") }},
		{"waterfall-zoom", func(m *Model) {
			press(m, "waterfall", "top", "down", "down", "waterfall-zoom-in", "waterfall-zoom-in", "waterfall-earlier")
		}},
	}
	for _, c := range cases {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s-%dx%d", c.name, sz.w, sz.h), func(t *testing.T) {
				m, _, _ := wfFixture(t, sz.w, sz.h)
				c.setup(m)
				got := screen(m)
				checkSize(t, got, sz.w, sz.h)
				golden(t, fmt.Sprintf("%s-%dx%d", c.name, sz.w, sz.h), got)
			})
		}
	}
}
