package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"mcpscope/filter"
	"mcpscope/session"
	"mcpscope/transport"
	formview "mcpscope/ui/form"
	"mcpscope/ui/help"
	"mcpscope/ui/keys"
)

// settle delivers filter steps until every row has been checked, as the
// program does between other messages. It reports how many steps it took.
func settle(m *Model) int {
	n := 0
	for ; m.find.busy(m) && n < 1_000_000; n++ {
		m.Update(filterStepMsg{})
	}
	return n
}

// key sends one key by its spelling (keys the text input handles itself).
func key(m *Model, k string) {
	_, cmd := m.Update(keys.Parse(k))
	run(m, cmd)
}

// filterTo opens the focused pane's filter, replaces its text and keeps it.
func filterTo(m *Model, expr string) {
	press(m, "filter")
	key(m, "ctrl+u")
	typeText(m, expr)
	press(m, "filter-apply")
	settle(m)
}

// reqKeys are the call keys the requests pane shows, in order.
func reqKeys(m *Model) []string {
	var out []string
	for i := 0; i < m.reqLen(); i++ {
		out = append(out, m.reqCall(i).Key)
	}
	return out
}

func sameKeys(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("%s: rows %v, want %v", what, got, want)
	}
}

// The requests pane takes a filter expression: only matching calls are
// shown, the title says the filter and the count, the input comes back
// with the filter in it, and esc clears it.
func TestFilterRequestsByExpression(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 120, 40)
	filterTo(m, "~e")
	sameKeys(t, "~e", reqKeys(m), "4", "5")
	if m.find.prompt != nil {
		t.Fatal("enter did not close the input line")
	}
	if s := screen(m); !strings.Contains(s, "Requests 2 of 5 · filter ~e") {
		t.Fatalf("title does not say the filter and the count:\n%s", s)
	}
	press(m, "filter")
	if v := m.find.prompt.Value(); v != "~e" {
		t.Fatalf("the input line opened with %q, want the filter", v)
	}
	key(m, "ctrl+u")
	typeText(m, "~t echo")
	settle(m)
	sameKeys(t, "~t echo (as typed)", reqKeys(m), "3")
	press(m, "filter-apply", "filter-clear")
	sameKeys(t, "after esc", reqKeys(m), "1", "2", "3", "4", "5")
	if s := screen(m); !strings.Contains(s, "Requests 5 ·") || strings.Contains(s, "filter ~t") {
		t.Fatalf("cleared filter still in the title:\n%s", s)
	}
}

// A call is matched by its response too: text only a response holds
// finds its call, and ~k response matches calls that have one.
func TestFilterRequestsMatchResponses(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 120, 40)
	filterTo(m, "boom") // only in the fail tool's result
	sameKeys(t, "boom", reqKeys(m), "4")
	filterTo(m, "~k response & ~e")
	sameKeys(t, "~k response & ~e", reqKeys(m), "4", "5")
	filterTo(m, "~k response")
	sameKeys(t, "~k response", reqKeys(m), "1", "3", "4", "5") // the slow call has no answer yet
	filterTo(m, "!~k response & ~m tools/call")
	sameKeys(t, "requests of tools/call", reqKeys(m), "2", "3", "4")
}

// A syntax error is shown as it is typed, with a caret under its column,
// and the last valid filter stays applied; esc restores the filter the
// input line opened with.
func TestFilterSyntaxErrorCaret(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 120, 40)
	press(m, "filter")
	typeText(m, "~e & (~m")
	settle(m)
	_, perr := filter.Parse("~e & (~m")
	se, ok := perr.(*filter.SyntaxError)
	if !ok {
		t.Fatalf("the test's input should not parse: %v", perr)
	}
	lines := strings.Split(screen(m), "\n")
	in, under := lines[len(lines)-2], lines[len(lines)-1]
	label := " filter requests › "
	if !strings.HasPrefix(in, label+"~e & (~m") {
		t.Fatalf("input line %q", in)
	}
	caret := strings.Index(under, "^")
	if caret < 0 || ansi.StringWidth(under[:caret]) != ansi.StringWidth(label)+se.Col-1 {
		t.Fatalf("caret at %d of %q, want column %d under %q", caret, under, se.Col, in)
	}
	if !strings.Contains(under, fmt.Sprintf("column %d: %s", se.Col, se.Msg)) {
		t.Fatalf("the error is not said: %q", under)
	}
	if m.find.req.expr != "~e" {
		t.Fatalf("applied %q while the input does not parse; want the last valid one, ~e", m.find.req.expr)
	}
	sameKeys(t, "while invalid", reqKeys(m), "4", "5")
	typeText(m, " tools/call)")
	settle(m)
	sameKeys(t, "once valid", reqKeys(m), "4")
	if strings.Contains(screen(m), "^") {
		t.Fatal("the caret stayed after the input became valid")
	}
	press(m, "filter-cancel")
	if m.find.prompt != nil || m.find.req.f != nil {
		t.Fatal("esc in the input line should restore the filter it opened with (none)")
	}
	sameKeys(t, "after cancel", reqKeys(m), "1", "2", "3", "4", "5")
}

// Highlight mode shows every row and marks the matches; n and N jump
// between them; H goes back to hiding, on the same call.
func TestFilterHighlightAndJump(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 120, 40)
	filterTo(m, "~e")
	press(m, "filter-mode")
	if m.reqLen() != 5 || !strings.Contains(screen(m), "Requests 5 · 2 match ~e") {
		t.Fatalf("highlight mode should show all 5 rows and count 2 matches:\n%s", screen(m))
	}
	press(m, "top", "match-next")
	if c := m.selectedCall(); c.Key != "4" {
		t.Fatalf("n went to call %s, want 4", c.Key)
	}
	for _, l := range strings.Split(screen(m), "\n") {
		if strings.Contains(l, "resources/read") && !strings.HasPrefix(l, "•") {
			t.Fatalf("the other match is not marked: %q", l)
		}
		if strings.Contains(l, " echo ") && strings.HasPrefix(l, "•") {
			t.Fatalf("a row that does not match is marked: %q", l)
		}
	}
	press(m, "match-next")
	if c := m.selectedCall(); c.Key != "5" {
		t.Fatalf("n went to call %s, want 5", c.Key)
	}
	press(m, "match-next")
	if c := m.selectedCall(); c.Key != "5" || !strings.Contains(screen(m), "no match below") {
		t.Fatalf("n past the last match moved to %s or said nothing", c.Key)
	}
	press(m, "match-prev")
	if c := m.selectedCall(); c.Key != "4" {
		t.Fatalf("N went to call %s, want 4", c.Key)
	}
	press(m, "filter-mode")
	sameKeys(t, "back to hiding", reqKeys(m), "4", "5")
	if c := m.selectedCall(); c.Key != "4" {
		t.Fatalf("hiding again moved the selection to %s", c.Key)
	}
}

// The notifications pane takes an expression too, within the kind K
// shows; highlight mode and n work there as well.
func TestFilterNotifications(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 120, 40)
	press(m, "focus-next")
	all := m.visibleNotes()
	filterTo(m, "~k log")
	if n := m.visibleNotes(); n != 2 {
		t.Fatalf("~k log shows %d rows, want 2", n)
	}
	if s := screen(m); !strings.Contains(s, fmt.Sprintf("Notifications 2 of %d · filter ~k log", all)) {
		t.Fatalf("title:\n%s", s)
	}
	press(m, "kind-next") // log: the same two
	settle(m)
	if n := m.visibleNotes(); n != 2 {
		t.Fatalf("kind log + ~k log shows %d rows", n)
	}
	press(m, "kind-next") // progress: none is a log
	settle(m)
	if n := m.visibleNotes(); n != 0 || !strings.Contains(screen(m), "no row matches the filter") {
		t.Fatalf("kind progress + ~k log shows %d rows:\n%s", n, screen(m))
	}
	press(m, "filter-clear")
	if n := m.visibleNotes(); n != 2 {
		t.Fatalf("kind progress without a filter shows %d rows, want 2", n)
	}
	for m.h.filter != kindAll {
		press(m, "kind-next")
	}
	filterTo(m, "panic")
	press(m, "filter-mode", "top", "match-next")
	if it := m.selectedNote(); it == nil || it.Frame.Kind != transport.Stderr {
		t.Fatalf("n in the notifications pane went to %+v, want the stderr line", it)
	}
}

// Calls that arrive, run and end after the filter was set are checked as
// they come: a running call is checked again when it ends.
func TestFilterFollowsLiveCalls(t *testing.T) {
	m, s, f := newLive(t, nil)
	filterTo(m, "~s ok")
	c := s.Call("tools/call", map[string]any{"name": "echo"})
	f.sentWith(t, `"name":"echo"`)
	refresh(m)
	settle(m)
	sameKeys(t, "running", reqKeys(m))
	f.inject(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"pong-text"}]}}`)
	<-c.Done()
	refresh(m)
	sameKeys(t, "ended ok", reqKeys(m), "1")

	// Not volatile: the answer's text is found once the call ends.
	filterTo(m, "pong-text-2")
	c = s.Call("tools/call", map[string]any{"name": "echo"})
	f.sentWith(t, `"id":2`)
	refresh(m)
	settle(m)
	sameKeys(t, "before the answer", reqKeys(m))
	f.inject(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"pong-text-2"}]}}`)
	<-c.Done()
	refresh(m)
	sameKeys(t, "after the answer", reqKeys(m), "2")
}

// A filter over a pane of a hundred thousand rows is checked in bounded
// steps: one step checks at most filterBatch rows, keys are handled
// between steps, and the title says how far it got.
func TestFilterLargePaneIsStepped(t *testing.T) {
	const calls = 50_000 // 100,000 frames, rows read back from the journal
	m := newTestModel(t, loadFrames(t, manyCalls(calls)), 120, 40)
	if m.reqLen() != calls {
		t.Fatalf("%d rows, want %d", m.reqLen(), calls)
	}
	press(m, "filter")
	typeText(m, "~t echo & ~e")
	if got := m.find.req.next; got > filterBatch {
		t.Fatalf("typing checked %d calls at once; a step checks at most %d", got, filterBatch)
	}
	m.Update(filterStepMsg{})
	if got := m.find.req.next; got == 0 || got > 2*filterBatch {
		t.Fatalf("after one step %d calls were checked; want 1..%d", got, 2*filterBatch)
	}
	if !strings.Contains(screen(m), "checking ") {
		t.Fatalf("the title does not say the check is under way:\n%s", screen(m))
	}
	press(m, "filter-apply", "top", "down") // keys work while it runs
	if m.find.prompt != nil || m.req.sel != 1 {
		t.Fatalf("keys between steps were not handled (sel %d)", m.req.sel)
	}
	steps := settle(m)
	if min := calls/filterBatch - 2; steps < min {
		t.Fatalf("the filter finished in %d steps; bounded steps need at least %d", steps, min)
	}
	want := 0
	for i := 0; i < calls; i++ {
		if i%3 == 0 && i%5 == 0 {
			want++
		}
	}
	if n := m.reqLen(); n != want {
		t.Fatalf("%d calls match, want %d", n, want)
	}
	if strings.Contains(screen(m), "checking ") {
		t.Fatal("the title still says checking")
	}
}

// manyCalls is a session of n answered calls: every third an echo, every
// fifth an error.
func manyCalls(n int) []transport.Frame {
	out := make([]transport.Frame, 0, 2*n)
	for i := 0; i < n; i++ {
		tool := "slow"
		if i%3 == 0 {
			tool = "echo"
		}
		out = append(out, msg(float64(i)/1000, transport.Out, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"i":%d}}}`, i+1, tool, i)))
		res := `{"content":[{"type":"text","text":"fine"}]}`
		if i%5 == 0 {
			res = `{"content":[{"type":"text","text":"broke"}],"isError":true}`
		}
		out = append(out, msg(float64(i)/1000+0.0005, transport.In, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":%s}`, i+1, res)))
	}
	return out
}

// The catalog's find is fuzzy over names and titles, and takes a
// description when its letters come close together there; esc clears
// it before it closes the catalog.
func TestCatalogFind(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 120, 40)
	loadTools(m, `{"tools":[{"name":"slow","title":"Slow task","description":"Works slowly"},{"name":"echo","description":"Echo the message back"},
		{"name":"fail","description":"Always fails"},{"name":"search_docs","title":"Search documents"},{"name":"get_weather","description":"Weather for a city"}]}`)
	press(m, "catalog", "catalog-find")
	shown := func() []string {
		return m.catalog.Names(0)
	}
	find := func(q string, want ...string) {
		t.Helper()
		key(m, "ctrl+u")
		typeText(m, q)
		sameKeys(t, "find "+q, shown(), want...)
	}
	find("echo", "echo", "search_docs") // the exact name first; "sEarCH dOcuments" after
	find("sdoc", "search_docs")         // fuzzy: letters in order, not together
	find("city", "get_weather")         // by its description
	find("ehmb")                        // scattered over a description: no
	find("slo", "slow")                 // name first
	find("wthr", "get_weather")
	if s := screen(m); !strings.Contains(s, "find “wthr”") || !strings.Contains(s, "tools (1/5)") || !strings.Contains(s, "find › wthr") {
		t.Fatalf("the find is not shown:\n%s", s)
	}
	key(m, "ctrl+u")
	typeText(m, "echo")
	press(m, "filter-apply", "open") // the best match is selected
	if f, ok := topView[*formview.Form](m); !ok || !strings.Contains(f.Title(), "Call tool echo") {
		t.Fatalf("enter after the find should open echo's form, got %T", m.top())
	}
	press(m, "form-cancel", "catalog-close")
	if !m.inCat || len(shown()) != 5 {
		t.Fatalf("the first esc should clear the find and stay (in catalog %v, %d rows)", m.inCat, len(shown()))
	}
	press(m, "catalog-close")
	if m.inCat {
		t.Fatal("the second esc should close the catalog")
	}
}

// Goldens of the new views at both sizes.
func TestGoldenFind(t *testing.T) {
	cases := []struct {
		name   string
		frames func() []transport.Frame
		setup  func(m *Model)
	}{
		{"requests-filter", fixtureFrames, func(m *Model) { filterTo(m, "~e") }},
		{"requests-filter-highlight", fixtureFrames, func(m *Model) { filterTo(m, "~m tools/call"); press(m, "filter-mode", "top", "match-next") }},
		{"requests-filter-error", fixtureFrames, func(m *Model) { press(m, "filter"); typeText(m, "~t echo | (~dur >") }},
		{"notifications-filter", fixtureFrames, func(m *Model) { press(m, "focus-next"); filterTo(m, "~k log | ~k stderr") }},
		{"catalog-find", fixtureFrames, func(m *Model) {
			loadPage(m, 0, `{"tools":[{"name":"slow","title":"Slow task","description":"Works \u001b[2J slowly"},{"name":"echo","description":"Echo"},{"name":"sample","title":"Ask the model"}]}`)
			press(m, "catalog", "catalog-find")
			typeText(m, "slo")
		}},
	}
	for _, c := range cases {
		for _, sz := range sizes {
			name := fmt.Sprintf("%s-%dx%d", c.name, sz.w, sz.h)
			t.Run(name, func(t *testing.T) {
				m := newTestModel(t, loadFrames(t, c.frames()), sz.w, sz.h)
				c.setup(m)
				settle(m)
				got := screen(m)
				checkSize(t, got, sz.w, sz.h)
				assertInert(t, m.Render())
				golden(t, name, got)
			})
		}
	}
}

// BenchmarkFilterSteps is what a filter costs the UI loop over a large
// pane: the time of each step (the longest the loop is held), the keys
// handled between steps, and how long the whole check takes. Figures, not
// assertions: the machine is shared.
func BenchmarkFilterSteps(b *testing.B) {
	cases := []struct {
		name  string
		make  func(b *testing.B) *session.Session
		notes bool
		expr  string
	}{
		{"requests/calls=100k", func(b *testing.B) *session.Session { return loadFrames(b, manyCalls(100_000)) }, false, "~t echo & ~e"},
		{"requests-text/calls=100k", func(b *testing.B) *session.Session { return loadFrames(b, manyCalls(100_000)) }, false, "broke"},
		{"notifications/rows=100k", func(b *testing.B) *session.Session { s, _ := floodSession(b, 100_000); return s }, true, "~k log"},
		{"notifications/rows=1M", func(b *testing.B) *session.Session { s, _ := floodSession(b, 1_000_000); return s }, true, "step 9"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			s := c.make(b)
			m := New(Options{Session: s, Clipboard: func(string) error { return nil }})
			m.Update(windowSize(120, 40))
			if c.notes {
				press(m, "focus-next")
			}
			f, err := filter.Parse(c.expr)
			if err != nil {
				b.Fatal(err)
			}
			down := m.km.Press("down")
			var steps, keys []time.Duration
			var total time.Duration
			for b.Loop() {
				steps, keys = steps[:0], keys[:0]
				t0 := time.Now()
				if c.notes {
					m.setNoteFilter(c.expr, f)
				} else {
					m.setCallFilter(c.expr, f)
				}
				for m.find.busy(m) {
					t1 := time.Now()
					m.Update(filterStepMsg{})
					steps = append(steps, time.Since(t1))
					t1 = time.Now()
					m.Update(down) // a key that arrives between two steps
					_ = m.View()
					keys = append(keys, time.Since(t1))
				}
				total = time.Since(t0)
			}
			report(b, "step-", steps)
			report(b, "key-", keys)
			b.ReportMetric(float64(total.Milliseconds()), "total-ms")
		})
	}
}

// The help overlay lists the filter's keys, the catalog's find and the
// info view: it is generated from the keymap.
func TestHelpListsFindKeys(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 120, 40)
	press(m, "help")
	hp, ok := topView[*help.View](m)
	if !ok {
		t.Fatalf("help did not open: %T", m.top())
	}
	all := ansi.Strip(strings.Join(hp.Lines(), "\n"))
	for _, want := range []string{"/ f              filter the pane", "esc              clear the pane's filter",
		"H                filter mode", "n                next match", "K                show one kind of row",
		"/ f              find (fuzzy", "i                session info", "enter            keep the filter"} {
		if !strings.Contains(all, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

// A catalog opened again starts without the last find, and / starts a
// new find rather than appending to the last one (issue 23: "elic" then
// "long" found nothing for "eliclong").
func TestCatalogFindStartsFresh(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 120, 40)
	loadTools(m, `{"tools":[{"name":"elicit"},{"name":"longRunning"},{"name":"echo"}]}`)
	press(m, "catalog", "catalog-find")
	typeText(m, "elic")
	press(m, "filter-apply", "catalog-find")
	typeText(m, "long")
	press(m, "filter-apply")
	if got := m.catalog.Query(); got != "long" {
		t.Fatalf("a second / appended to the find: %q", got)
	}
	if s := screen(m); strings.Contains(s, "nothing here matches") || !strings.Contains(s, "longRunning") {
		t.Fatalf("the find for long shows:\n%s", s)
	}
	press(m, "catalog-find", "filter-cancel")
	if got := m.catalog.Query(); got != "long" {
		t.Fatalf("esc on a new find should bring the last back, got %q", got)
	}
	press(m, "catalog") // closes
	press(m, "catalog")
	if s := screen(m); m.catalog.Query() != "" || strings.Contains(s, "find “") {
		t.Fatalf("a reopened catalog keeps the find %q:\n%s", m.catalog.Query(), s)
	}
}
