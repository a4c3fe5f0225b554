package ui

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/framestore"
	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/ui/detail"
	"mcpscope/ui/help"
)

// bigText is the demo's big tool's text: numbered 64-byte lines, exactly
// size bytes.
func bigText(size int) string {
	var b strings.Builder
	for line := 1; b.Len() < size; line++ {
		l := fmt.Sprintf("line %08d ", line)
		b.WriteString(l + strings.Repeat(".", 63-len(l)) + "\n")
	}
	return b.String()[:size]
}

// detailBody is the detail's text rows joined without the gutter: what a
// reader sees of a wrapped line, end to end.
func detailBody(m *Model) string {
	lines := strings.Split(screen(m), "\n")
	var b strings.Builder
	for _, l := range lines[3 : len(lines)-2] {
		if _, n := utf8.DecodeRuneInString(l); n > 0 {
			b.WriteString(l[n:])
		}
	}
	return b.String()
}

// A 20 MiB result, held by the store as its head only (the journal has
// it), reads back once, in the background, and the detail shows its last
// line; its response and raw tabs share that one copy of the bytes.
func TestDetailReadsA20MiBResultToItsLastLine(t *testing.T) {
	s, f := journaledSession(t, nil)
	m := newTestModel(t, s, 120, 40)
	c := s.Call("tools/call", map[string]any{"name": "big"})
	f.sentWith(t, `"name":"big"`)
	res, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{
		"content": []any{map[string]any{"type": "text", "text": bigText(20 << 20)}}}})
	f.inject(string(res))
	waitStoreFor(t, m, "the call's end", func() bool { return c.Snapshot().State.Ended() })
	press(m, "open", "tab-next")
	d, _ := topView[*detail.View](m)
	var resp uint64
	s.Store().Scan(0, 0, func(e framestore.Entry) bool {
		if e.CallKey == c.Key && e.Class == journal.ClassResult {
			resp = e.Seq
		}
		return true
	})
	if it := s.Store().Get(resp); it == nil || !it.Cut {
		t.Fatal("the store holds the whole frame: this test wants the journal path")
	}
	waitStoreFor(t, m, "the result laid out", func() bool { return strings.Contains(screen(m), `"jsonrpc": "2.0"`) })
	press(m, "follow")
	body := detailBody(m)
	if !strings.Contains(body, `line 00327680 .................................................\n"`) || !strings.HasSuffix(strings.TrimRight(body, " "), "}") {
		t.Fatalf("the end of the result is not in view:\n%s", screen(m))
	}
	rs, raw := d.Doc(1), d.Doc(2)
	js, rw := rs.Segment(0).Bytes(), raw.Segment(raw.Lines()-1).Bytes()
	if len(js) != len(res) || &js[0] != &rw[0] {
		t.Fatalf("the response and raw tabs should share the frame's one copy (%d and %d bytes)", len(js), len(rw))
	}
	// The raw tab shows the same last line.
	press(m, "tab-next", "follow")
	if body := detailBody(m); !strings.Contains(body, `line 00327680`) {
		t.Fatalf("the raw tab's end:\n%s", screen(m))
	}
}

// space folds the object at the cursor into one line, - shows the
// outline, + opens everything again.
func TestDetailFolds(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 80, 24)
	press(m, "top", "down", "down", "open", "tab-next", "result-view", "down", "down", "down", "fold")
	if sc := screen(m); !strings.Contains(sc, `"result": {…}  2 keys`) || strings.Contains(sc, `"structuredContent"`) {
		t.Fatalf("fold at the cursor:\n%s", sc)
	}
	press(m, "unfold-all", "fold-all")
	sc := screen(m)
	if !strings.Contains(sc, `"result": {…}  2 keys`) || !strings.Contains(sc, "line 4 of 16 · 4 folded") {
		t.Fatalf("outline:\n%s", sc)
	}
	press(m, "unfold-all")
	if !strings.Contains(screen(m), `"structuredContent": {`) {
		t.Fatalf("unfold all:\n%s", screen(m))
	}
}

// A line longer than the view wraps; w turns wrapping off and → scrolls
// to what was past the edge.
func TestDetailWrapAndScrollSideways(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 80, 24)
	press(m, "top", "down", "down", "down", "down", "open", "tab-next", "tab-next")
	tail := `red\u001b[0m"}}`
	if !strings.Contains(screen(m), tail) {
		t.Fatalf("the wrapped raw line's end should show:\n%s", screen(m))
	}
	press(m, "wrap")
	if sc := screen(m); strings.Contains(sc, tail) || !strings.Contains(sc, "no wrap") {
		t.Fatalf("wrap off cuts at the edge:\n%s", sc)
	}
	press(m, "down", "down", "down", "scroll-right")
	if sc := screen(m); !strings.Contains(sc, tail) || !strings.Contains(sc, "col 40") {
		t.Fatalf("scrolled sideways:\n%s", sc)
	}
}

// ] and [ show the next and previous rows of the list on the same tab.
func TestDetailNextItem(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 120, 40)
	press(m, "top", "down", "open", "tab-next", "next-item")
	d, _ := topView[*detail.View](m)
	if sc := screen(m); d.Call().Key != "3" || d.TabName() != "response" || !strings.Contains(sc, "call 3 · tools/call echo") {
		t.Fatalf("] should show call 3's response:\n%s", sc)
	}
	press(m, "prev-item", "prev-item")
	if d.Call().Key != "1" || m.selectedCall().Key != "1" {
		t.Fatalf("[ twice: call %s, selected %s", d.Call().Key, m.selectedCall().Key)
	}
	press(m, "detail-close", "focus-next", "top", "open", "next-item")
	if d, _ := topView[*detail.View](m); d.Item() == nil || d.Item().Seq != 5 {
		t.Fatalf("] in a notification's detail should show the next notification:\n%s", screen(m))
	}
}

// The wheel scrolls the detail by rows.
func TestDetailWheel(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 80, 12)
	press(m, "top", "down", "down", "open", "tab-next", "result-view")
	// body is the detail's text rows, the cursor gutter taken off.
	body := func() []string {
		var out []string
		for _, l := range strings.Split(screen(m), "\n")[3:9] {
			_, n := utf8.DecodeRuneInString(l)
			out = append(out, l[n:])
		}
		return out
	}
	before := body()
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown, Y: 5})
	if after := body(); after[0] != before[3] || !strings.Contains(screen(m), "line 4 of 16") {
		t.Fatalf("wheel down: three rows down, the cursor on the first:\n%s", screen(m))
	}
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelUp, Y: 5})
	if after := body(); after[0] != before[0] {
		t.Fatalf("wheel up:\n%s", screen(m))
	}
}

// From 160 columns the detail sits beside the list; a click in the list
// shows that row.
func TestDetailSideBySide(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 200, 60)
	press(m, "top", "open")
	lw := m.listWidth()
	lines := strings.Split(screen(m), "\n")
	if !strings.Contains(lines[1], "Requests 5") || !strings.Contains(lines[1], "call 1 · initialize") {
		t.Fatalf("list and detail side by side:\n%s", screen(m))
	}
	for i, l := range lines[1 : len(lines)-1] {
		if r := []rune(l); len(r) <= lw || r[lw] != '│' {
			t.Fatalf("body row %d has no separator at column %d: %q", i+1, lw, l)
		}
	}
	assertInert(t, m.Render())
	m.Update(tea.MouseClickMsg{Button: tea.MouseLeft, X: 5, Y: 4}) // the list's third row
	if d, _ := topView[*detail.View](m); d.Call().Key != "3" || !strings.Contains(screen(m), "call 3 · tools/call echo") {
		t.Fatalf("a click in the list should show its row:\n%s", screen(m))
	}
	m.Update(windowSize(120, 40))
	if strings.Contains(screen(m), "Requests 5") {
		t.Fatal("below 160 columns the detail takes the whole width")
	}
}

// The help overlay lists the detail's keys.
func TestHelpListsDetailKeys(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 120, 40)
	press(m, "open", "help")
	hp, ok := topView[*help.View](m)
	if !ok {
		t.Fatalf("help did not open: %T", m.top())
	}
	all := strings.Join(hp.Lines(), "\n")
	for _, name := range []string{"wrap", "scroll-left", "scroll-right", "fold", "fold-all", "unfold-all", "next-item", "prev-item"} {
		b, _ := m.Keys().Get(name)
		if !strings.Contains(all, b.Help) {
			t.Errorf("help lacks %s (%q)", name, b.Help)
		}
	}
}

// A detail left open on a call that streams keeps the newest
// notifications only: what it holds stays bounded however long it runs.
func TestDetailStaysBoundedWhileACallStreams(t *testing.T) {
	m, s, f := newLive(t, nil)
	c := s.Call("tools/call", map[string]any{"name": "burst"})
	f.sentWith(t, `"name":"burst"`)
	refresh(m)
	press(m, "open", "tab-next")
	n := detail.MaxNotes + 500
	for i := 1; i <= n; i++ {
		f.inject(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpscope-%s","progress":%d}}`, c.Key, i))
		if i%100 == 0 {
			refresh(m)
		}
	}
	waitStoreFor(t, m, "every notification counted", func() bool { return strings.Contains(screen(m), fmt.Sprintf("notifications (%d)", n)) })
	d, _ := topView[*detail.View](m)
	if d.Frames() > detail.MaxNotes+2 {
		t.Fatalf("the detail holds %d frames, want at most %d", d.Frames(), detail.MaxNotes+2)
	}
	press(m, "tab-next", "tab-next", "tab-next") // notifications
	if sc := screen(m); !strings.Contains(sc, "(500 earlier correlated frames are in the journal; the newest 1000 follow)") {
		t.Fatalf("notifications tab:\n%s", sc)
	}
}

// The detail's footer names each key once with its meaning, offers v and
// s on a call (s dimmed, with its reason in ? and when pressed, while
// there is nothing to save), and leaves them out on a notification.
func TestDetailFooterHints(t *testing.T) {
	frames, _ := renderedFrames(t)
	m := newTestModel(t, loadFrames(t, frames), 120, 40)
	press(m, "top", "open")
	lines := strings.Split(m.Render(), "\n")
	foot := lines[len(lines)-1]
	if plain := ansi.Strip(foot); strings.Contains(plain, "tab tab") || !strings.Contains(plain, "tab next tab") ||
		!strings.Contains(plain, "v rendered/raw") || !strings.Contains(plain, "s save") {
		t.Fatalf("the footer of a call's detail: %q", plain)
	}
	if th := m.th; !strings.Contains(foot, th.Faint.Render("s save")) || !strings.Contains(foot, th.HelpKey.Render("v")) {
		t.Fatalf("on the request tab s should be dimmed and v not: %q", foot)
	}
	press(m, "help")
	hp, _ := topView[*help.View](m)
	if all := ansi.Strip(strings.Join(hp.Lines(), "\n")); !strings.Contains(all, "to a file — not now: nothing to save here") {
		t.Fatalf("? should say why s cannot save now:\n%s", all)
	}
	press(m, "help", "save-media")
	if sc := screen(m); !strings.Contains(sc, "save: nothing to save here: s saves an image, audio or blob in a rendered response") {
		t.Fatalf("s with nothing to save should say why:\n%s", sc)
	}
	press(m, "tab-next") // the rendered response, with an image: s is offered
	m.flash = ""         // the clock stands still: the flash would stay
	lines = strings.Split(m.Render(), "\n")
	if foot := lines[len(lines)-1]; !strings.Contains(foot, m.th.HelpKey.Render("s")) {
		t.Fatalf("on a rendered response with an image s should not be dimmed: %q", foot)
	}

	m = newTestModel(t, loadFixture(t), 120, 40)
	press(m, "focus-next", "top", "open", "result-view")
	sc := screen(m)
	foot = sc[strings.LastIndex(sc, "\n")+1:]
	if !strings.Contains(foot, "rendered/raw: a notification has no response to render") {
		t.Fatalf("v on a notification should say why not: %q", foot)
	}
	m.flash = ""
	sc = screen(m)
	if foot = sc[strings.LastIndex(sc, "\n")+1:]; strings.Contains(foot, "rendered/raw") || strings.Contains(foot, "s save") || !strings.Contains(foot, "esc close") {
		t.Fatalf("a notification's footer offers what only a call has: %q", foot)
	}
}

// The requests pane's cancel key cancels the call a detail shows, and the
// detail stays open on it; the progress of a call still waiting shows in
// its response tab.
func TestDetailCancelsItsCall(t *testing.T) {
	m, s, f := newLive(t, nil)
	c := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]int{"seconds": 30}})
	f.sentWith(t, `"name":"slow"`)
	f.inject(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpscope-1","progress":2,"total":10,"message":"step 2/10"}}`)
	refresh(m)
	press(m, "open", "tab-next")
	if sc := screen(m); !strings.Contains(sc, "(waiting for the response)") || !strings.Contains(sc, "progress ") || !strings.Contains(sc, "2/10 ") {
		t.Fatalf("the response tab of a call in progress:\n%s", sc)
	}
	press(m, "cancel-call")
	f.sentWith(t, `notifications/cancelled`)
	if st := c.Snapshot().State; st != session.StateCancelled {
		t.Fatalf("state %s after cancel in the detail", st)
	}
	if d, ok := topView[*detail.View](m); !ok || d.Call() != c {
		t.Fatalf("the detail should stay open on the call:\n%s", screen(m))
	}
}
