package ui

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/testkit/goldentest"
	"mcpscope/testkit/journaltest"
	"mcpscope/testkit/waitfor"
	"mcpscope/themes"
	"mcpscope/transport"
	"mcpscope/ui/view"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

func msg(sec float64, dir transport.Dir, data string) transport.Frame {
	return transport.Frame{Time: at(sec), Dir: dir, Kind: transport.Message, Data: []byte(data)}
}

// fixtureFrames is a small session with everything the panes show,
// including hostile server text.
func fixtureFrames() []transport.Frame {
	ev := func(sec float64, m transport.Meta) transport.Frame {
		return transport.Frame{Time: at(sec), Dir: transport.Local, Kind: transport.Event, Meta: m}
	}
	out, in := transport.Out, transport.In
	return []transport.Frame{
		ev(0, transport.Meta{Event: transport.EvSpawned, PID: 4242, Detail: "demo-server --stdio"}),
		msg(0.1, out, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpscope","version":"0.1.0-dev"}}}`),
		msg(0.2, in, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"logging":{}},"serverInfo":{"name":"evil\u001b]52;c;ZXZpbA==\u0007srv","version":"6.6\u202e6"}}}`),
		msg(1, out, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":10,"steps":10},"_meta":{"progressToken":"mcpscope-2"}}}`),
		msg(2, in, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpscope-2","progress":1,"total":10,"message":"step 1/10"}}`),
		msg(2.4, in, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpscope-2","progress":3,"total":10,"message":"step 3/10 \u001b[2J"}}`),
		msg(2.5, out, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`),
		msg(2.6, in, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}],"structuredContent":{"message":"hi","length":2}}}`),
		msg(3, out, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"fail","arguments":{}}}`),
		msg(3.1, in, `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"boom"}],"isError":true}}`),
		msg(3.2, out, `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"demo://missing"}}`),
		msg(3.3, in, `{"jsonrpc":"2.0","id":5,"error":{"code":-32002,"message":"resource not found \u001b[31mred\u001b[0m"}}`),
		msg(3.5, in, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"demo","data":"disk \u001b]52;c;cHduZWQ=\u0007 almost full"}}`),
		msg(3.6, in, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":{"error":"Connection failed","bidi":"abc\u202edef"}}}`),
		{Time: at(3.7), Dir: in, Kind: transport.Stderr, Data: []byte("panic: \x1b[2J\x1b[H cleared \xe2\x80\xae reversed")},
		msg(3.8, in, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`),
		ev(3.9, transport.Meta{Event: transport.EvStreamDropped, Stream: "get:1", Detail: "read: connection reset"}),
		msg(4.1, in, `{"jsonrpc":"2.0","id":"srv-1","method":"elicitation/create","params":{"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`),
	}
}

// loadFixture writes the fixture as a journal and loads it back, the
// way `mcpscope journal` sessions are built.
func loadFixture(t testing.TB) *session.Session {
	t.Helper()
	return loadFrames(t, fixtureFrames())
}

// loadFrames writes frames as a journal and loads it back.
func loadFrames(t testing.TB, frames []transport.Frame) *session.Session {
	t.Helper()
	s, _, err := session.Load(journaltest.Write(t, "fixture.jsonl", journal.Header{Started: t0, Target: "stdio: demo-server --stdio"}, frames...))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newTestModel(t testing.TB, s *session.Session, w, h int) *Model {
	t.Helper()
	m := New(Options{Session: s, Theme: themes.ByName("dark"), Now: func() time.Time { return at(5) }, Location: time.UTC,
		Clipboard: func(string) error { return nil }, StateStore: &statestore.FileStore{Dir: t.TempDir()}})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// press drives a binding by name and runs the commands it returns, so
// their messages reach the model the way the program would deliver them.
func press(m *Model, names ...string) {
	for _, n := range names {
		run(m, m.Press(n))
	}
}

// typeText sends text as key presses.
func typeText(m *Model, s string) {
	for _, r := range s {
		k := tea.KeyPressMsg{Code: r, Text: string(r)}
		if r == ' ' {
			k.Code = tea.KeySpace
		}
		_, cmd := m.Update(k)
		run(m, cmd)
	}
}

// run executes a command tree synchronously, feeding back the messages
// the UI itself handles, and waits for each command to return (a hang
// guard of uiWait only). The commands that wait on the outside world —
// the store, the clock, a server's request, a task's end — are left
// alone, as the program runs them beside the UI and their messages come
// later or never; they are told apart by their code (background).
func run(m *Model, cmd tea.Cmd) {
	if cmd == nil || background(m)[reflect.ValueOf(cmd).Pointer()] {
		return
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-done:
	case <-time.After(uiWait):
		panic(fmt.Sprintf("a command (%T) did not return within %v: if it waits on the outside world, list it in background", cmd, uiWait))
	}
	switch v := msg.(type) {
	case tea.BatchMsg:
		for _, c := range v {
			run(m, c)
		}
	case copiedMsg, flashMsg:
		_, c := m.Update(v)
		run(m, c)
	}
}

// background is the code of the commands that wait on the outside world.
func background(m *Model) map[uintptr]bool {
	code := func(c tea.Cmd) uintptr { return reflect.ValueOf(c).Pointer() }
	return map[uintptr]bool{
		code(m.waitStore(0)):              true,
		code(tick()):                      true,
		code(waitPrompt(nil)):             true,
		code(watchPrompt(nil)):            true,
		code(awaitTask(nil, "", "")):      true,
		code(tea.Tick(time.Second, nil)):  true,
		code(tea.Every(time.Second, nil)): true,
	}
}

// topView is the view on top when it is a T (a view of the contract,
// ui/view, in its own package).
func topView[T view.View](m *Model) (T, bool) {
	var zero T
	c, ok := m.top().(viewer)
	if !ok {
		return zero, false
	}
	v, ok := c.held().(T)
	return v, ok
}

// screen is the model's content without styling, for goldens and checks.
func screen(m *Model) string { return ansi.Strip(m.Render()) }

func golden(t *testing.T, name, got string) { t.Helper(); goldentest.Check(t, name, got) }

// fakeTransport records what the session sends and lets tests inject what
// a server would say.
type fakeTransport struct {
	mu   sync.Mutex
	sink transport.Sink
	sent [][]byte
	done chan struct{}
	once sync.Once
}

func newFake() *fakeTransport { return &fakeTransport{done: make(chan struct{})} }

func (f *fakeTransport) Start(s transport.Sink) error { f.sink = s; return nil }

// Send hands the Out frame to the session before the message counts as
// sent, as the real transports do (the answer may come before the write
// returns): a test that sees it sent and answers it then answers a request
// the session has already ingested. The other order raced (an MRTR retry
// read the call's Seq while the late Out frame set it).
func (f *fakeTransport) Send(m transport.Outgoing, done func(error)) {
	f.sink(transport.Frame{Time: time.Now(), Dir: transport.Out, Kind: transport.Message, Data: m.Data})
	f.mu.Lock()
	f.sent = append(f.sent, m.Data)
	f.mu.Unlock()
	done(nil)
}
func (f *fakeTransport) Close() error          { f.once.Do(func() { close(f.done) }); return nil }
func (f *fakeTransport) Done() <-chan struct{} { return f.done }
func (f *fakeTransport) Describe() string      { return "fake: test server" }

func (f *fakeTransport) inject(data string) {
	f.sink(transport.Frame{Time: time.Now(), Dir: transport.In, Kind: transport.Message, Data: []byte(data)})
}

// uiWait bounds the waits of these tests on the session's goroutines: a
// hang guard only, as long as -race on a loaded 2-core machine may need.
const uiWait = 2 * time.Minute

// sentWith waits until a sent message contains s.
func (f *fakeTransport) sentWith(t *testing.T, s string) string {
	t.Helper()
	var found string
	waitfor.Until(t, fmt.Sprintf("a sent message containing %q", s), uiWait, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, b := range f.sent {
			if strings.Contains(string(b), s) {
				found = string(b)
				return true
			}
		}
		return false
	})
	return found
}

func liveSession(t testing.TB, r session.Responder) (*session.Session, *fakeTransport) {
	t.Helper()
	f := newFake()
	s := session.New(f, session.Options{Responder: r, Timeout: -1, MaxTimeout: -1})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, f
}

func windowSize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }
