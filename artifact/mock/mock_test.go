package mock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/artifact/mock"
	"mcpscope/artifact/scan"
	"mcpscope/connect"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/testkit/recordtest"
	"mcpscope/testkit/testservers"
	"mcpscope/transport"
)

func TestMain(m *testing.M) { recordtest.Main(m) }

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// recordings of the Go SDK test server: over stdio (the 2026-07-28
// protocol: mcpscope's probe finds it) and over Streamable HTTP (stateful:
// the initialize era, with sessions).
func recordings(t *testing.T) map[string]string {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	return map[string]string{
		"stdio-modern": recordtest.Once(t, "stdio", func(j string) string {
			return recordtest.Record(t, "stdio", connect.Spec{Journal: j, Command: []string{testservers.BuildStdio(t)}}, recordtest.GoScript)
		}),
		"http-legacy": recordtest.Once(t, "http", func(j string) string {
			return recordtest.Record(t, "http", connect.Spec{Journal: j, URL: testservers.StartHTTP(t, testservers.HTTPOpts{})}, recordtest.GoScript)
		}),
	}
}

func load(t *testing.T, path string) *mock.Recording {
	t.Helper()
	rec, err := mock.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// serveStdio runs the mock over pipes and returns the client's transport.
func serveStdio(t *testing.T, srv *mock.Server) mcp.Transport {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.ServeStdio(context.Background(), sr, sw)
		sw.Close()
	}()
	t.Cleanup(func() {
		cw.Close()
		select {
		case <-done:
		case <-time.After(2 * time.Minute): // a hang guard
			t.Error("ServeStdio did not return after stdin closed")
		}
	})
	return &mcp.IOTransport{Reader: cr, Writer: cw}
}

func serveHTTP(t *testing.T, srv *mock.Server) string {
	t.Helper()
	h := srv.Handler()
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.Close() })
	return ts.URL + "/mcp"
}

// recorded is what the recording says a call answered: its result.
func recorded(t *testing.T, path, method, name string) json.RawMessage {
	t.Helper()
	var out json.RawMessage
	scan.File(path, scan.Options{}, func(fr *scan.Frame) error {
		if fr.Dir == transport.In && fr.Call != nil && fr.Call.Method == method && fr.Call.Name == name && fr.Env.Result != nil && out == nil {
			out = fr.Env.Result
		}
		return nil
	})
	if out == nil {
		t.Fatalf("no recorded %s %s", method, name)
	}
	return out
}

// TestGoSDKClient: the Go SDK's client, over stdio and over HTTP, gets the
// recorded answers from both recordings, a 2025 client of a 2026
// recording included (its initialize answer is made from server/discover).
func TestGoSDKClient(t *testing.T) {
	for name, path := range recordings(t) {
		for _, via := range []string{"stdio", "http"} {
			t.Run(name+" via "+via, func(t *testing.T) {
				srv := mock.New(load(t, path), mock.Options{Speed: 10})
				var tr mcp.Transport
				if via == "stdio" {
					tr = serveStdio(t, srv)
				} else {
					tr = &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, srv), MaxRetries: -1}
				}
				var progress atomic.Int32
				third := make(chan struct{})
				client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
					ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
						if progress.Add(1) == 3 {
							close(third)
						}
					}})
				cs, err := client.Connect(ctx(t), tr, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				if got := cs.InitializeResult().ServerInfo.Name; got != "mcpscope-everything" {
					t.Errorf("server name %q", got)
				}
				tools, err := cs.ListTools(ctx(t), nil)
				if err != nil || len(tools.Tools) < 9 {
					t.Fatalf("tools/list: %v, %d tools", err, len(tools.Tools))
				}
				check := func(res *mcp.CallToolResult, err error, tool string) {
					t.Helper()
					if err != nil {
						t.Fatalf("%s: %v", tool, err)
					}
					var want struct {
						Content []struct{ Text string } `json:"content"`
						IsError bool                    `json:"isError"`
					}
					json.Unmarshal(recorded(t, path, "tools/call", tool), &want)
					if got := res.Content[0].(*mcp.TextContent).Text; got != want.Content[0].Text || res.IsError != want.IsError {
						t.Errorf("%s: %q (isError %v), recorded %q (isError %v)", tool, got, res.IsError, want.Content[0].Text, want.IsError)
					}
				}
				res, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}})
				check(res, err, "echo")
				// By name: other arguments, the recorded answer.
				res, err = cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "something else"}})
				check(res, err, "echo")
				params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 0.3, "steps": 3}}
				params.SetProgressToken("my-own-token")
				res, err = cs.CallTool(ctx(t), params)
				check(res, err, "slow")
				// The SDK client runs notification handlers apart from the call:
				// the result can return before the last handler has run.
				select {
				case <-third:
				case <-time.After(2 * time.Minute): // a hang guard; the count below says what is missing
				}
				if n := progress.Load(); n != 3 {
					t.Errorf("%d progress notifications reached the client (with its own token), want 3", n)
				}
				res, err = cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{"message": "on purpose"}})
				check(res, err, "fail")
				if _, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "no-such-tool", Arguments: map[string]any{}}); err == nil {
					t.Error("no-such-tool: the recorded error did not come back")
				}
				_, err = cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "eccho", Arguments: map[string]any{}})
				if err == nil || !strings.Contains(err.Error(), "closest recording is tools/call echo") {
					t.Errorf("a tool never recorded: %v", err)
				}
				rr, err := cs.ReadResource(ctx(t), &mcp.ReadResourceParams{URI: "demo://readme"})
				if err != nil || !strings.Contains(rr.Contents[0].Text, "demo server") {
					t.Errorf("read: %v", err)
				}
				pr, err := cs.GetPrompt(ctx(t), &mcp.GetPromptParams{Name: "greeting", Arguments: map[string]string{"name": "Ada"}})
				if err != nil || len(pr.Messages) == 0 {
					t.Errorf("prompt: %v", err)
				}
				if err := cs.Ping(ctx(t), nil); err != nil {
					t.Errorf("ping: %v", err)
				}
			})
		}
	}
}

// TestBytes: mcpscope's own client, doing what the recording did, gets
// the recorded bytes: every message the server sent is the same, byte for
// byte (the ids and progress tokens are the same because the client
// numbers its requests the same way).
func TestBytes(t *testing.T) {
	for name, path := range recordings(t) {
		t.Run(name, func(t *testing.T) {
			srv := mock.New(load(t, path), mock.Options{NoWait: true})
			// Served over HTTP either way (stdio through the real command
			// is the e2e test's): a stdio recording of the 2026-07-28
			// protocol is served statelessly.
			sp := connect.Spec{URL: serveHTTP(t, srv)}
			replayed := recordtest.Record(t, "replayed", sp, func(ctx context.Context, t testing.TB, s *session.Session) {
				recordtest.Lists(ctx, t, s)
				for _, c := range []struct {
					tool string
					args map[string]any
				}{{"echo", map[string]any{"message": "hello"}}, {"slow", map[string]any{"seconds": 0.3, "steps": 3}}, {"fail", map[string]any{"message": "on purpose"}}} {
					recordtest.Tool(ctx, t, s, c.tool, c.args)
				}
			})
			want, got := serverMessages(t, path), serverMessages(t, replayed)
			compared := 0
			defer func() {
				if compared < 4 {
					t.Errorf("only %d calls compared", compared)
				}
			}()
			for key, msgs := range got {
				if len(msgs) == 0 || !strings.Contains(key, "tools/") {
					continue
				}
				compared++
				if strings.Join(msgs, "\n") != strings.Join(want[key], "\n") {
					t.Errorf("%s: replayed\n%s\nrecorded\n%s", key, strings.Join(msgs, "\n"), strings.Join(want[key], "\n"))
				}
			}
		})
	}
}

// serverMessages groups what the server sent by the call it belongs to.
func serverMessages(t *testing.T, path string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	scan.File(path, scan.Options{}, func(fr *scan.Frame) error {
		if fr.Dir == transport.In && fr.Call != nil && fr.Kind == transport.Message {
			k := fr.Call.Key + " " + fr.Call.Method + " " + fr.Call.Name
			out[k] = append(out[k], string(fr.Data))
		}
		return nil
	})
	return out
}

// TestMatching: recorded repeats come back in order (then the last again),
// and a request no recording answers gets an error naming the closest.
func TestMatching(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	srv := mcp.NewServer(&mcp.Implementation{Name: "counter", Version: "1"}, nil)
	var n atomic.Int32
	mcp.AddTool(srv, &mcp.Tool{Name: "count", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(rune('0' + n.Add(1)))}}}, nil, nil
		})
	url := testservers.StartHTTPServer(t, testservers.HTTPOpts{Server: srv}).URL
	path := recordtest.Record(t, "count", connect.Spec{URL: url}, func(ctx context.Context, t testing.TB, s *session.Session) {
		recordtest.Tool(ctx, t, s, "count", map[string]any{})
		recordtest.Tool(ctx, t, s, "count", map[string]any{})
	})
	m := mock.New(load(t, path), mock.Options{NoWait: true})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx(t), serveStdio(t, m), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var got []string
	for range 3 {
		res, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "count", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res.Content[0].(*mcp.TextContent).Text)
	}
	if strings.Join(got, ",") != "1,2,2" {
		t.Errorf("repeats: %v, want 1,2,2", got)
	}
	_, err = cs.ListPrompts(ctx(t), nil)
	if err == nil || !strings.Contains(err.Error(), "Method not found") || !strings.Contains(err.Error(), "has no prompts/list") {
		t.Errorf("a method never recorded: %v", err)
	}
}

// TestTiming: progress comes with its recorded spacing, scaled by Speed;
// a client that cancels gets no answer and the server goes on.
func TestTiming(t *testing.T) {
	path := recordings(t)["http-legacy"]
	elapsed := func(o mock.Options) time.Duration {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx(t),
			&mcp.StreamableClientTransport{Endpoint: serveHTTP(t, mock.New(load(t, path), o)), MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		p := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 0.3, "steps": 3}}
		p.SetProgressToken(1)
		start := time.Now()
		if _, err := cs.CallTool(ctx(t), p); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	paced := elapsed(mock.Options{})
	if paced < 250*time.Millisecond {
		t.Errorf("at the recorded pace slow (0.3s) took %v", paced)
	}
	// Against the paced run, not a fixed bound: both carry the same
	// round trip, which a loaded machine can stretch past any fixed figure.
	if d := elapsed(mock.Options{NoWait: true}); d > paced-200*time.Millisecond {
		t.Errorf("without waiting slow took %v, at the recorded pace %v", d, paced)
	}
	// Cancelled: the call ends at once for the client; the server is fine.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx(t),
		serveStdio(t, mock.New(load(t, path), mock.Options{Speed: 0.1})), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cctx, cancel := context.WithTimeout(ctx(t), 200*time.Millisecond)
	defer cancel()
	if _, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 0.3, "steps": 3}}); err == nil {
		t.Error("slow at a tenth of the pace answered within 200ms")
	}
	if _, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}}); err != nil {
		t.Errorf("after a cancel: %v", err)
	}
}

// TestModernRecording: a recording of the stateless protocol is served
// statelessly to mcpscope's own client (server/discover as recorded), and
// to a 2025 client.
func TestModernRecording(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	url := testservers.StartHTTP(t, testservers.HTTPOpts{Stateless: true})
	path := recordtest.Record(t, "modern", connect.Spec{URL: url}, func(ctx context.Context, t testing.TB, s *session.Session) {
		if s.Info().Era != protocol.EraModern {
			t.Fatalf("era %s", s.Info().Era)
		}
		recordtest.Lists(ctx, t, s)
		recordtest.Tool(ctx, t, s, "echo", map[string]any{"message": "hello"})
	})
	rec := load(t, path)
	if rec.Era != protocol.EraModern || rec.Init != nil || rec.Discover == nil {
		t.Fatalf("recording: era %s, init %v, discover %v", rec.Era, rec.Init != nil, rec.Discover != nil)
	}
	endpoint := serveHTTP(t, mock.New(rec, mock.Options{NoWait: true}))
	replayed := recordtest.Record(t, "replayed", connect.Spec{URL: endpoint}, func(ctx context.Context, t testing.TB, s *session.Session) {
		if s.Info().Era != protocol.EraModern {
			t.Errorf("served era %s", s.Info().Era)
		}
		res, err := recordtest.Tool(ctx, t, s, "echo", map[string]any{"message": "hello"})
		if err != nil || !bytes.Contains(res, []byte(`"hello"`)) {
			t.Errorf("echo: %s %v", res, err)
		}
	})
	j, _ := os.ReadFile(replayed)
	if bytes.Contains(j, []byte("Mcp-Session-Id")) {
		t.Error("a stateless recording was served with a session")
	}
	// A client of the initialize era: its initialize is answered from the
	// recorded server/discover, without a session.
	recordtest.Record(t, "legacy-client", connect.Spec{URL: endpoint, Era: protocol.EraLegacy}, func(ctx context.Context, t testing.TB, s *session.Session) {
		in := s.Info()
		if in.ProtocolVersion >= protocol.ModernVersion || in.ProtocolVersion == "" || in.ServerInfo.Name != "mcpscope-everything" || in.SessionID != "" {
			t.Errorf("a 2025 client was told %+v", in)
		}
		res, err := recordtest.Tool(ctx, t, s, "echo", map[string]any{"message": "hello"})
		if err != nil || !bytes.Contains(res, []byte(`"hello"`)) {
			t.Errorf("echo: %s %v", res, err)
		}
	})
	// The Go SDK's client (it probes with server/discover too).
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx(t),
		&mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("the Go SDK client: %v", err)
	}
	defer cs.Close()
	if tools, err := cs.ListTools(ctx(t), nil); err != nil || len(tools.Tools) == 0 {
		t.Errorf("tools/list: %v", err)
	}
}

// TestServerRequests: a call during which the recorded server asked the
// client something (elicitation) is replayed with the question; the
// answer is waited for, then the recorded result comes.
func TestServerRequests(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	url := testservers.StartHTTP(t, testservers.HTTPOpts{})
	answer := json.RawMessage(`{"action":"accept","content":{"name":"Ada","age":36,"colour":"green"}}`)
	path := recordtest.Record(t, "ask", connect.Spec{URL: url, Era: "legacy", Answers: map[string]json.RawMessage{"elicitation/create": answer}},
		func(ctx context.Context, t testing.TB, s *session.Session) {
			if _, err := recordtest.Tool(ctx, t, s, "ask", map[string]any{"message": "who?"}); err != nil {
				t.Fatal(err)
			}
		})
	var asked sync.WaitGroup
	asked.Add(1)
	var once sync.Once
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			once.Do(asked.Done)
			time.Sleep(100 * time.Millisecond)
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
	cs, err := client.Connect(ctx(t), &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, mock.New(load(t, path), mock.Options{})), MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"message": "who?"}})
	if err != nil {
		t.Fatal(err)
	}
	asked.Wait()
	if got := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(got, "Ada") {
		t.Errorf("the recorded answer (the recorded client accepted as Ada): %q", got)
	}
}

// A tool called with other arguments than recorded is answered with the
// recording, and the answer says so in its _meta, as the warning does;
// with Strict it is refused with an error naming the recording.
func TestOtherArguments(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	srv := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "greet", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello Ada"}}}, nil, nil
		})
	url := testservers.StartHTTPServer(t, testservers.HTTPOpts{Server: srv}).URL
	path := recordtest.Record(t, "greet", connect.Spec{URL: url}, func(ctx context.Context, t testing.TB, s *session.Session) {
		recordtest.Tool(ctx, t, s, "greet", map[string]any{"name": "Ada"})
	})
	for _, strict := range []bool{false, true} {
		var warn bytes.Buffer
		m := mock.New(load(t, path), mock.Options{NoWait: true, Strict: strict, Warn: &warn})
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx(t), serveStdio(t, m), nil)
		if err != nil {
			t.Fatal(err)
		}
		same, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "Ada"}})
		if err != nil || same.Meta[mock.MetaMatch] != nil {
			t.Errorf("strict %v: the recorded arguments: %v, _meta %v", strict, err, same.GetMeta())
		}
		res, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "Bob"}})
		cs.Close()
		if strict {
			if err == nil || !strings.Contains(err.Error(), "--strict") || !strings.Contains(err.Error(), "only with other params") {
				t.Errorf("strict: other arguments answered: %v %v", res, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("other arguments: %v", err)
		}
		note, _ := res.Meta[mock.MetaMatch].(map[string]any)
		if note["match"] != mock.ByName || !strings.Contains(fmt.Sprint(note["recordedParams"]), "Ada") {
			t.Errorf("the answer's _meta does not say it is the recording of other arguments: %v", res.GetMeta())
		}
		if res.Content[0].(*mcp.TextContent).Text != "hello Ada" {
			t.Errorf("the recorded answer changed: %v", res.Content)
		}
		if w := warn.String(); !strings.Contains(w, "tools/call greet was called with other params than recorded") || !strings.Contains(w, "--strict") {
			t.Errorf("no warning: %q", w)
		}
	}
}

// A recording of a 2025 server that refused the era probe as
// server-everything does (HTTP 400, "id":null in the body), served over
// stdio: the refusal is answered as the probe's own error, under the
// probe's id, so the Go SDK client (which probes first) goes on to
// initialize. (Before: the id-null error was replayed as it was, and the
// client failed with "invalid request".)
func TestProbeRefusalCarriesTheProbeID(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	s := testservers.StartScripted(t, func(w http.ResponseWriter, r *http.Request, id json.RawMessage, method string) {
		w.Header().Set("Content-Type", "application/json")
		if method == "server/discover" {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Server not initialized"}}`)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	path := recordtest.Record(t, "refused", connect.Spec{Journal: filepath.Join(t.TempDir(), "j.jsonl"), URL: s.URL}, func(ctx context.Context, t testing.TB, s *session.Session) {
		if _, err := recordtest.Call(ctx, t, s, "tools/list", map[string]any{}); err != nil {
			t.Fatal(err)
		}
	})
	srv := mock.New(load(t, path), mock.Options{NoWait: true})
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx(t), serveStdio(t, srv), nil)
	if err != nil {
		t.Fatalf("the Go SDK client over stdio: %v", err)
	}
	defer cs.Close()
	if tools, err := cs.ListTools(ctx(t), nil); err != nil || len(tools.Tools) != 1 {
		t.Fatalf("tools/list: %v %v", tools, err)
	}
}
