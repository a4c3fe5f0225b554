package framefilter

import (
	"encoding/json"
	"testing"
	"time"

	"mcpscope/filter"
	"mcpscope/framestore"
	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/transport"
)

// TestSubjects: what the one filter adapter says about each kind of frame
// and each way a call ends, and that filters see it so.
func TestSubjects(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	msg := func(dir transport.Dir, raw string) (*transport.Frame, *journal.Envelope) {
		env, batch, _ := journal.DecodeClass([]byte(raw))
		if env == nil && len(batch) > 0 {
			env = batch[0]
		}
		return &transport.Frame{Time: t0, Dir: dir, Kind: transport.Message, Data: []byte(raw),
			Meta: transport.Meta{Headers: map[string]string{"Mcp-Session-Id": "abc"}}}, env
	}
	call := &session.CallSnapshot{Key: "7", Method: "tools/call", Name: "get weather", State: session.StateOK, Started: t0, Ended: t0.Add(600 * time.Millisecond)}
	cases := []struct {
		name  string
		f     *transport.Frame
		env   *journal.Envelope
		c     *session.CallSnapshot
		kind  string
		match []string
		not   []string
	}{
		{name: "request", kind: "request", c: call,
			match: []string{"~m tools/call", "~t 'get weather'", "~id 7", "~s ok", "~dur >500ms", "~h mcp-session-id=abc", "~c paris", "~d out"},
			not:   []string{"~e", "~k response", "~dur >1s"}},
		{name: "response", kind: "response", c: call, match: []string{"~m tools/call", "~k response"}},
		{name: "error response", kind: "response", match: []string{"~e", "~k response"}},
		{name: "progress", kind: "progress", match: []string{"~k progress", "~k notification", "~m notifications/progress"}},
		{name: "log", kind: "log", match: []string{"~k log", "~k notification"}, not: []string{"~k progress"}},
		{name: "late", kind: "request", c: &session.CallSnapshot{Method: "tools/call", State: session.StateOK, Late: 1}, match: []string{"~s late"}},
		{name: "cancelled, answered late", kind: "request", c: &session.CallSnapshot{Method: "tools/call", State: session.StateCancelled, Late: 1}, match: []string{"~s cancelled"}, not: []string{"~s late"}},
		{name: "tool error", kind: "response", c: &session.CallSnapshot{Method: "tools/call", State: session.StateOK, IsError: true}, match: []string{"~e", "~s error"}},
		{name: "input", kind: "response", c: &session.CallSnapshot{Method: "tools/call", State: session.StateOK, ResultType: "input_required"}, match: []string{"~s input"}},
		{name: "lost", kind: "request", c: &session.CallSnapshot{Method: "tools/call", State: session.StateError, Failure: &session.Failure{Kind: session.ErrClosed}}, match: []string{"~s lost", "~e"}},
		{name: "reissued is no error", kind: "request", c: &session.CallSnapshot{Method: "tools/call", State: session.StateError, Failure: &session.Failure{Kind: session.ErrReissued}}, not: []string{"~e"}},
		{name: "event", kind: "event", match: []string{"~k event", "~m stream-dropped", "~d local"}},
		{name: "stderr", kind: "stderr", match: []string{"~k stderr", "~c oops"}},
		{name: "garbage", kind: "garbage", match: []string{"~k garbage"}},
		{name: "batch", kind: "request", match: []string{"~m ping"}},
	}
	for i := range cases {
		c := &cases[i]
		switch c.name {
		case "request", "late", "cancelled, answered late", "lost", "reissued is no error":
			c.f, c.env = msg(transport.Out, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get weather","arguments":{"city":"Paris"}}}`)
		case "response", "input", "tool error":
			c.f, c.env = msg(transport.In, `{"jsonrpc":"2.0","id":7,"result":{}}`)
		case "error response":
			c.f, c.env = msg(transport.In, `{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"no"}}`)
		case "progress":
			c.f, c.env = msg(transport.In, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`)
		case "log":
			c.f, c.env = msg(transport.In, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
		case "batch":
			c.f, c.env = msg(transport.Out, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
		case "event":
			c.f = &transport.Frame{Time: t0, Dir: transport.Local, Kind: transport.Event, Meta: transport.Meta{Event: transport.EvStreamDropped}}
		case "stderr":
			c.f = &transport.Frame{Time: t0, Dir: transport.In, Kind: transport.Stderr, Data: []byte("oops")}
		case "garbage":
			c.f = &transport.Frame{Time: t0, Dir: transport.In, Kind: transport.Garbage, Data: []byte("hello")}
		}
	}
	subj := NewSubjects()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := subj.Fill(c.f, c.env, c.c, t0.Add(time.Second))
			if s.Kind != c.kind || s.Size != len(c.f.Data) {
				t.Fatalf("kind %q size %d, want %q %d", s.Kind, s.Size, c.kind, len(c.f.Data))
			}
			for _, expr := range c.match {
				if f, _ := filter.Parse(expr); !f.Match(subj.Fill(c.f, c.env, c.c, t0.Add(time.Second))) {
					t.Errorf("%s does not match", expr)
				}
			}
			for _, expr := range c.not {
				if f, _ := filter.Parse(expr); f.Match(subj.Fill(c.f, c.env, c.c, t0.Add(time.Second))) {
					t.Errorf("%s matches", expr)
				}
			}
		})
	}
	// FillItem reads a stored item the same way, a batch by its first message.
	env, batch, class := journal.DecodeClass([]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`))
	it := &framestore.Item{Frame: transport.Frame{Dir: transport.Out, Kind: transport.Message, Data: json.RawMessage(`[]`)}, Env: env, Batch: batch, Class: class}
	if s := subj.FillItem(it, nil, t0); s.Kind != "request" || s.Method != "ping" {
		t.Errorf("a batch item: %+v", s)
	}
}
