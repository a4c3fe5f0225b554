package connect_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/connect"
	"mcpscope/framestore"
	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/testkit/clienttest"
	"mcpscope/testkit/peers"
	"mcpscope/testkit/testservers"
	"mcpscope/transport"
)

// "One inspector, both eras": mcpscope's own code paths (flags → transport →
// era probe → session) against real 2026-07-28 servers written by others —
// the TypeScript SDK v2 peer over HTTP and stdio, and the Go SDK (stateless
// Streamable HTTP in-process, and its stdio binary). The legacy-era
// counterpart is peers_test.go.

// modernTarget is one real modern server and what its tools look like.
type modernTarget struct {
	name  string
	stdio bool
	start func(t *testing.T) *modernEnv

	echo func(text string) map[string]any // tools/call params of an echo
	slow func(steps, ms int) map[string]any

	// ask is a tools/call that asks for input through MRTR (elicitation
	// under askKey); accept is an accepting answer, accepted text in the
	// final result after it; declined is in the final result after a
	// decline, "" when the server just asks again.
	ask      map[string]any
	askKey   string
	accept   json.RawMessage
	accepted string
	declined string
}

// modernEnv is a started target.
type modernEnv struct {
	o    connect.Spec
	wire *wireLog // HTTP: every request as it reached the server
	// change makes the server's tool list change; nil if it cannot.
	change func(t *testing.T, s *session.Session)
}

func modernTargets() []modernTarget {
	ts := modernTarget{
		echo: func(text string) map[string]any {
			return map[string]any{"name": "echo", "arguments": map[string]any{"text": text}}
		},
		slow: func(steps, ms int) map[string]any {
			return map[string]any{"name": "slow", "arguments": map[string]any{"steps": steps, "intervalMs": ms}}
		},
		ask:      map[string]any{"name": "confirm", "arguments": map[string]any{"action": "deploy"}},
		askKey:   "confirm",
		accept:   json.RawMessage(`{"action":"accept","content":{"confirm":true}}`),
		accepted: "confirmed: deploy",
	}
	tsHTTP, tsStdio := ts, ts
	tsHTTP.name = "ts-v2-http"
	tsHTTP.start = func(t *testing.T) *modernEnv {
		u, w := recordingProxy(t, peers.StartTSv2(t))
		return &modernEnv{o: connect.Spec{URL: u, NoJournal: true}, wire: w}
	}
	tsStdio.name, tsStdio.stdio = "ts-v2-stdio", true
	tsStdio.start = func(t *testing.T) *modernEnv {
		cmd, args := peers.TSv2Stdio(t)
		return &modernEnv{o: connect.Spec{Command: append([]string{cmd}, args...), NoJournal: true}}
	}

	goSDK := modernTarget{
		echo: func(text string) map[string]any {
			return map[string]any{"name": "echo", "arguments": map[string]any{"message": text}}
		},
		slow: func(steps, ms int) map[string]any {
			return map[string]any{"name": "slow", "arguments": map[string]any{"steps": steps, "seconds": float64(steps*ms) / 1000}}
		},
		ask:      map[string]any{"name": "ask", "arguments": map[string]any{"message": "Who are you?"}},
		askKey:   "ask",
		accept:   json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`),
		accepted: `ask: the user accepted and answered {"name":"Ada"}`,
		declined: "ask: the user declined to answer",
	}
	goHTTP, goStdio := goSDK, goSDK
	goHTTP.name = "go-sdk-http"
	goHTTP.start = func(t *testing.T) *modernEnv {
		h := testservers.StartHTTPServer(t, testservers.HTTPOpts{Stateless: true})
		addModernTestTools(h.Server)
		u, w := recordingProxy(t, h.URL)
		return &modernEnv{o: connect.Spec{URL: u, NoJournal: true}, wire: w, change: func(t *testing.T, _ *session.Session) {
			addTool(h.Server, "added-at-runtime", `{"type":"object"}`, func(*mcp.CallToolRequest) *mcp.CallToolResult { return textResult("hi") })
		}}
	}
	goStdio.name, goStdio.stdio = "go-sdk-stdio", true
	goStdio.start = func(t *testing.T) *modernEnv {
		return &modernEnv{o: connect.Spec{Command: []string{testservers.BuildStdio(t)}, NoJournal: true},
			change: func(t *testing.T, s *session.Session) {
				clienttest.Call(t, s.Call("tools/call", map[string]any{"name": "toggle-extra"}))
			}}
	}
	return []modernTarget{tsHTTP, tsStdio, goHTTP, goStdio}
}

// eachModern runs fn against every modern target, each in a subtest with
// its own server.
func eachModern(t *testing.T, fn func(t *testing.T, tg modernTarget, env *modernEnv)) {
	for _, tg := range modernTargets() {
		t.Run(tg.name, func(t *testing.T) { fn(t, tg, tg.start(t)) })
	}
}

// connectWith connects with a Responder of the test's own.
func connectWith(t *testing.T, o connect.Spec, r session.Responder) *session.Session {
	t.Helper()
	o.Responder = r
	return clienttest.Connect(t, o)
}

// outRequests are the requests mcpscope sent, decoded from the Out frames'
// own bytes, with the frames.
func outRequests(s *session.Session) []*framestore.Item {
	var out []*framestore.Item
	for _, it := range s.Store().Since(0, 0) {
		if it.Frame.Dir == transport.Out && it.Frame.Kind == transport.Message && it.Class == journal.ClassRequest {
			out = append(out, it)
		}
	}
	return out
}

func outNotifications(s *session.Session, method string) []*framestore.Item {
	var out []*framestore.Item
	for _, it := range s.Store().Since(0, 0) {
		if it.Frame.Dir == transport.Out && it.Class == journal.ClassNotification && it.Env.Method == method {
			out = append(out, it)
		}
	}
	return out
}

// sentParams decodes the params of an Out frame from its bytes.
func sentParams(t *testing.T, it *framestore.Item) map[string]json.RawMessage {
	t.Helper()
	var msg struct {
		Params map[string]json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(it.Frame.Data, &msg); err != nil {
		t.Fatalf("out frame %d: %v: %s", it.Seq, err, it.Frame.Data)
	}
	return msg.Params
}

func sentFrame(t *testing.T, s *session.Session, c *session.Call) *framestore.Item {
	t.Helper()
	for _, it := range outRequests(s) {
		if it.CallKey == c.Key {
			return it
		}
	}
	t.Fatalf("no request frame for call %s", c.Key)
	return nil
}

// --- era detection -------------------------------------------------------

func TestModernEraAuto(t *testing.T) {
	eachModern(t, func(t *testing.T, tg modernTarget, env *modernEnv) {
		o := env.o
		o.NoJournal, o.Journal = false, filepath.Join(t.TempDir(), "j.jsonl")
		s := connectWith(t, o, nil)
		in := s.Info()
		if in.Era != protocol.EraModern || in.ProtocolVersion != protocol.ModernVersion {
			t.Fatalf("era %q (%s), version %q; want modern", in.Era, in.EraReason, in.ProtocolVersion)
		}
		if !strings.Contains(in.EraReason, "server/discover lists "+protocol.ModernVersion) {
			t.Errorf("era reason %q", in.EraReason)
		}
		if first := outRequests(s)[0]; first.Env.Method != "server/discover" {
			t.Errorf("the first request was %s: the probe comes before anything else, on this process", first.Env.Method)
		}
		if in.ServerInfo.Name == "" || len(in.Capabilities) == 0 || in.SessionID != "" {
			t.Errorf("from server/discover: server %+v, capabilities %s, session id %q", in.ServerInfo, in.Capabilities, in.SessionID)
		}
		for _, it := range outRequests(s) {
			if it.Env.Method == "initialize" {
				t.Errorf("a modern session sent initialize: %s", it.Frame.Data)
			}
		}
		clienttest.Call(t, s.Call("tools/list", nil))
		s.Close()

		var events []string
		f, err := os.Open(o.Journal)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := journal.Read(f, func(_ uint64, fr transport.Frame) error {
			if fr.Dir == transport.Local && fr.Meta.Event == transport.EvNote && strings.HasPrefix(fr.Meta.Detail, "era: ") {
				events = append(events, fr.Meta.Detail)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(events) != 1 || events[0] != "era: modern ("+in.EraReason+")" {
			t.Fatalf("era events in the journal: %q; want one naming the reason %q", events, in.EraReason)
		}

		if tg.stdio {
			// A modern verdict is not remembered (server/discover is the
			// handshake itself): the next run asks the one process it starts.
			o.NoJournal = true
			s2, err := clienttest.TryConnect(o)
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			if r := s2.Info().EraReason; s2.Era() != protocol.EraModern || strings.Contains(r, "remembered") || outRequests(s2)[0].Env.Method != "server/discover" {
				t.Fatalf("second run: era %s, reason %q; want modern, asked afresh", s2.Era(), r)
			}
		}
	})
}

// The other era still works where it should, and pinning the wrong one
// fails clearly instead of hanging.
func TestModernEraPinned(t *testing.T) {
	t.Run("legacy-on-ts-v2", func(t *testing.T) {
		// The TS SDK v2 serves 2025 clients too (statelessly).
		s := clienttest.Connect(t, connect.Spec{URL: peers.StartTSv2(t), Era: "legacy", NoJournal: true})
		if in := s.Info(); in.Era != protocol.EraLegacy || in.EraReason != "pinned to legacy" || in.ProtocolVersion >= protocol.ModernVersion {
			t.Fatalf("era %q (%s) version %q", in.Era, in.EraReason, in.ProtocolVersion)
		}
		if res := clienttest.Call(t, s.Call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "old era"}})); !strings.Contains(string(res), "old era") {
			t.Fatalf("echo: %s", res)
		}
		for _, it := range outRequests(s) {
			if bytes.Contains(it.Frame.Data, []byte(protocol.MetaProtocolVersion)) {
				t.Errorf("a legacy request carries stateless _meta: %s", it.Frame.Data)
			}
		}
	})
	t.Run("legacy-pinned-on-everything", func(t *testing.T) {
		o := everythingStdio(t)
		o.Era = "legacy"
		s := clienttest.Connect(t, o)
		if in := s.Info(); in.Era != protocol.EraLegacy || in.EraReason != "pinned to legacy" || in.ServerInfo.Name == "" {
			t.Fatalf("era %q (%s), server %+v", in.Era, in.EraReason, in.ServerInfo)
		}
		for _, it := range outRequests(s) {
			if it.Env.Method == "server/discover" {
				t.Fatalf("a pinned era still probed: %s", it.Frame.Data)
			}
		}
		if res := clienttest.Call(t, s.Call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "pinned"}})); !strings.Contains(string(res), "pinned") {
			t.Fatalf("echo: %s", res)
		}
	})
	t.Run("modern-on-everything", func(t *testing.T) {
		o := everythingStdio(t)
		o.Era = "modern"
		t.Setenv("XDG_STATE_HOME", t.TempDir())
		s, err := clienttest.TryConnect(o)
		if err == nil {
			s.Close()
			t.Fatal("a modern pin against a legacy server connected")
		}
		var ee *connect.EraError
		if !errors.As(err, &ee) || ee.Pinned != protocol.EraModern || !strings.Contains(err.Error(), "server/discover") {
			t.Fatalf("error %v should say the pinned era is not spoken, and why", err)
		}
	})
	t.Run("modern-pinned-on-ts-v2", func(t *testing.T) {
		u, _ := recordingProxy(t, peers.StartTSv2(t))
		s := clienttest.Connect(t, connect.Spec{URL: u, Era: "modern", NoJournal: true})
		if r := s.Info().EraReason; s.Era() != protocol.EraModern || !strings.HasPrefix(r, "pinned to modern; ") {
			t.Fatalf("era %s reason %q", s.Era(), r)
		}
	})
}

// --- what every request carries -----------------------------------------

func TestModernRequestMetaAndHeaders(t *testing.T) {
	eachModern(t, func(t *testing.T, tg modernTarget, env *modernEnv) {
		s := connectWith(t, env.o, clienttest.NewResponder(nil))
		clienttest.Call(t, s.Call("tools/list", nil))
		if res := clienttest.Call(t, s.Call("tools/call", tg.echo("meta check"))); !strings.Contains(clienttest.ResultText(res), "meta check") {
			t.Fatalf("echo: %s", res)
		}
		reqs := outRequests(s)
		if len(reqs) < 3 {
			t.Fatalf("%d requests sent", len(reqs))
		}
		for _, it := range reqs {
			meta := map[string]json.RawMessage{}
			_ = json.Unmarshal(sentParams(t, it)["_meta"], &meta)
			var ver string
			var info protocol.Implementation
			_ = json.Unmarshal(meta[protocol.MetaProtocolVersion], &ver)
			_ = json.Unmarshal(meta[protocol.MetaClientInfo], &info)
			if ver != protocol.ModernVersion || info.Name != "mcpscope" || info.Version == "" ||
				string(meta[protocol.MetaClientCapabilities]) != `{"elicitation":{"form":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}}` {
				t.Errorf("%s request lacks the stateless _meta: %s", it.Env.Method, it.Frame.Data)
			}
			if env.wire == nil {
				continue
			}
			want := map[string]string{"Mcp-Protocol-Version": protocol.ModernVersion, "Mcp-Method": it.Env.Method}
			if it.Env.Method == "tools/call" {
				want["Mcp-Name"] = "echo"
			}
			// What the transport says it sent, and what reached the server.
			sent := http.Header{}
			for k, v := range it.Frame.Meta.Headers {
				sent.Set(k, v)
			}
			got, ok := env.wire.find(it.Frame.Data)
			if !ok {
				t.Fatalf("%s never reached the server", it.Frame.Data)
			}
			for k, v := range want {
				if sent.Get(k) != v || got.Header.Get(k) != v {
					t.Errorf("%s: header %s: recorded %q, on the wire %q; want %q", it.Env.Method, k, sent.Get(k), got.Header.Get(k), v)
				}
			}
			if it.Env.Method != "tools/call" && got.Header.Get("Mcp-Name") != "" {
				t.Errorf("%s carries Mcp-Name %q", it.Env.Method, got.Header.Get("Mcp-Name"))
			}
			if got.Header.Get("Mcp-Session-Id") != "" {
				t.Errorf("%s carries a session id", it.Env.Method)
			}
		}
	})
}

// --- progress and cancel -------------------------------------------------

func TestModernProgressAndCancel(t *testing.T) {
	eachModern(t, func(t *testing.T, tg modernTarget, env *modernEnv) {
		s := connectWith(t, env.o, nil)
		c := s.Call("tools/call", tg.slow(3, 20))
		clienttest.Call(t, c)
		if sn := c.Snapshot(); sn.Progress.Updates != 3 || sn.Progress.Total != 3 {
			t.Fatalf("want 3 progress updates of total 3, got %+v", sn.Progress)
		}
		n := 0
		for _, it := range s.Store().Since(0, 0) {
			if it.Env != nil && it.Env.Method == "notifications/progress" {
				if it.CallKey != c.Key {
					t.Errorf("progress %s correlated to %q, want %q", it.Frame.Data, it.CallKey, c.Key)
				}
				n++
			}
		}
		if n != 3 {
			t.Errorf("%d progress notifications in the store", n)
		}

		long := s.Call("tools/call", tg.slow(600, 100))
		clienttest.WaitFor(t, s, func() bool { return long.Snapshot().Progress.Updates > 0 })
		if err := s.Cancel(long, "test"); err != nil {
			t.Fatal(err)
		}
		if _, err := long.Wait(context.Background()); !errors.Is(err, session.ErrCancelled) {
			t.Fatalf("cancelled call: %v", err)
		}
		if tg.stdio {
			// stdio has no stream to close: the server is told.
			clienttest.WaitFor(t, s, func() bool { return len(outNotifications(s, "notifications/cancelled")) > 0 })
			cancels := outNotifications(s, "notifications/cancelled")
			if len(cancels) != 1 || cancels[0].CallKey != long.Key {
				t.Fatalf("stdio: want one notifications/cancelled for %s, got %d", long.Key, len(cancels))
			}
			if id := sentParams(t, cancels[0])["requestId"]; !bytes.Equal(id, long.ID) {
				t.Errorf("cancelled requestId %s, want %s", id, long.ID)
			}
		} else {
			// The request's own stream was closed: the server saw the
			// client go away.
			env.wire.wait(t, func() bool {
				r, ok := env.wire.find(sentFrame(t, s, long).Frame.Data)
				return ok && r.Done && r.ClientGone
			})
		}
		// The session goes on.
		if res := clienttest.Call(t, s.Call("tools/call", tg.echo("after cancel"))); !strings.Contains(clienttest.ResultText(res), "after cancel") {
			t.Fatalf("echo after cancel: %s", res)
		}
		if !tg.stdio {
			// Messages go out in order: a notifications/cancelled made by
			// the cancel would be ahead of the echo.
			if n := len(outNotifications(s, "notifications/cancelled")) + len(env.wire.requests("notifications/cancelled")); n != 0 {
				t.Fatalf("modern HTTP sent notifications/cancelled (%d)", n)
			}
		}
	})
}

// --- MRTR ----------------------------------------------------------------

// chain follows Next from c and checks each link's Parent and Round.
func chain(t *testing.T, s *session.Session, c *session.Call) []*session.Call {
	t.Helper()
	out := []*session.Call{c}
	for {
		sn := out[len(out)-1].Snapshot()
		if sn.Next == "" {
			return out
		}
		next := s.Lookup(sn.Next)
		if next == nil {
			t.Fatalf("round %s names next %s, which is no call", sn.Key, sn.Next)
		}
		if ns := next.Snapshot(); ns.Parent != sn.Key || ns.Round != sn.Round+1 {
			t.Fatalf("round %s → %s: parent %q round %d", sn.Key, ns.Key, ns.Parent, ns.Round)
		}
		out = append(out, next)
	}
}

// checkRetry checks that retry was sent as MRTR asks: a new id, the
// original params, the responses and the byte-exact requestState (absent
// when the server gave none).
func checkRetry(t *testing.T, s *session.Session, prev, retry *session.Call, responses string) {
	t.Helper()
	if bytes.Equal(prev.ID, retry.ID) {
		t.Fatalf("the retry reuses id %s", prev.ID)
	}
	pp, rp := sentParams(t, sentFrame(t, s, prev)), sentParams(t, sentFrame(t, s, retry))
	for _, k := range []string{"name", "arguments"} {
		if !bytes.Equal(pp[k], rp[k]) {
			t.Errorf("retry %s: %s, original %s", k, rp[k], pp[k])
		}
	}
	if responses != "" && string(rp["inputResponses"]) != responses {
		t.Errorf("retry inputResponses %s, want %s", rp["inputResponses"], responses)
	}
	// requestState as the server sent it, byte for byte.
	var res struct {
		Result struct {
			RequestState json.RawMessage `json:"requestState"`
		} `json:"result"`
	}
	for _, it := range s.Store().Since(0, 0) {
		if it.Frame.Dir == transport.In && it.CallKey == prev.Key && it.Class == journal.ClassResult {
			_ = json.Unmarshal(it.Frame.Data, &res) // a RawMessage keeps the bytes as sent
		}
	}
	if !bytes.Equal(rp["requestState"], res.Result.RequestState) {
		t.Errorf("retry requestState %s, the server sent %s", rp["requestState"], res.Result.RequestState)
	}
	if len(res.Result.RequestState) > 0 {
		if !bytes.Contains(sentFrame(t, s, retry).Frame.Data, append([]byte(`"requestState":`), res.Result.RequestState...)) {
			t.Errorf("retry bytes do not carry requestState %s verbatim: %s", res.Result.RequestState, sentFrame(t, s, retry).Frame.Data)
		}
	}
}

func TestModernMRTRAccept(t *testing.T) {
	eachModern(t, func(t *testing.T, tg modernTarget, env *modernEnv) {
		r := clienttest.NewResponder(func(session.ServerRequest) (json.RawMessage, *journal.RPCError) { return tg.accept, nil })
		s := connectWith(t, env.o, r)
		c := s.Call("tools/call", tg.ask)
		res := clienttest.Call(t, c)
		if !strings.Contains(clienttest.ResultText(res), tg.accepted) {
			t.Fatalf("final result %s, want %q", res, tg.accepted)
		}
		rounds := chain(t, s, c)
		if len(rounds) != 2 {
			t.Fatalf("%d rounds", len(rounds))
		}
		if sn := rounds[0].Snapshot(); sn.ResultType != "input_required" || sn.State != session.StateOK {
			t.Errorf("first round: %s %s", sn.State, sn.ResultType)
		}
		if sn := rounds[1].Snapshot(); sn.ResultType != "complete" || sn.ChainErr != nil {
			t.Errorf("last round: %s %v", sn.ResultType, sn.ChainErr)
		}
		asked := r.Requests()
		if len(asked) != 1 || asked[0].Key != tg.askKey || asked[0].Method != "elicitation/create" || !asked[0].MRTR ||
			asked[0].Related != c.Key || len(asked[0].ID) != 0 {
			t.Fatalf("the responder was asked %+v", asked)
		}
		checkRetry(t, s, rounds[0], rounds[1], fmt.Sprintf(`{%q:%s}`, tg.askKey, tg.accept))
	})
}

// A Responder that will not answer ends the chain with a reason; a decline
// is shown as the server's answer to it; neither hangs.
func TestModernMRTRDecline(t *testing.T) {
	eachModern(t, func(t *testing.T, tg modernTarget, env *modernEnv) {
		var refuse atomic.Bool
		refuse.Store(true)
		r := clienttest.NewResponder(func(req session.ServerRequest) (json.RawMessage, *journal.RPCError) {
			if refuse.Load() {
				return nil, &journal.RPCError{Code: -1, Message: "the user closed the form"}
			}
			return json.RawMessage(`{"action":"decline"}`), nil
		})
		s := connectWith(t, env.o, r)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()

		// Not answered at all.
		c := s.Call("tools/call", tg.ask)
		res, err := c.WaitFinal(ctx)
		var un *session.Unanswered
		if !errors.As(err, &un) || un.Method == "" || resultTypeOf(res) != "input_required" {
			t.Fatalf("unanswered input request: %s, %v", res, err)
		}
		if sn := c.Snapshot(); sn.ChainErr == nil || sn.Next != "" {
			t.Fatalf("the chain should end at the first round with its reason: %+v", sn)
		}

		// Declined.
		refuse.Store(false)
		c = s.Call("tools/call", tg.ask)
		res, err = c.WaitFinal(ctx)
		if tg.declined != "" {
			if err != nil || !strings.Contains(clienttest.ResultText(res), tg.declined) {
				t.Fatalf("declined: %s, %v", res, err)
			}
			return
		}
		// This server asks again after a decline: bounded by MaxRounds.
		var f *session.Failure
		if !errors.As(err, &f) || !strings.Contains(f.Reason, "input_required rounds") {
			t.Fatalf("a server that keeps asking: %s, %v", res, err)
		}
		if rounds := chain(t, s, c); len(rounds) != session.MaxRounds+1 {
			t.Fatalf("%d rounds, want %d", len(rounds), session.MaxRounds+1)
		}
	})
}

func resultTypeOf(res json.RawMessage) string {
	if res == nil {
		return ""
	}
	return journal.ResultType(res)
}

// --- subscriptions/listen -------------------------------------------------

func TestModernListen(t *testing.T) {
	eachModern(t, func(t *testing.T, tg modernTarget, env *modernEnv) {
		s := connectWith(t, env.o, nil)
		l := s.Listen(session.ListenFilter{ToolsListChanged: true, PromptsListChanged: true})
		clienttest.WaitFor(t, s, func() bool { return l.Snapshot().Ack != nil })
		var ack struct {
			Notifications session.ListenFilter `json:"notifications"`
		}
		var caps struct {
			Prompts *struct {
				ListChanged bool `json:"listChanged"`
			} `json:"prompts"`
		}
		_ = json.Unmarshal(s.Info().Capabilities, &caps)
		if err := json.Unmarshal(l.Snapshot().Ack, &ack); err != nil || !ack.Notifications.ToolsListChanged ||
			ack.Notifications.PromptsListChanged != (caps.Prompts != nil && caps.Prompts.ListChanged) {
			t.Fatalf("acknowledged subset %s (%v) of a server with capabilities %s", l.Snapshot().Ack, err, s.Info().Capabilities)
		}
		if st := l.Snapshot().State; st != session.StateStreaming {
			t.Errorf("listen call state %s after the acknowledgement", st)
		}
		if env.change != nil {
			env.change(t, s)
			clienttest.WaitFor(t, s, func() bool { return s.Info().ListChanged["tools"] > 0 })
			found := false
			for _, it := range s.Store().Since(0, 0) {
				if it.Env != nil && it.Env.Method == "notifications/tools/list_changed" {
					found = true
					if it.CallKey != l.Key {
						t.Errorf("list_changed correlated to %q, want the listen call %s", it.CallKey, l.Key)
					}
				}
			}
			if !found {
				t.Fatal("no notifications/tools/list_changed item")
			}
		}
		if err := s.Cancel(l, "done listening"); err != nil {
			t.Fatal(err)
		}
		if tg.stdio {
			clienttest.WaitFor(t, s, func() bool { return len(outNotifications(s, "notifications/cancelled")) > 0 })
			if c := outNotifications(s, "notifications/cancelled"); len(c) != 1 || c[0].CallKey != l.Key {
				t.Fatalf("stdio: want one notifications/cancelled for the listen call, got %d", len(c))
			}
		} else {
			env.wire.wait(t, func() bool {
				r, ok := env.wire.find(sentFrame(t, s, l).Frame.Data)
				return ok && r.Done && r.ClientGone
			})
		}
		// No re-listen after our own cancel, and the session goes on.
		if res := clienttest.Call(t, s.Call("tools/call", tg.echo("after listen"))); !strings.Contains(clienttest.ResultText(res), "after listen") {
			t.Fatalf("echo: %s", res)
		}
		if !tg.stdio && len(outNotifications(s, "notifications/cancelled")) != 0 {
			t.Error("modern HTTP sent notifications/cancelled for the listen call")
		}
		for _, it := range outRequests(s) {
			if it.Env.Method == "subscriptions/listen" && it.CallKey != l.Key {
				t.Errorf("listened again after a cancel: %s", it.Frame.Data)
			}
		}
		if sn := l.Snapshot(); sn.State != session.StateCancelled {
			t.Errorf("listen call ended %s", sn.State)
		}
	})
}

// --- Go SDK only: x-mcp-header, requestState, a server that keeps asking --

func TestModernGoSDK(t *testing.T) {
	h := testservers.StartHTTPServer(t, testservers.HTTPOpts{Stateless: true})
	addModernTestTools(h.Server)
	u, wire := recordingProxy(t, h.URL)
	var tg modernTarget
	for _, x := range modernTargets() {
		if x.name == "go-sdk-http" {
			tg = x
		}
	}

	t.Run("param-headers", func(t *testing.T) {
		s := connectWith(t, connect.Spec{URL: u, NoJournal: true}, nil)
		clienttest.Call(t, s.Call("tools/list", nil)) // learns the x-mcp-header annotations
		// The SDK only checks annotations under properties; one under anyOf
		// is not statically reachable, and a client must drop that tool.
		if inv := s.InvalidTools(); len(inv) != 1 || !strings.Contains(inv["unreachable-header"], "not statically reachable") {
			t.Fatalf("tools judged invalid: %v; want only unreachable-header", inv)
		}
		for _, tc := range []struct {
			region string
			shard  int
		}{{"us-west1", 7}, {"Zürich", 42}, {" padded ", 0}} {
			c := s.Call("tools/call", map[string]any{"name": "route", "arguments": map[string]any{"region": tc.region, "shard": tc.shard, "q": "select 1"}})
			res := clienttest.Call(t, c)
			if want := fmt.Sprintf("routed %q/%d", tc.region, tc.shard); clienttest.ResultText(res) != want {
				t.Errorf("route: %s, want %s", res, want)
			}
			got, ok := wire.find(sentFrame(t, s, c).Frame.Data)
			if !ok {
				t.Fatal("the call never reached the server")
			}
			if v := got.Header.Get("Mcp-Param-Region"); v != protocol.HeaderValue(tc.region) {
				t.Errorf("Mcp-Param-Region %q, want %q", v, protocol.HeaderValue(tc.region))
			}
			if tc.region != "us-west1" && !strings.HasPrefix(got.Header.Get("Mcp-Param-Region"), "=?base64?") {
				t.Errorf("%q must travel base64-wrapped: %q", tc.region, got.Header.Get("Mcp-Param-Region"))
			}
			if v := got.Header.Get("Mcp-Param-Shard"); v != strconv.Itoa(tc.shard) {
				t.Errorf("Mcp-Param-Shard %q", v)
			}
			if got.Header.Get("Mcp-Param-Q") != "" {
				t.Error("an unannotated argument became a header")
			}
		}

		// A header that contradicts the body is the server's -32020, shown
		// as the call's RPC error.
		for name, hdr := range map[string]map[string]string{
			"param": {"Mcp-Param-Region": "elsewhere"},
			"name":  {"Mcp-Name": "echo"},
		} {
			c := s.CallWith("tools/call", map[string]any{"name": "route", "arguments": map[string]any{"region": "us-west1", "shard": 1}},
				session.CallOptions{Headers: hdr})
			checkHeaderMismatch(t, c, name)
		}
		if res := clienttest.Call(t, s.Call("tools/call", tg.echo("still fine"))); !strings.Contains(string(res), "still fine") {
			t.Fatalf("echo after header errors: %s", res)
		}
	})

	t.Run("request-state", func(t *testing.T) {
		r := clienttest.NewResponder(func(req session.ServerRequest) (json.RawMessage, *journal.RPCError) {
			return json.RawMessage(`{"action":"accept","content":{"pin":"1234"}}`), nil
		})
		s := connectWith(t, connect.Spec{URL: u, NoJournal: true}, r)
		c := s.Call("tools/call", map[string]any{"name": "vault", "arguments": map[string]any{}})
		res := clienttest.Call(t, c)
		if want := fmt.Sprintf("vault opened with 1234 and state %q", vaultState); clienttest.ResultText(res) != want {
			t.Fatalf("vault: %s", res)
		}
		rounds := chain(t, s, c)
		if len(rounds) != 2 {
			t.Fatalf("%d rounds", len(rounds))
		}
		checkRetry(t, s, rounds[0], rounds[1], `{"pin":{"action":"accept","content":{"pin":"1234"}}}`)
	})

	t.Run("keeps-asking", func(t *testing.T) {
		r := clienttest.NewResponder(func(session.ServerRequest) (json.RawMessage, *journal.RPCError) {
			return json.RawMessage(`{"action":"accept","content":{"more":"yes"}}`), nil
		})
		s := connectWith(t, connect.Spec{URL: u, NoJournal: true}, r)
		c := s.Call("tools/call", map[string]any{"name": "nag", "arguments": map[string]any{}})
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := c.WaitFinal(ctx)
		var f *session.Failure
		if !errors.As(err, &f) || !strings.Contains(f.Reason, fmt.Sprintf("gave up after %d input_required rounds", session.MaxRounds)) {
			t.Fatalf("nag: %s, %v", res, err)
		}
		rounds := chain(t, s, c)
		if len(rounds) != session.MaxRounds+1 || len(r.Requests()) != session.MaxRounds {
			t.Fatalf("%d rounds, responder asked %d times", len(rounds), len(r.Requests()))
		}
		if last := rounds[len(rounds)-1].Snapshot(); last.ChainErr == nil || last.ResultType != "input_required" {
			t.Fatalf("last round %+v", last)
		}
		for i := 1; i < len(rounds); i++ {
			checkRetry(t, s, rounds[i-1], rounds[i], "")
		}
		if n := len(wire.requests("tools/call")); n < session.MaxRounds+1 {
			t.Fatalf("%d tools/call requests reached the server", n)
		}
	})
}

// TS SDK v2 checks the routing headers as well.
func TestModernTSv2HeaderMismatch(t *testing.T) {
	u, _ := recordingProxy(t, peers.StartTSv2(t))
	s := connectWith(t, connect.Spec{URL: u, NoJournal: true}, nil)
	for name, hdr := range map[string]map[string]string{
		"name":   {"Mcp-Name": "slow"},
		"method": {"Mcp-Method": "tools/list"},
	} {
		c := s.CallWith("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}, session.CallOptions{Headers: hdr})
		checkHeaderMismatch(t, c, name)
	}
	if res := clienttest.Call(t, s.Call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "fine"}})); !strings.Contains(string(res), "fine") {
		t.Fatalf("echo: %s", res)
	}
}

func checkHeaderMismatch(t *testing.T, c *session.Call, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.WaitFinal(ctx)
	var rpc *journal.RPCError
	if !errors.As(err, &rpc) || rpc.Code != protocol.CodeHeaderMismatch {
		t.Fatalf("wrong %s header: %v; want the server's %d", what, err, protocol.CodeHeaderMismatch)
	}
	if sn := c.Snapshot(); sn.State != session.StateError || sn.RPCError == nil || sn.Failure != nil {
		t.Fatalf("wrong %s header: call %s, rpc %v, failure %v", what, sn.State, sn.RPCError, sn.Failure)
	}
}

// --- Go SDK test tools ----------------------------------------------------

// vaultState is the requestState the vault tool hands out: quotes, an
// escape, non-ASCII and HTML characters, so any re-encoding would show.
const vaultState = `s1 "q" \ <é> & ☃`

func textResult(format string, a ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, a...)}}}
}

func addTool(s *mcp.Server, name, schema string, fn func(*mcp.CallToolRequest) *mcp.CallToolResult) {
	s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(schema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return fn(req), nil })
}

func addModernTestTools(s *mcp.Server) {
	// route mirrors two arguments in Mcp-Param-* headers (SEP-2243); the
	// SDK rejects a request whose headers disagree with the body.
	addTool(s, "route", `{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"shard":{"type":"integer","x-mcp-header":"Shard"},
		"q":{"type":"string"}}}`, func(req *mcp.CallToolRequest) *mcp.CallToolResult {
		var in struct {
			Region string `json:"region"`
			Shard  int    `json:"shard"`
		}
		_ = json.Unmarshal(req.Params.Arguments, &in)
		return textResult("routed %q/%d", in.Region, in.Shard)
	})
	addTool(s, "unreachable-header", `{"type":"object","properties":{
		"x":{"anyOf":[{"type":"string","x-mcp-header":"X"}]}}}`, func(*mcp.CallToolRequest) *mcp.CallToolResult {
		return textResult("should not be called")
	})
	// vault asks for a pin with a requestState and checks it comes back.
	addTool(s, "vault", `{"type":"object"}`, func(req *mcp.CallToolRequest) *mcp.CallToolResult {
		if resp, ok := req.Params.InputResponses["pin"].(*mcp.ElicitResult); ok {
			if req.Params.RequestState != vaultState {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "requestState changed: " + req.Params.RequestState}}}
			}
			return textResult("vault opened with %v and state %q", resp.Content["pin"], req.Params.RequestState)
		}
		return &mcp.CallToolResult{RequestState: vaultState, InputRequests: mcp.InputRequestMap{
			"pin": &mcp.ElicitParams{Mode: "form", Message: "PIN?", RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"pin": map[string]any{"type": "string"}}}},
		}}
	})
	// nag asks again whatever the answer, with a new state each round.
	addTool(s, "nag", `{"type":"object"}`, func(req *mcp.CallToolRequest) *mcp.CallToolResult {
		n, _ := strconv.Atoi(strings.TrimPrefix(req.Params.RequestState, "round-"))
		return &mcp.CallToolResult{RequestState: fmt.Sprintf("round-%d", n+1), InputRequests: mcp.InputRequestMap{
			"more": &mcp.ElicitParams{Mode: "form", Message: fmt.Sprintf("More (round %d)?", n+1), RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"more": map[string]any{"type": "string"}}}},
		}}
	})
}

// --- a recording reverse proxy --------------------------------------------

// wireLog is every POST that went through a recording proxy, as the server
// got it.
type wireLog struct {
	mu      sync.Mutex
	reqs    []*wireReq
	changed chan struct{}
}

type wireReq struct {
	Header     http.Header
	Body       []byte
	Done       bool // the proxy finished with it
	ClientGone bool // mcpscope closed the request before the answer ended
}

// recordingProxy starts a reverse proxy on 127.0.0.1 in front of upstream
// (an MCP endpoint URL) and returns the proxy's endpoint URL.
func recordingProxy(t *testing.T, upstream string) (string, *wireLog) {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	w := &wireLog{changed: make(chan struct{}, 1)}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(&url.URL{Scheme: target.Scheme, Host: target.Host})
		},
		FlushInterval: -1,
		ErrorHandler:  func(rw http.ResponseWriter, _ *http.Request, _ error) { rw.WriteHeader(http.StatusBadGateway) },
	}
	ts := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &wireReq{Header: r.Header.Clone(), Body: body}
		w.update(func() { w.reqs = append(w.reqs, rec) })
		// ReverseProxy aborts (panics with http.ErrAbortHandler) when the
		// client goes away mid-answer: record in a defer.
		defer func() {
			gone := r.Context().Err() != nil
			w.update(func() { rec.Done, rec.ClientGone = true, gone })
		}()
		rp.ServeHTTP(rw, r)
	}))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL + target.Path, w
}

func (w *wireLog) update(fn func()) {
	w.mu.Lock()
	fn()
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// find returns the request whose body is exactly data.
func (w *wireLog) find(data []byte) (wireReq, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.reqs {
		if bytes.Equal(r.Body, data) {
			return *r, true
		}
	}
	return wireReq{}, false
}

// requests returns those whose body has the JSON-RPC method.
func (w *wireLog) requests(method string) []wireReq {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []wireReq
	for _, r := range w.reqs {
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(r.Body, &m) == nil && m.Method == method {
			out = append(out, *r)
		}
	}
	return out
}

func (w *wireLog) wait(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for !cond() {
		select {
		case <-w.changed:
		case <-deadline.C:
			t.Fatal("wire condition not met within 30s")
		}
	}
}
