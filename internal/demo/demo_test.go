package demo

//lint:file-ignore SA1019 the demo exercises logging and sampling on purpose: an inspector must show them while servers still use them (deprecated by SEP-2577 in 2026-07-28, functional through the deprecation window)

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// wait is the upper bound for anything a test waits on; reaching it is a
// failure, never a synchronisation point.
const wait = 2 * time.Minute

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// The two protocol eras the demo serves over one connection: the SDK client
// speaks 2026-07-28 (server/discover, per-request _meta) unless told
// otherwise.
const (
	legacy = "2025-11-25"
	modern = "2026-07-28"
)

func forEachEra(t *testing.T, f func(t *testing.T, era string)) {
	for _, era := range []string{legacy, modern} {
		t.Run(era, func(t *testing.T) { f(t, era) })
	}
}

// connect joins a new SDK client to d over in-memory transports, speaking
// era (modern when empty).
func connect(t *testing.T, d *Demo, copts *mcp.ClientOptions, era ...string) *mcp.ClientSession {
	t.Helper()
	ctx := testCtx(t)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := d.Server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sopts *mcp.ClientSessionOptions
	if len(era) > 0 {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: era[0]}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "demo-test", Version: "0"}, copts).Connect(ctx, ct, sopts)
	if err != nil {
		t.Fatal(err)
	}
	if len(era) > 0 && cs.InitializeResult().ProtocolVersion != era[0] {
		t.Fatalf("negotiated %s, want %s", cs.InitializeResult().ProtocolVersion, era[0])
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// setLevel lets log messages at level and above through: logging/setLevel
// before 2026-07-28, the request's _meta after (returned for callMeta).
func setLevel(t *testing.T, cs *mcp.ClientSession, era string, level mcp.LoggingLevel) mcp.Meta {
	t.Helper()
	if era == modern {
		return mcp.Meta{mcp.MetaKeyLogLevel: level}
	}
	if err := cs.SetLoggingLevel(testCtx(t), &mcp.SetLoggingLevelParams{Level: level}); err != nil {
		t.Fatal(err)
	}
	return nil
}

func callMeta(t *testing.T, cs *mcp.ClientSession, meta mcp.Meta, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Meta: maps.Clone(meta), Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func newDemo(t *testing.T, opts Options) *Demo {
	d := New(opts)
	t.Cleanup(d.Close)
	return d
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func TestListsAndReads(t *testing.T) {
	cs := connect(t, newDemo(t, Options{}), nil)
	ctx := testCtx(t)

	ir := cs.InitializeResult()
	if ir.ServerInfo.Name != DefaultName || ir.ServerInfo.Version != DefaultVersion {
		t.Errorf("server info %+v", ir.ServerInfo)
	}
	c := ir.Capabilities
	if c.Logging == nil || c.Tools == nil || !c.Tools.ListChanged || c.Resources == nil || !c.Resources.ListChanged ||
		!c.Resources.Subscribe || c.Prompts == nil || !c.Prompts.ListChanged || c.Completions == nil {
		t.Errorf("capabilities %+v", c)
	}
	if ir.Instructions == "" {
		t.Error("no instructions")
	}

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.Title == "" {
			t.Errorf("tool %s lacks a title or description", tool.Name)
		}
	}
	want := []string{"ask", "big", "burst", "echo", "fail", "log", "sample", "slow", "toggle-extra"}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	// Defaults are in the schema, where an inspector's form can show them.
	for _, tool := range tools.Tools {
		if tool.Name == "slow" {
			b, _ := json.Marshal(tool.InputSchema)
			var s struct {
				Properties map[string]struct{ Default any }
			}
			if json.Unmarshal(b, &s) != nil || s.Properties["seconds"].Default != 10.0 || s.Properties["steps"].Default != 10.0 {
				t.Errorf("slow schema: %s", b)
			}
		}
	}

	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	slices.Sort(uris)
	if want := []string{clockURI, configURI, pixelURI, readmeURI}; !slices.Equal(uris, want) {
		t.Errorf("resources %v, want %v", uris, want)
	}
	tpls, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tpls.ResourceTemplates) != 1 || tpls.ResourceTemplates[0].URITemplate != itemsURITpl {
		t.Errorf("templates %v %v", tpls, err)
	}

	read := func(uri string) *mcp.ResourceContents {
		t.Helper()
		r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(r.Contents) != 1 {
			t.Fatalf("read %s: %v %v", uri, r, err)
		}
		return r.Contents[0]
	}
	if rc := read(readmeURI); !strings.Contains(rc.Text, "toggle-extra") || rc.MIMEType != "text/markdown" {
		t.Errorf("readme: %+v", rc)
	}
	var cfg map[string]any
	if rc := read(configURI); json.Unmarshal([]byte(rc.Text), &cfg) != nil || cfg["server"] != DefaultName {
		t.Errorf("config.json: %q", rc.Text)
	}
	if rc := read(pixelURI); rc.MIMEType != "image/png" {
		t.Errorf("png mime %q", rc.MIMEType)
	} else if _, err := png.Decode(bytes.NewReader(rc.Blob)); err != nil {
		t.Errorf("png: %v", err)
	}
	var item map[string]any
	if rc := read("demo://items/42"); json.Unmarshal([]byte(rc.Text), &item) != nil || item["id"] != "42" {
		t.Errorf("item: %q", rc.Text)
	}
	if _, err := time.Parse(time.RFC3339Nano, read(clockURI).Text); err != nil {
		t.Errorf("clock: %v", err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://nope"}); err == nil {
		t.Error("reading an unknown resource succeeded")
	}

	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) != 2 {
		t.Fatalf("prompts %v %v", prompts, err)
	}
	gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greeting", Arguments: map[string]string{"name": "Ada", "style": "pirate"}})
	if err != nil || !strings.Contains(gp.Messages[0].Content.(*mcp.TextContent).Text, "Ada in a pirate style") {
		t.Errorf("greeting: %v %v", gp, err)
	}
	tour, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "tour"})
	if err != nil || len(tour.Messages) != 2 {
		t.Fatalf("tour: %v %v", tour, err)
	}
	if er, ok := tour.Messages[1].Content.(*mcp.EmbeddedResource); !ok || er.Resource.URI != readmeURI {
		t.Errorf("tour embeds %#v", tour.Messages[1].Content)
	}

	comp, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "greeting"},
		Argument: mcp.CompleteParamsArgument{Name: "style", Value: "p"},
	})
	if err != nil || !slices.Equal(comp.Completion.Values, []string{"pirate"}) {
		t.Errorf("complete: %v %v", comp, err)
	}
}

func TestEchoFailBig(t *testing.T) {
	cs := connect(t, newDemo(t, Options{}), nil)

	res := call(t, cs, "echo", map[string]any{"message": "hi there"})
	if res.IsError || resultText(res) != "hi there" {
		t.Errorf("echo: %+v", res)
	}
	if b, _ := json.Marshal(res.StructuredContent); string(b) != `{"length":8,"message":"hi there"}` {
		t.Errorf("echo structured: %s", b)
	}

	res = call(t, cs, "fail", nil)
	if !res.IsError || !strings.Contains(resultText(res), "on purpose") {
		t.Errorf("fail: %+v", res)
	}

	res = call(t, cs, "big", map[string]any{"megabytes": 1.5})
	if got := resultText(res); len(got) != 3<<19 || !strings.HasPrefix(got, "line 00000001 ....") {
		t.Errorf("big: %d bytes, starts %.20q", len(got), got)
	}
	res = call(t, cs, "big", map[string]any{"megabytes": 300})
	if !res.IsError {
		t.Error("big above the limit did not fail")
	}
}

// go-sdk v1.8.0 panics (and a stdio server dies) applying schema defaults to
// "arguments": null; the demo treats it as absent.
func TestNullArguments(t *testing.T) {
	cs := connect(t, newDemo(t, Options{}), nil)
	res := call(t, cs, "log", map[string]any(nil)) // marshals as null
	if res.IsError || !strings.Contains(resultText(res), "of 1 info") {
		t.Fatalf("log with null arguments: %q", resultText(res))
	}
	if res = call(t, cs, "fail", nil); !strings.Contains(resultText(res), "on purpose") {
		t.Errorf("fail with null arguments: %q", resultText(res))
	}
}

func TestBigText(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 1000, 1 << 20} {
		s := bigText(n)
		if len(s) != n {
			t.Fatalf("bigText(%d) has %d bytes", n, len(s))
		}
		if n >= 128 && (s[63] != '\n' || s[127] != '\n' || !strings.HasPrefix(s[64:], "line 00000002 ")) {
			t.Fatalf("bigText lines are not 64 bytes: %q", s[:128])
		}
	}
}

// progressRecorder collects the progress notifications a client receives.
type progressRecorder struct {
	mu   sync.Mutex
	got  []*mcp.ProgressNotificationParams
	each chan struct{}
}

func newProgressRecorder() *progressRecorder {
	return &progressRecorder{each: make(chan struct{}, 1<<16)}
}

func (p *progressRecorder) handler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	p.got = append(p.got, req.Params)
	p.mu.Unlock()
	p.each <- struct{}{}
}

func (p *progressRecorder) waitN(t *testing.T, n int) []*mcp.ProgressNotificationParams {
	t.Helper()
	for range n {
		waitFor(t, p.each, "a progress notification")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.got)
}

func TestSlowProgress(t *testing.T) {
	rec := newProgressRecorder()
	cs := connect(t, newDemo(t, Options{}), &mcp.ClientOptions{ProgressNotificationHandler: rec.handler})
	p := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 0.05, "steps": 5}}
	p.SetProgressToken("tok-1")
	res, err := cs.CallTool(testCtx(t), p)
	if err != nil || res.IsError || !strings.Contains(resultText(res), "finished 5 steps") {
		t.Fatalf("slow: %v %v", res, err)
	}
	got := rec.waitN(t, 5)
	for i, n := range got {
		if n.ProgressToken != "tok-1" || n.Progress != float64(i+1) || n.Total != 5 || n.Message != "step "+string(rune('1'+i))+"/5" {
			t.Errorf("progress %d: %+v", i, n)
		}
	}

	// Without a token: no progress at all, and the result says why.
	res = call(t, cs, "slow", map[string]any{"seconds": 0, "steps": 3})
	if !strings.Contains(resultText(res), "no progressToken") {
		t.Errorf("slow without token: %q", resultText(res))
	}
	res = call(t, cs, "slow", map[string]any{"steps": 0})
	if !res.IsError {
		t.Error("steps 0 was accepted")
	}
}

// TestSlowCancel proves the handler itself stops when the client cancels,
// not just that the client stops waiting.
func TestSlowCancel(t *testing.T) {
	forEachEra(t, func(t *testing.T, era string) {
		d := newDemo(t, Options{})
		returned := make(chan error, 1)
		d.Server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				res, err := next(ctx, method, req)
				if method == "tools/call" {
					if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
						err = errors.New(resultText(r))
					}
					returned <- err
				}
				return res, err
			}
		})
		rec := newProgressRecorder()
		cs := connect(t, d, &mcp.ClientOptions{ProgressNotificationHandler: rec.handler}, era)

		ctx, cancel := context.WithCancel(testCtx(t))
		p := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 600, "steps": 6000}}
		p.SetProgressToken(7)
		callErr := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ctx, p)
			callErr <- err
		}()
		rec.waitN(t, 1)
		cancel()
		if err := waitFor(t, callErr, "CallTool to return"); !errors.Is(err, context.Canceled) {
			t.Errorf("client: %v", err)
		}
		if err := waitFor(t, returned, "the slow handler to return"); err == nil || !strings.Contains(err.Error(), "stopped after") {
			t.Errorf("handler: %v", err)
		}
		// The session is still usable.
		if res := call(t, cs, "echo", map[string]any{"message": "still here"}); resultText(res) != "still here" {
			t.Errorf("echo after cancel: %+v", res)
		}
	})
}

func TestAsk(t *testing.T) {
	forEachEra(t, func(t *testing.T, era string) {
		var answer atomic.Value
		var asked atomic.Pointer[mcp.ElicitParams]
		cs := connect(t, newDemo(t, Options{}), &mcp.ClientOptions{
			ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked.Store(req.Params)
				return answer.Load().(*mcp.ElicitResult), nil
			},
		}, era)
		for _, tc := range []struct {
			answer *mcp.ElicitResult
			want   string
		}{
			{&mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "age": 36, "colour": "blue"}}, `accepted and answered {"age":36,"colour":"blue","name":"Ada"}`},
			{&mcp.ElicitResult{Action: "decline"}, "declined"},
			{&mcp.ElicitResult{Action: "cancel"}, "cancelled"},
		} {
			answer.Store(tc.answer)
			res := call(t, cs, "ask", nil)
			if res.IsError || !strings.Contains(resultText(res), tc.want) {
				t.Errorf("ask (%s): %q", tc.answer.Action, resultText(res))
			}
		}
		p := asked.Load()
		b, _ := json.Marshal(p.RequestedSchema)
		if p.Mode != "form" || !strings.Contains(p.Message, "know a little about you") ||
			!strings.Contains(string(b), `"required":["name"]`) || !strings.Contains(string(b), `"enum":["red","green","blue","other"]`) {
			t.Errorf("elicitation request: %+v %s", p, b)
		}

		// A client without the capability gets a clear tool error.
		plain := connect(t, newDemo(t, Options{}), nil, era)
		res := call(t, plain, "ask", nil)
		if !res.IsError || !strings.Contains(resultText(res), "elicitation capability") {
			t.Errorf("ask without elicitation: %+v", res)
		}
	})
}

func TestSample(t *testing.T) {
	forEachEra(t, func(t *testing.T, era string) {
		var prompt atomic.Value
		cs := connect(t, newDemo(t, Options{}), &mcp.ClientOptions{
			CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				prompt.Store(req.Params.Messages[0].Content.(*mcp.TextContent).Text)
				return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &mcp.TextContent{Text: "green terminals hum"}}, nil
			},
		}, era)
		res := call(t, cs, "sample", map[string]any{"prompt": "say something"})
		if res.IsError || !strings.Contains(resultText(res), "green terminals hum") || !strings.Contains(resultText(res), "test-model") {
			t.Errorf("sample: %q", resultText(res))
		}
		if prompt.Load() != "say something" {
			t.Errorf("the model was asked %q", prompt.Load())
		}

		plain := connect(t, newDemo(t, Options{}), nil, era)
		res = call(t, plain, "sample", nil)
		if !res.IsError || !strings.Contains(resultText(res), "sampling capability") {
			t.Errorf("sample without sampling: %+v", res)
		}
	})
}

// logRecorder counts log notifications.
type logRecorder struct {
	n    atomic.Int64
	each chan *mcp.LoggingMessageParams
}

func newLogRecorder() *logRecorder {
	return &logRecorder{each: make(chan *mcp.LoggingMessageParams, 1<<16)}
}

func (l *logRecorder) handler(_ context.Context, req *mcp.LoggingMessageRequest) {
	l.n.Add(1)
	l.each <- req.Params
}

func TestLog(t *testing.T) {
	forEachEra(t, func(t *testing.T, era string) {
		logs := newLogRecorder()
		cs := connect(t, newDemo(t, Options{}), &mcp.ClientOptions{LoggingMessageHandler: logs.handler}, era)

		// Before the client picks a level the SDK sends nothing, and the
		// tool says so and how to fix it.
		res := call(t, cs, "log", nil)
		hint := map[string]string{legacy: "logging/setLevel", modern: mcp.MetaKeyLogLevel}[era]
		if !strings.Contains(resultText(res), "sent 0 of 1") || !strings.Contains(resultText(res), hint) {
			t.Errorf("log before a level: %q", resultText(res))
		}
		meta := setLevel(t, cs, era, "info")
		res = callMeta(t, cs, meta, "log", map[string]any{"level": "warning", "message": "disk", "count": 3})
		if resultText(res) != "log: sent 3 warning messages" {
			t.Errorf("log: %q", resultText(res))
		}
		for i := range 3 {
			m := waitFor(t, logs.each, "a log message")
			if m.Level != "warning" || m.Logger != "demo" || m.Data != "disk ("+string(rune('1'+i))+"/3)" {
				t.Errorf("log message %d: %+v", i, m)
			}
		}
		res = callMeta(t, cs, meta, "log", map[string]any{"level": "debug"})
		if !strings.Contains(resultText(res), "sent 0 of 1 debug") {
			t.Errorf("log below level: %q", resultText(res))
		}
		if res = call(t, cs, "log", map[string]any{"level": "loud"}); !res.IsError {
			t.Error("an unknown level was accepted")
		}
	})
}

func TestBurst(t *testing.T) {
	rec := newProgressRecorder()
	logs := newLogRecorder()
	cs := connect(t, newDemo(t, Options{}), &mcp.ClientOptions{ProgressNotificationHandler: rec.handler, LoggingMessageHandler: logs.handler})

	p := &mcp.CallToolParams{Name: "burst", Arguments: map[string]any{}}
	p.SetProgressToken("b")
	res, err := cs.CallTool(testCtx(t), p)
	if err != nil || !strings.HasPrefix(resultText(res), "burst: sent 1000 progress notifications") {
		t.Fatalf("burst: %v %v", res, err)
	}
	if got := rec.waitN(t, 1000); got[999].Progress != 1000 || got[999].Total != 1000 {
		t.Errorf("last progress %+v", got[999])
	}

	res = call(t, cs, "burst", map[string]any{"kind": "progress"})
	if !res.IsError {
		t.Error("burst progress without a token did not fail")
	}

	meta := setLevel(t, cs, modern, "info")
	res = callMeta(t, cs, meta, "burst", map[string]any{"count": 500}) // auto without a token: log
	if !strings.HasPrefix(resultText(res), "burst: sent 500 log notifications") {
		t.Errorf("burst log: %q", resultText(res))
	}
	for range 500 {
		waitFor(t, logs.each, "a burst log message")
	}
}

func TestToggleExtra(t *testing.T) {
	forEachEra(t, func(t *testing.T, era string) {
		tools, resources, prompts := make(chan struct{}, 10), make(chan struct{}, 10), make(chan struct{}, 10)
		cs := connect(t, newDemo(t, Options{}), &mcp.ClientOptions{
			ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { tools <- struct{}{} },
			ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { resources <- struct{}{} },
			PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { prompts <- struct{}{} },
		}, era)
		ctx := testCtx(t)
		hasExtra := func() bool {
			l, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			return slices.ContainsFunc(l.Tools, func(t *mcp.Tool) bool { return t.Name == extraName })
		}
		for _, on := range []bool{true, false, true} {
			res := call(t, cs, "toggle-extra", nil)
			if want := map[bool]string{true: "added", false: "removed"}[on]; !strings.Contains(resultText(res), want) {
				t.Errorf("toggle-extra: %q", resultText(res))
			}
			waitFor(t, tools, "tools/list_changed")
			waitFor(t, resources, "resources/list_changed")
			waitFor(t, prompts, "prompts/list_changed")
			if hasExtra() != on {
				t.Fatalf("extra tool listed = %v, want %v", !on, on)
			}
		}
		if res := call(t, cs, extraName, nil); resultText(res) != "hello from the extra tool" {
			t.Errorf("extra: %+v", res)
		}
		if r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: extraURI}); err != nil || len(r.Contents) != 1 {
			t.Errorf("extra resource: %v %v", r, err)
		}
	})
}

func TestClockSubscription(t *testing.T) {
	forEachEra(t, func(t *testing.T, era string) {
		d := newDemo(t, Options{ClockInterval: 5 * time.Millisecond})
		started, idle := make(chan struct{}, 10), make(chan struct{}, 10)
		d.clock.onStart = func() { started <- struct{}{} }
		d.clock.onIdle = func() { idle <- struct{}{} }
		updates := make(chan string, 1)
		handler := func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case updates <- req.Params.URI:
			default: // the test has seen enough
			}
		}
		cs := connect(t, d, &mcp.ClientOptions{ResourceUpdatedHandler: handler}, era)
		ctx := testCtx(t)

		// Subscribing to something that never changes does not start it.
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: readmeURI}); err != nil {
			t.Fatal(err)
		}
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: clockURI}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, started, "the ticker to start")
		if uri := waitFor(t, updates, "a clock update"); uri != clockURI {
			t.Errorf("update for %q", uri)
		}
		// 2026-07-28 unsubscribes by cancelling a subscriptions/listen
		// stream, so the server hears of it asynchronously.
		if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: clockURI}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, idle, "the ticker to stop after unsubscribe")
		if d.clock.running() {
			t.Error("clock still ticking after the last unsubscribe")
		}

		// A subscriber that disconnects without unsubscribing stops it too.
		other := connect(t, d, nil, era)
		if err := other.Subscribe(ctx, &mcp.SubscribeParams{URI: clockURI}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, started, "the ticker to start again")
		other.Close()
		waitFor(t, idle, "the ticker to stop after the subscriber left")

		// And so does closing the demo.
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: clockURI}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, started, "the ticker to start once more")
		d.Close()
		waitFor(t, idle, "the ticker to stop on Close")
		if d.clock.running() {
			t.Error("clock running after Close")
		}
	})
}

// serve (ServeStdio's body) returns nil promptly when its context ends, even
// with a long call in flight.
func TestServeStopsOnContext(t *testing.T) {
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- serve(ctx, st, Options{}) }()

	rec := newProgressRecorder()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, &mcp.ClientOptions{ProgressNotificationHandler: rec.handler}).Connect(testCtx(t), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	p := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 600, "steps": 6000}}
	p.SetProgressToken(1)
	go cs.CallTool(testCtx(t), p)
	rec.waitN(t, 1)
	cancel()
	if err := waitFor(t, served, "serve to return"); err != nil {
		t.Errorf("serve: %v", err)
	}
}

func TestServeHTTP(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	urls := make(chan string, 1)
	served := make(chan error, 1)
	go func() {
		served <- ServeHTTP(ctx, "", Options{ClockInterval: 5 * time.Millisecond}, func(u string) { urls <- u })
	}()
	url := waitFor(t, urls, "the server to be ready")
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("url %q", url)
	}

	rec := newProgressRecorder()
	updates := make(chan struct{}, 1)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: rec.handler,
		ResourceUpdatedHandler: func(context.Context, *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case updates <- struct{}{}:
			default:
			}
		},
		// The SDK client spends ~18s retrying a vanished server in Close.
		// The initialize era: sessions, the GET stream (2026-07-28 clients
		// are served statelessly).
	}).Connect(testCtx(t), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if cs.ID() == "" {
		t.Error("no session id: the handler should be stateful")
	}
	p := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 0.02, "steps": 2}}
	p.SetProgressToken("h")
	if res, err := cs.CallTool(testCtx(t), p); err != nil || res.IsError {
		t.Fatalf("slow over HTTP: %v %v", res, err)
	}
	rec.waitN(t, 2)
	// Resource updates travel on the standalone GET stream.
	if err := cs.Subscribe(testCtx(t), &mcp.SubscribeParams{URI: clockURI}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, updates, "a clock update over HTTP")

	// Shut down with a call in flight and the GET stream open.
	p = &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 600, "steps": 6000}}
	p.SetProgressToken("h2")
	go cs.CallTool(testCtx(t), p)
	rec.waitN(t, 1)
	cancel()
	if err := waitFor(t, served, "ServeHTTP to return"); err != nil {
		t.Errorf("ServeHTTP: %v", err)
	}
}
