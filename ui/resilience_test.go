package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/statestore/redisstore"
	"mcpscope/testkit/redistest"
	"mcpscope/testkit/testservers"
	"mcpscope/themes"
	"mcpscope/transport"
	"mcpscope/ui/detail"
)

// waitStore re-checks cond on every store change (progress, results,
// events), refreshing the model, until it holds or 30s pass.
func waitStoreFor(t *testing.T, m *Model, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		ch := m.s.Store().Changed()
		refresh(m)
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("%s did not happen within 30s:\n%s", what, screen(m))
		}
	}
}

// Detach a running HTTP call, find it in the detached-calls view with its
// rejoin command, and rejoin it in the same session: it comes back in the
// requests pane and finishes there.
func TestDetachAndRejoinHere(t *testing.T) {
	srv := testservers.StartHTTPServer(t, testservers.HTTPOpts{EventStore: true})
	store := &statestore.FileStore{Dir: t.TempDir()}
	s := session.New(transport.NewHTTP(transport.HTTPOptions{URL: srv.URL}), session.Options{Timeout: -1, MaxTimeout: -1,
		StateStore: store, Rejoin: session.RejoinInfo{Target: srv.URL}})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := s.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	var clip []string
	m := New(Options{Session: s, Theme: themes.ByName("dark"), StateStore: store, Target: []string{srv.URL},
		Clipboard: func(x string) error { clip = append(clip, x); return nil }})
	m.Update(windowSize(120, 30))

	c := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 4, "steps": 4}})
	waitStoreFor(t, m, "first progress", func() bool { return c.Snapshot().Progress.Updates > 0 })
	press(m, "follow", "detach-call")
	if st := c.Snapshot().State; st != session.StateDetached {
		t.Fatalf("state %s after detach:\n%s", st, screen(m))
	}
	if sc := screen(m); !strings.Contains(sc, "detached") || !strings.Contains(sc, "mcpscope rejoin") {
		t.Fatalf("detach not shown:\n%s", sc)
	}
	list, err := store.List()
	if err != nil || len(list) != 1 || list[0].Owner != nil {
		t.Fatalf("store after detach: %+v %v", list, err)
	}
	h := list[0].Handle

	press(m, "rejoinable")
	if sc := screen(m); !strings.Contains(sc, h) || !strings.Contains(sc, "r rejoins it in this session") {
		t.Fatalf("detached-calls view:\n%s", sc)
	}
	press(m, "copy")
	if len(clip) != 1 || clip[0] != "mcpscope rejoin "+h {
		t.Fatalf("copied %q", clip)
	}
	press(m, "rejoin-here")
	if m.top() != nil || !strings.Contains(screen(m), "rejoined "+h+" as call "+c.Key) {
		t.Fatalf("rejoin here:\n%s", screen(m))
	}
	calls := s.Calls()
	again := calls[len(calls)-1]
	if again == c || again.Key != c.Key {
		t.Fatalf("rejoin registered %s, want a new call with key %s", again.Key, c.Key)
	}
	waitStoreFor(t, m, "the rejoined call's result", func() bool { return again.Snapshot().State == session.StateOK })
	if !strings.Contains(screen(m), "4/4") {
		t.Fatalf("rejoined call's progress not shown:\n%s", screen(m))
	}
	waitStoreFor(t, m, "the record's removal", func() bool { l, _ := store.List(); return len(l) == 0 })
}

// A call that cannot be rejoined later says why; records of other
// servers or sessions offer only the command.
func TestDetachRefusedAndForeignRecord(t *testing.T) {
	store := &statestore.FileStore{Dir: t.TempDir()}
	s, f := liveSession(t, nil)
	m := New(Options{Session: s, Theme: themes.ByName("dark"), StateStore: store, Now: func() time.Time { return at(5) },
		Location: time.UTC, Target: []string{"http://localhost:1/mcp"}, Clipboard: func(string) error { return nil }})
	m.Update(windowSize(100, 30))
	s.Call("tools/call", map[string]any{"name": "slow"})
	f.sentWith(t, "slow")
	refresh(m)
	press(m, "detach-call")
	if !strings.Contains(screen(m), "detach: this session keeps no call state") {
		t.Fatalf("refused detach not explained:\n%s", screen(m))
	}
	press(m, "rejoinable")
	if !strings.Contains(screen(m), "no calls are left running") {
		t.Fatalf("empty view:\n%s", screen(m))
	}
	d := statestore.Detached{Handle: "20260301T120000-99999-7", Target: "http://other.example/mcp", Transport: "http",
		SessionID: "abc\x1b]52;c;eA==\x07", ProtocolVersion: "2025-11-25", Era: "legacy", RequestID: json.RawMessage("7"),
		Method: "tools/call", Name: "slow", Started: at(1), LastEventIDs: map[string]string{"post:7": "e1"},
		Progress: statestore.Progress{Value: 3, Total: 10, Updates: 3}}
	if err := store.Put(d); err != nil {
		t.Fatal(err)
	}
	press(m, "rejoin-refresh")
	got := screen(m)
	assertInert(t, m.Render())
	if !strings.Contains(got, "not here: made against another server") || !strings.Contains(got, "3/10") {
		t.Fatalf("foreign record:\n%s", got)
	}
	golden(t, "rejoinable-100x30", got)
	press(m, "rejoin-here")
	if !strings.Contains(screen(m), "cannot rejoin here") || len(s.Calls()) != 1 {
		t.Fatalf("foreign record rejoined:\n%s", screen(m))
	}
	press(m, "rejoin-forget")
	if l, _ := store.List(); len(l) != 0 {
		t.Fatalf("forget left %d records", len(l))
	}
}

// ctrl+r with nothing pending says so; resume events are legible in the
// notifications pane, naming the call whose stream they concern.
func TestReconnectNowAndResumeEvents(t *testing.T) {
	s, _ := liveSession(t, nil)
	m := newTestModel(t, s, 120, 24)
	press(m, "reconnect")
	if !strings.Contains(screen(m), "no stream is waiting to reconnect") {
		t.Fatalf("reconnect flash:\n%s", screen(m))
	}
	ev := func(sec float64, mt transport.Meta) {
		s.Ingest(transport.Frame{Time: at(sec), Dir: transport.Local, Kind: transport.Event, Meta: mt})
	}
	ev(1, transport.Meta{Event: transport.EvStreamDropped, Stream: "post:3", Detail: "read: connection reset"})
	ev(1.1, transport.Meta{Event: transport.EvResumeAttempt, Stream: "post:3", Detail: `stream-dropped: reconnect attempt 1/5 in 1s (backoff), Last-Event-ID "e7"`})
	ev(2.1, transport.Meta{Event: transport.EvStreamResumed, Stream: "post:3", Status: 200})
	refresh(m)
	press(m, "focus-next")
	got := screen(m)
	for _, want := range []string{"stream-dropped stream of call 3 — read: connection reset",
		`resume-attempt (ctrl+r: now) stream of call 3 — stream-dropped: reconnect attempt 1/5 in 1s`,
		"stream-resumed stream of call 3 HTTP 200"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}

// The era decision shows in the status bar (short) and in help (full).
func TestEraInStatusBarAndHelp(t *testing.T) {
	s, _ := liveSession(t, nil)
	s.Adopt(session.EraVerdict{Era: protocol.EraLegacy, Reason: "server/discover got HTTP 404 (the server predates 2026)"})
	m := newTestModel(t, s, 120, 30)
	refresh(m)
	got := screen(m)
	if !strings.Contains(got, "(legacy: server/discover got HTTP 404)") || !strings.Contains(got, "era: legacy (server/discover got HTTP 404") {
		t.Fatalf("era not shown:\n%s", got)
	}
	press(m, "help")
	if !strings.Contains(screen(m), "why      server/discover got HTTP 404 (the server predates 2026)") {
		t.Fatalf("help lacks the full reason:\n%s", screen(m))
	}
}

// loadTools fills the catalog's tools and declares only tools, so opening
// the catalog sends nothing.
func loadTools(m *Model, result string) {
	loadPage(m, 0, result)
	for sec, capability := range []string{1: "resources", 2: "resources", 3: "prompts"} {
		if sec > 0 {
			m.catalog.Absent(sec, "the server did not declare "+capability)
		}
	}
}

// A tool that supports tasks runs as one from the form; the tasks view
// lists it, follows its status and gets, fetches and cancels it.
func TestTasksFromFormAndView(t *testing.T) {
	s, f := liveSession(t, nil)
	m := newTestModel(t, s, 100, 30)
	loadTools(m, `{"tools":[{"name":"crunch","execution":{"taskSupport":"optional"},"inputSchema":{"type":"object","properties":{"n":{"type":"integer","default":3}}}},
		{"name":"batch","execution":{"taskSupport":"required"}},{"name":"echo"}]}`)
	press(m, "catalog", "open")
	if !strings.Contains(screen(m), "run as task:  yes [no] (ctrl+t) · timeout: session default (ctrl+o)") {
		t.Fatalf("task toggle not offered:\n%s", screen(m))
	}
	press(m, "form-timeout", "form-timeout")
	if !strings.Contains(screen(m), "timeout: 1m") {
		t.Fatalf("timeout preset:\n%s", screen(m))
	}
	press(m, "form-task")
	if !strings.Contains(screen(m), "run as task: [yes] no") {
		t.Fatalf("task toggle:\n%s", screen(m))
	}
	press(m, "form-submit")
	sent := f.sentWith(t, `"name":"crunch"`)
	if !strings.Contains(sent, `"task":{}`) || !strings.Contains(sent, `"arguments":{"n":3}`) {
		t.Fatalf("not sent as a task: %s", sent)
	}
	call := s.Calls()[0]
	f.inject(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"task":{"taskId":"task-1","status":"working","statusMessage":"crunching \u001b[2J","createdAt":"2026-03-01T12:00:01Z","pollInterval":500}}}`, call.Key))
	refresh(m)

	press(m, "detail-close", "tasks") // the call landed on its detail
	got := screen(m)
	if !strings.Contains(got, "task-1") || !strings.Contains(got, "working") || !strings.Contains(got, "#"+call.Key) || !strings.Contains(got, "0.5s") {
		t.Fatalf("tasks view:\n%s", got)
	}
	assertInert(t, m.Render())
	golden(t, "tasks-100x30", got)

	press(m, "task-get")
	get := f.sentWith(t, `"method":"tasks/get"`)
	if !strings.Contains(get, `"taskId":"task-1"`) {
		t.Fatalf("tasks/get: %s", get)
	}
	f.inject(`{"jsonrpc":"2.0","id":2,"result":{"taskId":"task-1","status":"input_required","createdAt":"2026-03-01T12:00:01Z"}}`)
	refresh(m)
	if !strings.Contains(screen(m), "input_required") {
		t.Fatalf("tasks view not refreshed on a store change:\n%s", screen(m))
	}
	press(m, "task-cancel")
	f.sentWith(t, `"method":"tasks/cancel"`)
	press(m, "task-result")
	f.sentWith(t, `"method":"tasks/result"`)
	d, ok := topView[*detail.View](m)
	if !ok || d.Call().Method != "tasks/result" || !strings.Contains(screen(m), "(waiting for the response)") {
		t.Fatalf("tasks/result not opened in the detail view:\n%s", screen(m))
	}
	press(m, "detail-close", "tasks-close", "catalog", "down", "open")
	if !strings.Contains(screen(m), "run as task: yes (the tool requires it)") {
		t.Fatalf("required task support not forced:\n%s", screen(m))
	}
	press(m, "form-task")
	if !strings.Contains(screen(m), "this tool only runs as a task") {
		t.Fatalf("required toggle:\n%s", screen(m))
	}
	press(m, "form-submit")
	if !strings.Contains(f.sentWith(t, `"name":"batch"`), `"task":{}`) {
		t.Fatal("required task support not sent as a task")
	}
	press(m, "detail-close", "catalog", "down", "down", "open", "form-task")
	if !strings.Contains(screen(m), "this tool does not run as a task") || strings.Contains(screen(m), "run as task") {
		t.Fatalf("task toggle offered for a tool without task support:\n%s", screen(m))
	}
}

// An input_required round and its retry are linked in the rows, the
// prompt says it is an MRTR round, and the detail lists the input requests.
func TestMRTRRoundsLinked(t *testing.T) {
	r := NewResponder(nil, true)
	m, s, f := newLive(t, r)
	m.Update(windowSize(120, 30))
	m.resp = r
	s.Call("tools/call", map[string]any{"name": "ask"})
	f.sentWith(t, `"name":"ask"`)
	f.inject(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"st8","inputRequests":{"who":{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}}}}`)
	m.Update(waitPrompt(r)())
	if !strings.Contains(screen(m), "The server asks (elicitation) (MRTR round 1 of call 1") {
		t.Fatalf("MRTR prompt title:\n%s", screen(m))
	}
	typeText(m, "Ada")
	press(m, "form-submit")
	retry := f.sentWith(t, `"inputResponses"`)
	if !strings.Contains(retry, `"id":2`) || !strings.Contains(retry, `"name":"Ada"`) {
		t.Fatalf("retry %s", retry)
	}
	f.inject(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hello Ada"}]}}`)
	waitStoreFor(t, m, "the retry's row", func() bool {
		sc := screen(m)
		return strings.Contains(sc, "↳ round 2 of #1") && strings.Contains(sc, "answered → round 2 is #2")
	})
	if !strings.Contains(screen(m), "input") {
		t.Fatalf("input_required round's status:\n%s", screen(m))
	}
	press(m, "top", "open", "tab-next")
	got := screen(m)
	for _, want := range []string{"input_required (MRTR round 1): the server asks for 1 input(s):", `who: elicitation/create {"message":"Name?"`,
		"requestState: 5 B", "answered → round 2 is #2"} {
		if !strings.Contains(got, want) {
			t.Errorf("detail lacks %q:\n%s", want, got)
		}
	}
	press(m, "detail-close", "down", "open")
	if !strings.Contains(screen(m), "MRTR round 2 of #1 (retries #1)") {
		t.Fatalf("retry's detail title:\n%s", screen(m))
	}
}

// The era probe's error answer (a 2025 server's -32601 or 400 to
// server/discover) is the era's answer, shown as such, not as a red error.
func TestProbeErrorIsNoFailure(t *testing.T) {
	m, s, f := newLive(t, nil)
	done := make(chan session.EraVerdict, 1)
	go func() {
		v, _ := s.Probe(context.Background(), 5*time.Second)
		done <- v
	}()
	f.sentWith(t, `"server/discover"`)
	f.inject(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`)
	if v := <-done; v.Era != protocol.EraLegacy || !v.Answered {
		t.Fatalf("verdict %+v", v)
	}
	refresh(m)
	row := selectedOrAny(screen(m), "server/discover")
	if !regexp.MustCompile(`server/discover\s+legacy`).MatchString(row) {
		t.Fatalf("the probe's row should say legacy, not error: %q", row)
	}
	c := s.Call("tools/list", nil)
	f.sentWith(t, `"tools/list"`)
	f.inject(`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}`)
	<-c.Done()
	refresh(m)
	if row := selectedOrAny(screen(m), "tools/list"); !regexp.MustCompile(`tools/list\s+error`).MatchString(row) {
		t.Fatalf("an ordinary call's error is still an error: %q", row)
	}
}

// selectedOrAny is the first screen line holding what.
func selectedOrAny(screen, what string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, what) {
			return l
		}
	}
	return ""
}

// The status bar names the state store when it is not the default, and
// the D view shows who holds each call.
func TestStatusBarNamesRedisStoreAndDViewShowsLeases(t *testing.T) {
	srv := redistest.Start(t)
	store, err := redisstore.Open(redisstore.Options{URL: srv.URL(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	s, _ := liveSession(t, nil)
	m := New(Options{Session: s, Theme: themes.ByName("dark"), StateStore: store, Now: func() time.Time { return at(5) },
		Location: time.UTC, Target: []string{"http://localhost:1/mcp"}, Clipboard: func(string) error { return nil }})
	m.Update(windowSize(160, 30))
	sc := screen(m)
	if !strings.Contains(sc, "state Redis redis://127.0.0.1") {
		t.Fatalf("status bar:\n%s", sc)
	}
	me := statestore.Me()
	for _, d := range []statestore.Detached{
		{Handle: "held-1", Target: "http://other.example/mcp", Method: "tools/call", Name: "slow", Started: at(1), Owner: &me},
		{Handle: "gone-2", Target: "http://other.example/mcp", Method: "tools/call", Name: "slow", Started: at(2),
			Owner: &statestore.Owner{Host: "machine-a", PID: 4242}},
		{Handle: "free-3", Target: "http://other.example/mcp", Method: "tools/call", Name: "slow", Started: at(3)},
	} {
		if err := store.Put(d); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(statestore.EnvHost, "machine-b")
	h, err := statestore.Hold(store, statestore.CallLease("held-1"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	t.Setenv(statestore.EnvHost, "")
	press(m, "rejoinable")
	sc = screen(m)
	for _, want := range []string{"held " + itoa(me.PID) + "@machine-b", "expired 4242@machine-a", "free"} {
		if !strings.Contains(sc, want) {
			t.Fatalf("D view lacks %q:\n%s", want, sc)
		}
	}
	press(m, "rejoin-forget") // the selected one is the oldest: held elsewhere
	if _, err := store.Get("held-1"); err != nil || !strings.Contains(screen(m), "not forgotten") {
		t.Fatalf("forgot a held call: %v\n%s", err, screen(m))
	}
}

// stdioFake is the fake transport as a stdio server describes itself.
type stdioFake struct{ *fakeTransport }

func (stdioFake) Describe() string { return "stdio: demo-server --stdio" }

// d on a stdio session says why nothing can be left running there and what
// to do instead, rather than that no state store was set up.
func TestDetachOnStdioSaysWhatToDo(t *testing.T) {
	f := stdioFake{newFake()}
	s := session.New(f, session.Options{Timeout: -1, MaxTimeout: -1})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	m := newTestModel(t, s, 200, 60)
	s.Call("tools/call", map[string]any{"name": "slow"})
	f.sentWith(t, "slow")
	refresh(m)
	press(m, "detach-call")
	for _, want := range []string{"detach: a stdio server ends with mcpscope", "run the call as a task (ctrl+t", "connect over HTTP"} {
		if !strings.Contains(m.flash, want) {
			t.Errorf("flash %q lacks %q", m.flash, want)
		}
	}
	if strings.Contains(m.flash, "no state store") {
		t.Errorf("flash still blames the state store: %q", m.flash)
	}
	press(m, "help")
	if got := screen(m); !strings.Contains(got, "not now: a stdio server ends with mcpscope") {
		t.Errorf("help does not give the reason:\n%s", got)
	}
}
