package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mcpscope/framestore"
	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/testkit/waitfor"
	"mcpscope/themes"
	"mcpscope/transport"
	"mcpscope/ui/waterfall"
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

func (a answerAt) Respond(ctx context.Context, r session.ServerRequest) (json.RawMessage, *journal.RPCError) {
	select {
	case <-ctx.Done():
		return nil, &journal.RPCError{Code: -32603, Message: "gone"}
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
			s.Store().Scan(0, 0, func(e framestore.Entry) bool {
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
	s.Adopt(session.EraVerdict{Era: protocol.EraModern, Reason: "test"})
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
		Clipboard: func(string) error { return nil }, StateStore: &statestore.FileStore{Dir: t.TempDir()}})
	m.Update(windowSize(w, h))
	waitFor(t, "every call in the history", func() bool { refresh(m); return m.h.ncalls == 11 })
	return m, s, clock
}

// waitFor polls cond (the session works on its own goroutines) for at
// most uiWait.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitfor.Until(t, what, uiWait, cond)
}

// TestGoldenWaterfall pins the waterfall at the four layout sizes.
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
		for _, sz := range layoutSizes {
			t.Run(fmt.Sprintf("%s-%dx%d", c.name, sz[0], sz[1]), func(t *testing.T) {
				m, _, _ := wfFixture(t, sz[0], sz[1])
				c.setup(m)
				got := screen(m)
				checkSize(t, got, sz[0], sz[1])
				golden(t, fmt.Sprintf("%s-%dx%d", c.name, sz[0], sz[1]), got)
			})
		}
	}
}

// lineOf is the screen line holding the row of call key.
func lineOf(t *testing.T, m *Model, key string) string {
	t.Helper()
	re := regexp.MustCompile(`^[ ▸]#` + key + ` `)
	for _, l := range strings.Split(screen(m), "\n") {
		if re.MatchString(l) {
			return l
		}
	}
	t.Fatalf("no row #%s:\n%s", key, screen(m))
	return ""
}

// axisLine is the waterfall's time axis (under the status bar and title).
func axisLine(m *Model) string { return strings.Split(screen(m), "\n")[2] }

// bar is the bar area of a row line at width w.
func bar(line string, w int) string {
	labelW, barW := waterfall.Layout(w)
	r := []rune(line)
	return string(r[labelW+1 : labelW+1+barW])
}

// Zoom steps through the scale levels from the one fit showed, and 0
// fits again.
func TestWaterfallZoomByKey(t *testing.T) {
	m, _, _ := wfFixture(t, 120, 40)
	press(m, "waterfall")
	if !strings.Contains(screen(m), "58ms per column · fit") {
		t.Fatalf("fit should show 4s in 69 columns:\n%s", screen(m))
	}
	wide := axisLine(m)
	press(m, "waterfall-zoom-in")
	if !strings.Contains(screen(m), "50ms per column · follows now") {
		t.Fatalf("zoom in from fit (100ms level) is 50ms:\n%s", screen(m))
	}
	press(m, "waterfall-zoom-in")
	if !strings.Contains(screen(m), "20ms per column") || axisLine(m) == wide {
		t.Fatalf("second zoom in:\n%s", screen(m))
	}
	// At 20ms a column, following the clock (4.0s), #1 (0–50ms) is out of
	// view: its only ✓ is the outcome column's.
	if n := strings.Count(lineOf(t, m, "1"), "✓"); n != 1 {
		t.Fatalf("#1 should be out of view at 20ms/column (%d ✓):\n%s", n, screen(m))
	}
	press(m, "waterfall-zoom-out", "waterfall-zoom-out", "waterfall-zoom-out")
	if !strings.Contains(screen(m), "200ms per column") {
		t.Fatalf("three zooms out from 20ms:\n%s", screen(m))
	}
	press(m, "waterfall-fit")
	if !strings.Contains(screen(m), "58ms per column · fit") || axisLine(m) != wide {
		t.Fatalf("fit again:\n%s", screen(m))
	}
}

// ? in the waterfall lists its keys (the keymap is the help).
func TestWaterfallHelp(t *testing.T) {
	m, _, _ := wfFixture(t, 120, 40)
	press(m, "waterfall", "help")
	for i := 0; i < 20 && !strings.Contains(screen(m), "zoom in (less time per column)"); i++ {
		press(m, "page-down")
	}
	if s := screen(m); !strings.Contains(s, " waterfall") || !strings.Contains(s, "zoom in (less time per column)") {
		t.Fatalf("help lacks the waterfall's keys:\n%s", s)
	}
	press(m, "help")
	if _, ok := topView[*waterfall.View](m); !ok {
		t.Fatal("closing help should go back to the waterfall")
	}
}

// Scrolling moves the axis in time; moving to a row whose bar is out of
// view brings it in; the rows scroll with the selection.
func TestWaterfallScrollByKey(t *testing.T) {
	m, _, _ := wfFixture(t, 120, 40)
	press(m, "waterfall", "waterfall-zoom-in", "waterfall-zoom-in") // 20ms, right edge at the clock
	before := axisLine(m)
	press(m, "waterfall-earlier")
	if after := axisLine(m); after == before || !strings.Contains(screen(m), "· zoom") {
		t.Fatalf("earlier did not move the axis or still follows the clock:\n%s\n%s", before, after)
	}
	press(m, "waterfall-page-earlier", "waterfall-page-earlier", "waterfall-page-earlier")
	if a := strings.TrimSpace(bar(axisLine(m), 120)); !strings.HasPrefix(a, "0 ") {
		t.Fatalf("the view should stop at the origin: %q", a)
	}
	if !strings.Contains(bar(lineOf(t, m, "1"), 120), "✓") {
		t.Fatalf("#1 in view at the origin:\n%s", screen(m))
	}
	for i := 0; i < 20 && !strings.Contains(screen(m), "follows now"); i++ {
		press(m, "waterfall-later")
	}
	if !strings.Contains(screen(m), "follows now") {
		t.Fatalf("later to the end should follow the clock again:\n%s", screen(m))
	}
	// #1 is out of view; selecting it scrolls back to it.
	press(m, "top")
	if l := lineOf(t, m, "1"); !strings.HasPrefix(l, "▸") || !strings.Contains(bar(l, 120), "✓") {
		t.Fatalf("top should select #1 and bring its bar into view:\n%s", screen(m))
	}

	// Vertical: 80×14 leaves room for 5 rows of 9.
	m.Update(windowSize(80, 14))
	press(m, "follow")
	if !strings.HasPrefix(lineOf(t, m, "11"), "▸") || strings.Contains(screen(m), "#1 tools/list") {
		t.Fatalf("follow: the newest row selected, the first scrolled away:\n%s", screen(m))
	}
	press(m, "top")
	if strings.Contains(screen(m), "#11 ") || !strings.HasPrefix(lineOf(t, m, "1"), "▸") {
		t.Fatalf("top:\n%s", screen(m))
	}
	press(m, "page-down")
	if !strings.HasPrefix(lineOf(t, m, "6"), "▸") || strings.Contains(screen(m), "#1 tools/list") {
		t.Fatalf("page down moves 5 rows (to #6, the sixth):\n%s", screen(m))
	}
}

// Enter opens the detail of the call a row came to: a multi-round call's
// last round, a re-issued call's re-issue. Esc goes back to the waterfall.
func TestWaterfallEnterOpensDetail(t *testing.T) {
	m, _, _ := wfFixture(t, 120, 40)
	press(m, "waterfall", "top", "down", "down", "open")
	if s := screen(m); !strings.Contains(s, "call 7 · tools/call ask") || !strings.Contains(s, "MRTR round 2 of #3") {
		t.Fatalf("enter on #3 should open its round 2 (#7):\n%s", s)
	}
	press(m, "detail-close")
	if _, ok := topView[*waterfall.View](m); !ok {
		t.Fatalf("closing the detail should go back to the waterfall:\n%s", screen(m))
	}
	press(m, "follow", "up", "open")
	if s := screen(m); !strings.Contains(s, "call 10 · tools/call echo") {
		t.Fatalf("enter on #9 should open its re-issue #10:\n%s", s)
	}
	press(m, "detail-close", "waterfall-close")
	if m.top() != nil || !strings.Contains(screen(m), "Requests 11") {
		t.Fatalf("w closes the waterfall:\n%s", screen(m))
	}
}

// A pending call's bar grows with the clock, a new call gets a row and,
// following, the selection.
func TestWaterfallFollowsLiveCalls(t *testing.T) {
	m, s, clock := wfFixture(t, 120, 40)
	press(m, "waterfall")
	l := lineOf(t, m, "8")
	if !strings.Contains(l, "… pending     800ms") {
		t.Fatalf("#8 pending for 800ms at 4.0s: %q", l)
	}
	press(m, "waterfall-zoom-out") // a fixed scale, so the bar's length is comparable
	short := strings.Count(bar(lineOf(t, m, "8"), 120), " ")
	clock.set(6.0)
	m.Update(tickMsg{})
	l = lineOf(t, m, "8")
	if !strings.Contains(l, "… pending      2.8s") || strings.Count(bar(l, 120), " ") >= short {
		t.Fatalf("#8 should have grown to 2.8s: %q", l)
	}
	c := s.Call("ping", nil)
	waitFor(t, "the new row", func() bool { refresh(m); return strings.Contains(screen(m), "#"+c.Key+" ping") })
	if !strings.HasPrefix(lineOf(t, m, c.Key), "▸") {
		t.Fatalf("following, the new row is selected:\n%s", screen(m))
	}
}

// Every outcome has a glyph and a word, so a monochrome screen says what
// colour says; with colour, the outcome's colour is the theme's.
func TestWaterfallOutcomesWithoutColour(t *testing.T) {
	m, _, _ := wfFixture(t, 120, 40)
	m.th = themes.Plain()
	press(m, "waterfall")
	for key, want := range map[string]string{"1": "✓ ok", "4": "✗ error", "5": "✗ error", "6": "⊘ cancelled",
		"8": "… pending", "9": "✓ ok", "11": "◷ timeout"} {
		if l := lineOf(t, m, key); !strings.Contains(l, want) {
			t.Errorf("#%s lacks %q: %q", key, want, l)
		}
	}
	for _, g := range []string{"█ server", "▒ no reply yet", "┄ waiting on you", "│ first byte", "• progress", "2 MRTR round",
		"↯ re-issued", "↻ resumed", "? input", "⇥ detached"} {
		if !strings.Contains(screen(m), g) {
			t.Errorf("legend lacks %q", g)
		}
	}
	if strings.Contains(m.Render(), "38;") {
		t.Error("NO_COLOR theme drew a colour")
	}
	m.th = themes.ByName("dark")
	if !strings.Contains(m.Render(), m.th.Cancelled.Render("⊘ cancelled")) || !strings.Contains(m.Render(), m.th.Late.Render("◷ timeout  ")) {
		t.Error("outcomes are not in their theme colours")
	}
}

// A row whose MRTR round waits for the person's answer says "input" and
// draws the wait as the person's, growing.
func TestWaterfallWaitingOnThePerson(t *testing.T) {
	s, f := liveSession(t, answerAt{at: make(chan float64)}) // a person who has not answered yet
	m := New(Options{Session: s, Theme: themes.Plain(), Clipboard: func(string) error { return nil },
		StateStore: &statestore.FileStore{Dir: t.TempDir()}})
	m.Update(windowSize(120, 40))
	s.Call("tools/call", map[string]any{"name": "ask"})
	f.sentWith(t, `"name":"ask"`)
	f.inject(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{"message":"Name?"}}}}}`)
	waitFor(t, "the round's end", func() bool { refresh(m); return s.Calls()[0].Snapshot().State.Ended() })
	press(m, "waterfall")
	waitFor(t, "the person's wait on screen", func() bool {
		m.Update(tickMsg{})
		return strings.Contains(bar(lineOf(t, m, "1"), 120), "┄")
	})
	if l := lineOf(t, m, "1"); !strings.Contains(l, "? input") || !strings.Contains(screen(m), "waiting on you") {
		t.Fatalf("the row should say input and the info line the person's share: %q\n%s", l, screen(m))
	}
}

// A journal read back does not grow: a call still running when it was
// written ends where the journal does, not at the wall clock.
func TestWaterfallJournalDoesNotGrow(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 120, 40) // the clock says 5s; the journal ends at 4.1s
	press(m, "waterfall")
	if l := lineOf(t, m, "2"); !strings.Contains(l, "… pending      3.1s") {
		t.Fatalf("#2 (sent at 1s) should end with the journal at 4.1s: %q", l)
	}
}

// Server text (names, URIs, error messages) reaches the screen inert.
func TestWaterfallServerTextInert(t *testing.T) {
	for _, th := range []themes.Theme{themes.ByName("dark"), themes.ByName("high-contrast"), themes.Plain()} {
		m, _, _ := wfFixture(t, 200, 40)
		m.th = th
		press(m, "waterfall", "top")
		for i := 0; i < 9; i++ {
			assertInert(t, m.Render())
			press(m, "down")
		}
		press(m, "top", "down", "down", "down", "down")
		s := screen(m)
		if !strings.Contains(s, "resource not found ␛]0;x␇") || !strings.Contains(s, "demo://missing") {
			t.Fatalf("#5's URI and error should show, made inert:\n%s", s)
		}
	}
}

// Any size renders within bounds; at the sizes that matter, the title and
// its origin stay whole and apart, and every row keeps its whole outcome
// and duration.
func TestWaterfallAnySize(t *testing.T) {
	m, _, _ := wfFixture(t, 80, 24)
	press(m, "waterfall")
	title := regexp.MustCompile(`^ Waterfall · 9 calls · \d+ms( per column|/column) · fit +0 = 12:00:00\.000 $`)
	for _, sz := range [][2]int{{1, 1}, {10, 3}, {20, 6}, {40, 10}, {60, 20}, {80, 24}, {81, 25}, {120, 40}, {200, 60}} {
		m.Update(windowSize(sz[0], sz[1]))
		got := screen(m)
		if sz[0] >= 20 && sz[1] >= 6 {
			checkSize(t, got, sz[0], sz[1])
		}
		if sz[0] >= 60 {
			if l := strings.Split(got, "\n")[1]; !title.MatchString(l) {
				t.Errorf("%dx%d: the title runs into its origin: %q", sz[0], sz[1], l)
			}
			re := regexp.MustCompile(`[✓✗⊘◷…?] (ok|error|cancelled|timeout|pending|input) +\d+(ms|\.\ds|m\d\ds|h\d\dm)$`)
			for _, key := range []string{"1", "2", "3", "4", "5", "6", "8", "9", "11"} {
				if l := strings.TrimRight(lineOf(t, m, key), " "); !re.MatchString(l) {
					t.Errorf("%dx%d: #%s's outcome or duration is cut: %q", sz[0], sz[1], key, l)
				}
			}
		}
	}
}

// BenchmarkWaterfallView is the cost of one waterfall frame over 100,000
// items of history (200 running calls with progress) while a flood keeps
// arriving; the first frames catch the marks up within their scan budget.
func BenchmarkWaterfallView(b *testing.B) {
	for _, sz := range sizes {
		b.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(b *testing.B) {
			s, f := floodSession(b, 100_000)
			m := New(Options{Session: s, Clipboard: func(string) error { return nil }})
			m.Update(windowSize(sz.w, sz.h))
			press(m, "waterfall")
			stop := make(chan struct{})
			var sent atomic.Int64
			go flood(f, 0, stop, &sent)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if i%16 == 0 {
					m.Update(storeChangedMsg{})
				}
				_ = m.View()
			}
			close(stop)
			b.ReportMetric(float64(s.Store().Len()), "items")
		})
	}
}
