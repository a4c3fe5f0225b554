package ui

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/themes"
	"mcpscope/transport"
	"mcpscope/ui/chooser"
)

// deliverLive runs cmd (and the commands it batches) and hands the
// liveMsg it makes to the model, as the program would. The commands run side
// by side: some are loops that never end (store, ticks), and the connect
// takes what it takes on a loaded machine, so none is given up on after a
// while; the test fails when all of them ended without a liveMsg, or after
// uiWait (a hang guard).
func deliverLive(t *testing.T, m *Model, cmd tea.Cmd) {
	t.Helper()
	msgs := make(chan tea.Msg)
	done := make(chan struct{})
	defer close(done) // frees the loops' goroutines
	running := 0
	start := func(c tea.Cmd) {
		if c == nil {
			return
		}
		running++
		go func() {
			msg := c()
			select {
			case msgs <- msg:
			case <-done:
			}
		}()
	}
	start(cmd)
	hang := time.After(uiWait)
	var lm liveMsg
	for found := false; !found; {
		if running == 0 {
			t.Fatal("no live connection was made: every command ended without one")
		}
		select {
		case msg := <-msgs:
			running--
			switch v := msg.(type) {
			case liveMsg:
				lm, found = v, true
			case tea.BatchMsg:
				for _, b := range v {
					start(b)
				}
			}
		case <-hang:
			t.Fatalf("no live connection was made within %v", uiWait)
		}
	}
	_, next := m.Update(lm)
	run(m, next)
}

// In a recording, keys that need a live server say why they cannot act,
// and the status bar says what is shown: a recording, offline, its file.
func TestRecordingRefusesLiveKeys(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 120, 40)
	if got := screen(m); !strings.Contains(got, "recording: offline · fixture.jsonl") || strings.Contains(got, "connected") {
		t.Fatalf("status bar:\n%s", strings.SplitN(got, "\n", 2)[0])
	}
	press(m, "top", "down") // the slow call, still running when recorded
	for _, c := range []struct{ key, want string }{
		{"cancel-call", "cancel: this is a recording (fixture.jsonl): nothing runs to cancel"},
		{"send-raw", "send: this is a recording (fixture.jsonl): nothing is connected"},
		{"log-level", "log level: this is a recording"},
		{"detach-call", "detach: this is a recording"},
		{"replay", "replay: this is a recording (fixture.jsonl): nothing is connected"},
	} {
		press(m, c.key)
		if m.top() != nil {
			t.Fatalf("%s opened %T in a recording", c.key, m.top())
		}
		if !strings.Contains(m.flash, c.want) {
			t.Errorf("%s: flash %q, want %q", c.key, m.flash, c.want)
		}
	}
	// A catalog entry is not called either.
	loadPage(m, 0, `{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`)
	press(m, "catalog", "open")
	press(m, "form-submit")
	if !strings.Contains(m.flash, "call: this is a recording") || !strings.Contains(m.flash, "r on a recorded call replays it") {
		t.Errorf("catalog call: flash %q", m.flash)
	}
	if n := len(m.s.Calls()); n != 5 {
		t.Errorf("the recording has %d calls, want its 5", n)
	}
}

// A replay from a recording goes to a live session: a recorded command is
// started only once confirmed; the live session then takes the screen with
// the replayed call, and switch-session goes back to the recording.
func TestRecordingReplaysInALiveSession(t *testing.T) {
	rec := loadFixture(t)
	var (
		mu    sync.Mutex
		calls int
		fake  *fakeTransport
	)
	live := &Live{Target: "stdio: demo-server --stdio", Confirm: true, Connect: func(ctx context.Context) (*session.Session, *Responder, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		s, f := liveSession(t, nil)
		fake = f
		return s, nil, nil
	}}
	m := New(Options{Session: rec, Live: live, Now: func() time.Time { return at(5) }, Location: time.UTC,
		Clipboard: func(string) error { return nil }, StateStore: &statestore.FileStore{Dir: t.TempDir()}})
	m.Update(windowSize(120, 40))
	press(m, "top", "down") // tools/call slow

	press(m, "replay")
	ch, ok := topView[*chooser.View](m)
	if !ok || !strings.Contains(ch.Title, "starts this command on this machine: stdio: demo-server --stdio") {
		t.Fatalf("replay did not ask first: %T %+v", m.top(), m.top())
	}
	press(m, "choose") // "no" is the default
	if mu.Lock(); calls != 0 {
		t.Fatal("the command ran although the user said no")
	}
	mu.Unlock()
	if !strings.Contains(m.flash, "nothing started") || m.s != rec {
		t.Fatalf("after no: flash %q", m.flash)
	}

	press(m, "replay", "choose-down")
	_, cmd := m.Update(m.km.Press("choose"))
	deliverLive(t, m, cmd)
	if m.s == rec || m.s.Transport() == nil {
		t.Fatal("the live session is not shown after the replay")
	}
	sent := fake.sentWith(t, `"name":"slow"`)
	if !strings.Contains(sent, `"tools/call"`) || !strings.Contains(sent, `"seconds":10`) {
		t.Fatalf("replayed %s", sent)
	}
	if got := screen(m); !strings.Contains(got, "connected") || !strings.Contains(m.flash, "in a live session against stdio: demo-server --stdio") {
		t.Fatalf("live screen (flash %q):\n%s", m.flash, got)
	}

	press(m, "switch-session")
	if m.s != rec || !strings.Contains(screen(m), "recording: offline") {
		t.Fatal("switch-session did not go back to the recording")
	}
	// A second replay reuses the live session: no new connection, no
	// question.
	press(m, "replay")
	if m.top() != nil {
		t.Fatalf("asked again: %T", m.top())
	}
	if mu.Lock(); calls != 1 {
		t.Fatalf("%d connections, want 1", calls)
	}
	mu.Unlock()
	if m.s == rec {
		t.Fatal("the second replay did not show the live session")
	}
}

// With no known target, a replay says what to give.
func TestRecordingReplayWithoutTarget(t *testing.T) {
	m := New(Options{Session: loadFixture(t), Live: &Live{Missing: "no target was recorded; give one"},
		StateStore: &statestore.FileStore{Dir: t.TempDir()}})
	press(m, "top", "replay")
	if !strings.Contains(m.flash, "replay: this is a recording") || !strings.Contains(m.flash, "no target was recorded; give one") {
		t.Fatalf("flash %q", m.flash)
	}
	m2 := New(Options{Session: loadFixture(t), StateStore: &statestore.FileStore{Dir: t.TempDir()},
		Live: &Live{Target: "http://x", Connect: func(context.Context) (*session.Session, *Responder, error) {
			return nil, nil, errors.New("connection refused")
		}}})
	_, cmd := m2.Update(m2.km.Press("replay"))
	deliverLive(t, m2, cmd)
	if !strings.Contains(m2.flash, "could not connect to http://x: connection refused") || m2.other != nil {
		t.Fatalf("flash %q", m2.flash)
	}
}

// fakeFeed is a proxy as session.Follow sees it: frames numbered by the
// test, cancels of a host's calls recorded and answered.
type fakeFeed struct {
	fn       func(session.Fed)
	wire     func(key string, id json.RawMessage)
	done     chan struct{}
	once     sync.Once
	seq      uint64
	mu       sync.Mutex
	cancels  []uint64
	inject   bool
	why      string
	cancelOK error
}

func (f *fakeFeed) Start(transport.Sink) error { return errors.New("a Feed") }
func (f *fakeFeed) Send(m transport.Outgoing, done func(error)) {
	if !f.inject {
		done(errors.New("no injects"))
		return
	}
	done(nil)
}
func (f *fakeFeed) Close() error          { f.end("closed"); return nil }
func (f *fakeFeed) Done() <-chan struct{} { return f.done }
func (f *fakeFeed) Describe() string      { return "proxy e2e (pid 42): stdio: demo-server" }
func (f *fakeFeed) JournalPath() string   { return "" }
func (f *fakeFeed) CanInject() bool       { return f.inject }
func (f *fakeFeed) Ended() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.why
}
func (f *fakeFeed) end(why string) {
	f.once.Do(func() {
		f.mu.Lock()
		f.why = why
		f.mu.Unlock()
		close(f.done)
	})
}
func (f *fakeFeed) StartFeed(fn func(session.Fed), wire func(string, json.RawMessage)) error {
	f.fn, f.wire = fn, wire
	return nil
}
func (f *fakeFeed) CancelForeign(seq uint64, id json.RawMessage, reason string, done func(error)) {
	f.mu.Lock()
	f.cancels = append(f.cancels, seq)
	f.mu.Unlock()
	done(f.cancelOK)
}

func (f *fakeFeed) feed(sec float64, dir transport.Dir, data string) {
	f.seq++
	fr := msg(sec, dir, data)
	fr.Meta.Via = transport.ViaHost
	f.fn(session.Fed{Seq: f.seq, Frame: fr, Off: -1})
}

func attachedModel(t *testing.T, inject bool, w, h int) (*Model, *fakeFeed) {
	t.Helper()
	ff := &fakeFeed{done: make(chan struct{}), inject: inject}
	s, err := session.Follow(ff, session.Options{IDPrefix: "you-", Timeout: -1, MaxTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ff.feed(0, transport.Out, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`)
	ff.feed(0.1, transport.In, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"demo","version":"1.0"}}}`)
	ff.feed(0.2, transport.Out, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	ff.feed(0.3, transport.In, `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"slow","inputSchema":{"type":"object"}}]}}`)
	ff.feed(1, transport.Out, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`)
	ff.feed(1.2, transport.In, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}]}}`)
	ff.feed(2, transport.Out, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":60}}}`)
	m := newTestModel(t, s, w, h)
	return m, ff
}

// Attached to a proxy: the host's calls are marked H; cancelling one asks
// first and then goes through the proxy; when the proxy goes the status
// bar says so and why, and the panes stay.
func TestAttachedMarksAndCancelsHostsCalls(t *testing.T) {
	m, ff := attachedModel(t, true, 120, 40)
	got := screen(m)
	for _, want := range []string{"attached: proxy e2e (pid 42)", "H the host's", "H 3     tools/call       echo", "H 4     tools/call       slow"} {
		if !strings.Contains(got, want) {
			t.Errorf("screen lacks %q:\n%s", want, got)
		}
	}
	press(m, "follow") // the slow call, running
	press(m, "cancel-call")
	ch, ok := topView[*chooser.View](m)
	if !ok || !strings.Contains(ch.Title, "Cancel the host's call 4 (tools/call slow)?") || ch.Options[ch.Sel] != "no, leave it running" {
		t.Fatalf("no confirmation: %T %+v", m.top(), m.top())
	}
	press(m, "choose")
	if ff.mu.Lock(); len(ff.cancels) != 0 {
		t.Fatal("cancelled although the user said no")
	}
	ff.mu.Unlock()
	press(m, "cancel-call", "choose-down", "choose")
	ff.mu.Lock()
	cancels := append([]uint64(nil), ff.cancels...)
	ff.mu.Unlock()
	if len(cancels) != 1 || cancels[0] != 7 {
		t.Fatalf("cancels %v, want the request's seq 7", cancels)
	}
	if !strings.Contains(m.flash, "cancelled the host's call 4") {
		t.Fatalf("flash %q", m.flash)
	}
	// Keys that would change the host's session are refused.
	press(m, "log-level")
	if m.top() != nil || !strings.Contains(m.flash, "the host's session is the host's to change") {
		t.Fatalf("log level: %T, flash %q", m.top(), m.flash)
	}

	ff.end("the proxy said bye: the host closed its stdin")
	refresh(m)
	if got := screen(m); !strings.Contains(got, "disconnected: the proxy said bye") || !strings.Contains(got, "H 3     tools/call       echo") {
		t.Fatalf("after the proxy ended:\n%s", got)
	}
	press(m, "top", "replay")
	if !strings.Contains(m.flash, "replay: the proxy is gone (the proxy said bye") {
		t.Fatalf("replay after the end: flash %q", m.flash)
	}
}

// An HTTP proxy takes no injects: with no Live, replay says why.
func TestAttachedHTTPRefusesWithoutLive(t *testing.T) {
	m, _ := attachedModel(t, false, 120, 40)
	press(m, "top", "down", "down", "replay")
	if !strings.Contains(m.flash, "replay: the proxy forwards HTTP") {
		t.Fatalf("flash %q", m.flash)
	}
}

// TestGoldenAttached pins the attached view at 80×24: the H mark, the
// status bar.
func TestGoldenAttached(t *testing.T) {
	m, _ := attachedModel(t, true, 80, 24)
	got := screen(m)
	checkSize(t, got, 80, 24)
	golden(t, "attached-80x24", got)
}

// TestGoldenConfirmations pins the two questions at 80×24: the recorded
// command a replay would start, shown whole; a host's call to cancel.
func TestGoldenConfirmations(t *testing.T) {
	rec := loadFixture(t)
	m := New(Options{Session: rec, Theme: themes.ByName("dark"), Now: func() time.Time { return at(5) }, Location: time.UTC,
		StateStore: &statestore.FileStore{Dir: t.TempDir()},
		Live: &Live{Target: "stdio: node /home/someone/projects/a-server-with-a-long-path/dist/server.js --port 3001 --verbose", Confirm: true,
			Connect: func(context.Context) (*session.Session, *Responder, error) {
				return nil, nil, errors.New("not in this test")
			}}})
	m.Update(windowSize(80, 24))
	press(m, "top", "down", "replay")
	got := screen(m)
	checkSize(t, got, 80, 24)
	if !strings.Contains(got, "--port 3001 --verbose") {
		t.Errorf("the command is not shown whole:\n%s", got)
	}
	golden(t, "confirm-replay-80x24", got)

	a, _ := attachedModel(t, true, 80, 24)
	press(a, "follow", "cancel-call")
	got = screen(a)
	checkSize(t, got, 80, 24)
	golden(t, "confirm-cancel-host-80x24", got)
}

// An opened journal's tool calls leave their params in the journal (a
// journal read back holds a call for every call): copying them, as JSON
// or as a command line, reads them back.
func TestOpenedToolCallsCopyParamsReadBack(t *testing.T) {
	var clip []string
	rec := loadFixture(t)
	if sn := rec.Lookup("3").Snapshot(); !sn.ParamsInJournal || sn.Params != nil {
		t.Fatalf("the opened tool call 3 holds its params: %+v", sn)
	}
	m := New(Options{Session: rec, Clipboard: func(x string) error { clip = append(clip, x); return nil },
		Target: []string{"http://localhost:8080/mcp"}, StateStore: &statestore.FileStore{Dir: t.TempDir()}})
	m.Update(windowSize(120, 40))
	press(m, "top", "down", "copy") // tools/call slow: unanswered, so its params
	if len(clip) != 1 || !strings.Contains(clip[0], `"seconds": 10`) || !strings.Contains(clip[0], `"name": "slow"`) {
		t.Fatalf("copied %q\n%s", clip, screen(m))
	}
	press(m, "down", "copy-command", "choose") // tools/call echo
	if want := `mcpscope call echo --args '{"message":"hi"}' http://localhost:8080/mcp`; len(clip) != 2 || clip[1] != want {
		t.Fatalf("command line %q, want %q", clip, want)
	}
}
