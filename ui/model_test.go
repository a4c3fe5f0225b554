package ui

import (
	"context"
	"encoding/json"
	"image/color"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/testkit/waitfor"
	"mcpscope/themes"
	"mcpscope/transport"
	"mcpscope/ui/detail"
	"mcpscope/ui/editor"
	"mcpscope/ui/help"
)

// TestServerTextInert renders every view over hostile server text and
// checks that the only escape sequences on screen are our own SGR colours:
// no OSC (52 clipboard, titles), no CSI other than 'm', no BEL, no C1, no
// bidi controls.
func TestServerTextInert(t *testing.T) {
	for _, th := range []themes.Theme{themes.ByName("dark"), themes.ByName("high-contrast"), themes.Plain()} {
		m := newTestModel(t, loadFixture(t), 120, 40)
		m.th = th
		views := [][]string{nil, {"focus-next"}, {"open"}, {"tab-next"}, {"tab-next"}, {"tab-next"}, {"detail-close", "focus-next", "top"}, {"open"}, {"tab-next"}}
		for _, v := range views {
			press(m, v...)
			// Walk every notification row into view too.
			for i := 0; i < 12; i++ {
				assertInert(t, m.Render())
				press(m, "down")
			}
		}
		if !strings.Contains(screen(m)+screenAll(t), "␛") {
			t.Error("escape characters should stay visible as ␛")
		}
	}
}

func screenAll(t *testing.T) string {
	m := newTestModel(t, loadFixture(t), 120, 40)
	return screen(m)
}

func assertInert(t *testing.T, s string) {
	t.Helper()
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == 0x1b:
			j := i + 1
			if j >= len(s) || s[j] != '[' {
				t.Fatalf("non-CSI escape at %d: %q", i, s[i:min(len(s), i+12)])
			}
			j++
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';' || s[j] == ':') {
				j++
			}
			if j >= len(s) || s[j] != 'm' {
				t.Fatalf("CSI other than SGR at %d: %q", i, s[i:min(len(s), j+1)])
			}
			i = j
		case c == 0x07, c < 0x20 && c != '\n':
			t.Fatalf("control byte %#x at %d: %q", c, i, s[max(0, i-20):min(len(s), i+20)])
		}
	}
	for _, r := range []string{"\u202e", "\u202a", "\u2066", "\u200f", "\u0085", "\u009b", "\u009d"} {
		if strings.Contains(s, r) {
			t.Fatalf("screen holds %q", r)
		}
	}
}

// mockServer answers nothing by itself; tests inject what they need.
func newLive(t *testing.T, r session.Responder) (*Model, *session.Session, *fakeTransport) {
	s, f := liveSession(t, r)
	m := New(Options{Session: s, Responder: nil, Theme: themes.ByName("dark"), Clipboard: func(string) error { return nil },
		StateStore: &statestore.FileStore{Dir: t.TempDir()}})
	m.Update(windowSize(100, 30))
	return m, s, f
}

func refresh(m *Model) { m.Update(storeChangedMsg{}) }

func TestCancelAndReplay(t *testing.T) {
	m, s, f := newLive(t, nil)
	c := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]int{"seconds": 30}})
	f.sentWith(t, `"name":"slow"`)
	f.inject(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpscope-1","progress":2,"total":10,"message":"step 2/10"}}`)
	refresh(m)
	if !strings.Contains(screen(m), "2/10") {
		t.Fatalf("progress not shown:\n%s", screen(m))
	}
	press(m, "cancel-call")
	f.sentWith(t, `notifications/cancelled`)
	if st := c.Snapshot().State; st != session.StateCancelled {
		t.Fatalf("state %s after cancel", st)
	}
	refresh(m)
	if !strings.Contains(screen(m), "cancelled") {
		t.Fatalf("no cancelled row:\n%s", screen(m))
	}
	press(m, "replay")
	refresh(m)
	calls := s.Calls()
	if len(calls) != 2 || calls[1].Method != "tools/call" || calls[1].Name != "slow" || calls[1].Key == c.Key {
		t.Fatalf("replay made %+v", calls)
	}
	if !strings.Contains(f.sentWith(t, `"id":2`), `"seconds":30`) {
		t.Fatal("replay lost the params")
	}
	// A late answer to the cancelled call is kept and flagged.
	f.inject(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	refresh(m)
	press(m, "top")
	if !strings.Contains(screen(m), "late") {
		t.Fatalf("late response not flagged:\n%s", screen(m))
	}
}

func TestEditReplayAndRawSend(t *testing.T) {
	m, s, f := newLive(t, nil)
	s.Call("tools/call", map[string]any{"name": "echo", "arguments": map[string]string{"message": "a"}})
	refresh(m)
	press(m, "edit-replay", "editor-clear")
	typeText(m, `{"name":"echo","arguments":{"message":"edited"}}`)
	press(m, "editor-submit")
	if !strings.Contains(f.sentWith(t, `edited`), `"id":2`) {
		t.Fatal("edited replay not sent with a new id")
	}
	press(m, "send-raw", "editor-clear")
	typeText(m, `{"jsonrpc":"2.0","id":"mine","method":"ping"}`)
	press(m, "editor-submit")
	f.sentWith(t, `"id":"mine"`)
	press(m, "send-raw", "editor-clear")
	typeText(m, `not json`)
	press(m, "editor-submit")
	if _, ok := topView[*editor.View](m); !ok || !strings.Contains(screen(m), "not valid JSON: line 1, column 2: invalid character 'o' in literal null") {
		t.Fatalf("bad raw input should keep the editor open with the error:\n%s", screen(m))
	}
	press(m, "editor-cancel")
	if m.top() != nil {
		t.Fatal("esc did not close the editor")
	}
}

// answerPrompt runs Respond in the background and hands the prompt to the
// model the way the program would.
func answerPrompt(t *testing.T, m *Model, r *Responder, method, params string) chan answer {
	out := make(chan answer, 1)
	go func() {
		res, err := r.Respond(context.Background(), session.ServerRequest{Method: method, Params: json.RawMessage(params), Key: "1", ID: json.RawMessage("1")})
		out <- answer{res, err}
	}()
	msg := waitPrompt(r)()
	m.Update(msg)
	return out
}

func TestElicitationForm(t *testing.T) {
	r := NewResponder(nil, true)
	m, _, _ := newLive(t, r)
	m.resp = r
	schema := `{"message":"Who are you?","requestedSchema":{"type":"object","properties":{"name":{"type":"string","minLength":2},"age":{"type":"integer","minimum":0},"colour":{"type":"string","enum":["red","green"]}},"required":["name"]}}`
	got := answerPrompt(t, m, r, "elicitation/create", schema)
	if _, ok := m.top().(*form); !ok {
		t.Fatalf("no form for elicitation:\n%s", screen(m))
	}
	press(m, "form-submit") // name is required: must not send
	if !strings.Contains(screen(m), "required") {
		t.Fatalf("validation not shown:\n%s", screen(m))
	}
	typeText(m, "Ada")
	press(m, "form-next")
	typeText(m, "x")
	press(m, "form-submit")
	if !strings.Contains(screen(m), "not a number") {
		t.Fatalf("number validation not shown:\n%s", screen(m))
	}
	press(m, "form-clear") // the field holds "x"
	typeText(m, "36")
	press(m, "form-next", "form-choice-next", "form-choice-next", "form-submit")
	a := <-got
	if a.err != nil || !strings.Contains(string(a.result), `"action":"accept"`) || !strings.Contains(string(a.result), `"content":{"name":"Ada","age":36,"colour":"green"}`) {
		t.Fatalf("answer %s %v", a.result, a.err)
	}
	if m.top() != nil {
		t.Fatal("form still open after accept")
	}

	got = answerPrompt(t, m, r, "elicitation/create", schema)
	press(m, "form-decline")
	if a := <-got; string(a.result) != `{"action":"decline"}` {
		t.Fatalf("decline gave %s", a.result)
	}
	got = answerPrompt(t, m, r, "elicitation/create", schema)
	press(m, "form-cancel")
	if a := <-got; string(a.result) != `{"action":"cancel"}` {
		t.Fatalf("cancel gave %s", a.result)
	}
}

func TestSamplingAndRoots(t *testing.T) {
	r := NewResponder([]session.Root{{URI: "file:///a", Name: "A"}}, true)
	m, _, _ := newLive(t, r)
	m.resp = r
	got := answerPrompt(t, m, r, "sampling/createMessage", `{"messages":[{"role":"user","content":{"type":"text","text":"Capital of France?"}}],"maxTokens":10}`)
	if !strings.Contains(screen(m), "Capital of France?") {
		t.Fatalf("sampling request not shown:\n%s", screen(m))
	}
	typeText(m, "Paris")
	press(m, "editor-submit")
	if a := <-got; !strings.Contains(string(a.result), `"text":"Paris"`) {
		t.Fatalf("sampling answer %s", a.result)
	}
	got = answerPrompt(t, m, r, "sampling/createMessage", `{"messages":[]}`)
	press(m, "editor-decline")
	if a := <-got; a.err == nil {
		t.Fatal("declined sampling must be an error")
	}
	got = answerPrompt(t, m, r, "roots/list", `{}`)
	if !strings.Contains(screen(m), "file:///a A") {
		t.Fatalf("roots not prefilled:\n%s", screen(m))
	}
	typeText(m, "file:///b")
	press(m, "roots-answer")
	a := <-got
	if !strings.Contains(string(a.result), `{"uri":"file:///a","name":"A"},{"uri":"file:///b","name":"b"}`) {
		t.Fatalf("roots answer %s", a.result)
	}
	if len(r.Roots()) != 2 {
		t.Fatal("edited roots not kept for next time")
	}
}

func TestPromptWithdrawn(t *testing.T) {
	r := NewResponder(nil, true)
	m, _, _ := newLive(t, r)
	m.resp = r
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		r.Respond(ctx, session.ServerRequest{Method: "elicitation/create", Params: json.RawMessage(`{"message":"x"}`)})
		close(done)
	}()
	msg := waitPrompt(r)().(serverPromptMsg)
	m.Update(msg)
	cancel()
	<-done
	m.Update(watchPrompt(msg.p)())
	if m.top() != nil || !strings.Contains(screen(m), "withdrew") {
		t.Fatalf("withdrawn prompt still shown:\n%s", screen(m))
	}
}

func TestNotificationsFilterAndPause(t *testing.T) {
	m, _, f := newLive(t, nil)
	f.inject(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}`)
	f.inject(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"demo://clock"}}`)
	refresh(m)
	press(m, "focus-next", "kind-next") // log
	if s := screen(m); !strings.Contains(s, "hello") || strings.Contains(s, "demo://clock") {
		t.Fatalf("log filter:\n%s", s)
	}
	press(m, "kind-next", "kind-next") // progress → notify
	if s := screen(m); strings.Contains(s, "hello") || !strings.Contains(s, "demo://clock") {
		t.Fatalf("notify filter:\n%s", s)
	}
	for m.h.filter != kindAll {
		press(m, "kind-next")
	}
	press(m, "pause")
	f.inject(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"while paused"}}`)
	refresh(m)
	if s := screen(m); strings.Contains(s, "while paused") || !strings.Contains(s, "+1 new") {
		t.Fatalf("paused pane moved:\n%s", s)
	}
	press(m, "pause")
	if !strings.Contains(screen(m), "while paused") {
		t.Fatal("resume did not show the new row")
	}
}

func TestCopyAndHelpAndTheme(t *testing.T) {
	var clip []string
	s, f := liveSession(t, nil)
	m := New(Options{Session: s, Theme: themes.ByName("dark"), Clipboard: func(x string) error { clip = append(clip, x); return nil },
		Target: []string{"http://localhost:8080/mcp"}})
	m.Update(windowSize(100, 30))
	s.Call("tools/call", map[string]any{"name": "echo", "arguments": map[string]string{"message": "it's"}})
	f.sentWith(t, `"name":"echo"`) // sent (the send loop runs apart)
	f.inject(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"it's"}]}}`)
	refresh(m)
	press(m, "copy")
	if len(clip) != 1 || !strings.Contains(clip[0], `"text": "it's"`) || !strings.Contains(screen(m), "copied result of call 1") {
		t.Fatalf("copy: %q\n%s", clip, screen(m))
	}
	press(m, "copy-command")
	if !strings.Contains(screen(m), "Copy call 1 as") {
		t.Fatalf("Y offers a choice:\n%s", screen(m))
	}
	press(m, "choose")
	if want := `mcpscope call echo --args '{"message":"it'\''s"}' http://localhost:8080/mcp`; len(clip) != 2 || clip[1] != want {
		t.Fatalf("command line %q, want %q", clip, want)
	}
	press(m, "copy-command", "choose-down", "choose")
	if len(clip) != 3 || !strings.HasPrefix(clip[2], "curl -sS -N -X POST http://localhost:8080/mcp") || !strings.Contains(clip[2], `--data-binary '{"jsonrpc":"2.0","id":1,"method":"tools/call"`) {
		t.Fatalf("curl command %q", clip)
	}
	press(m, "copy-command", "choose-down", "choose-down", "choose")
	if len(clip) != 4 || !strings.HasPrefix(clip[3], `{"jsonrpc":"2.0","id":1,"method":"tools/call"`) {
		t.Fatalf("JSON-RPC message %q", clip)
	}
	press(m, "help")
	if _, ok := topView[*help.View](m); !ok || !strings.Contains(screen(m), "next pane") {
		t.Fatal("help overlay missing")
	}
	press(m, "help")
	if m.top() != nil {
		t.Fatal("help did not close")
	}
	press(m, "theme")
	if m.th.Name != "light" {
		t.Fatalf("theme %s", m.th.Name)
	}
	m.th = themes.Plain()
	press(m, "theme")
	if !m.th.NoColor {
		t.Fatal("NO_COLOR theme must not cycle away")
	}
}

func TestCatalogToolForm(t *testing.T) {
	m, s, f := newLive(t, nil)
	m.info.Capabilities = json.RawMessage(`{"tools":{}}`)
	press(m, "catalog")
	f.sentWith(t, `tools/list`)
	f.inject(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"slow","inputSchema":{"type":"object","properties":{"seconds":{"type":"number","default":10,"maximum":60}}}}]}}`)
	refresh(m)
	if !strings.Contains(screen(m), "slow") {
		t.Fatalf("catalog:\n%s", screen(m))
	}
	press(m, "open", "form-clear")
	typeText(m, "99")
	press(m, "form-submit")
	if !strings.Contains(screen(m), "at most 60") {
		t.Fatalf("max not enforced:\n%s", screen(m))
	}
	press(m, "form-clear")
	typeText(m, "2")
	press(m, "form-submit")
	f.sentWith(t, `"arguments":{"seconds":2}`)
	// The call lands on its response tab, which shows the answer when it comes.
	if d, ok := topView[*detail.View](m); m.inCat || !ok || d.TabName() != "response" || !strings.Contains(screen(m), "(waiting for the response)") {
		t.Fatalf("after sending, the call's response should show:\n%s", screen(m))
	}
	f.inject(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"slept 2s"}]}}`)
	refresh(m)
	if sc := screen(m); !strings.Contains(sc, "\n slept 2s") || !strings.Contains(sc, "tools/call slow · ok") {
		t.Fatalf("the answer is not in view:\n%s", sc)
	}
	press(m, "detail-close")
	if m.top() != nil || m.selectedCall().Key != "2" {
		t.Fatalf("closing the detail should leave the call selected:\n%s", screen(m))
	}
	// list_changed makes the catalog fetch again.
	f.inject(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	refresh(m)
	waitfor.Within(uiWait, func() bool { refresh(m); return len(s.Calls()) >= 3 })
	if n := len(s.Calls()); n != 3 || s.Calls()[2].Method != "tools/list" {
		t.Fatalf("no refetch after list_changed (%d calls)", n)
	}
}

func TestMouse(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 120, 40)
	reqH, progH, _ := m.layout()
	m.Update(tea.MouseClickMsg{Button: tea.MouseLeft, X: 5, Y: 1 + reqH + progH + 2})
	if m.focus != paneNotes || m.note.sel != 1 {
		t.Fatalf("click: focus %d sel %d", m.focus, m.note.sel)
	}
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown, Y: 3})
	if m.req.sel != 4 {
		t.Fatalf("wheel: req sel %d", m.req.sel)
	}
}

// The copied curl command carries the headers the request was sent with,
// a secret's value only as a $VARIABLE reference.
func TestCurlLine(t *testing.T) {
	f := &transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`), Meta: transport.Meta{Headers: map[string]string{
		"Authorization": "Bearer [redacted]", "X-Api-Key": "[redacted]", "Mcp-Session-Id": "s1",
		"Mcp-Method": "tools/list", "Content-Length": "46"}}}
	got := curlLine("http://127.0.0.1:3001/mcp", f)
	want := `curl -sS -N -X POST http://127.0.0.1:3001/mcp -H "Authorization: Bearer $MCPSCOPE_BEARER" -H 'Mcp-Method: tools/list' -H 'Mcp-Session-Id: s1' -H "X-Api-Key: $X_API_KEY" --data-binary '{"jsonrpc":"2.0","id":3,"method":"tools/list"}'`
	if got != want {
		t.Fatalf("curlLine:\n got %s\nwant %s", got, want)
	}
}

// With no theme chosen, the terminal's background decides; a theme chosen
// with T is kept (SaveTheme) and no longer follows the background.
func TestThemeFollowsBackgroundUntilChosen(t *testing.T) {
	s, _ := liveSession(t, nil)
	var saved []string
	m := New(Options{Session: s, Theme: themes.ByName("dark"), AutoTheme: true,
		SaveTheme: func(n string) error { saved = append(saved, n); return nil }})
	m.Update(windowSize(100, 30))
	m.Update(tea.BackgroundColorMsg{Color: color.White})
	if m.th.Name != "light" {
		t.Fatalf("a light background gave theme %s", m.th.Name)
	}
	press(m, "theme")
	if len(saved) != 1 || saved[0] != m.th.Name || !strings.Contains(screen(m), "kept for next time") {
		t.Fatalf("T should keep the choice: saved %v, theme %s", saved, m.th.Name)
	}
	chosen := m.th.Name
	m.Update(tea.BackgroundColorMsg{Color: color.White})
	if m.th.Name != chosen {
		t.Fatalf("the background overrode the chosen theme: %s", m.th.Name)
	}
}

// The edit-and-replay editor answers no server request: it offers no
// decline, and ctrl+d says so instead of doing nothing.
func TestEditReplayOffersNoDecline(t *testing.T) {
	s, f := liveSession(t, nil)
	m := newTestModel(t, s, 120, 30)
	s.Call("tools/call", map[string]any{"name": "echo"})
	f.sentWith(t, "echo")
	refresh(m)
	press(m, "edit-replay")
	lines := strings.Split(screen(m), "\n")
	if footer := lines[len(lines)-1]; !strings.Contains(footer, "send") || strings.Contains(footer, "decline") {
		t.Fatalf("footer %q", footer)
	}
	press(m, "editor-decline")
	if _, ok := topView[*editor.View](m); !ok || !strings.Contains(m.flash, "decline: nothing to decline") {
		t.Fatalf("ctrl+d: top %T, flash %q", m.top(), m.flash)
	}
}

// A warning the session gives a person at once (here: an answer to an id
// nobody asked) is shown in the footer, in its own words, until a key is
// pressed; the next warning shows again.
func TestSessionWarningInTheFooter(t *testing.T) {
	s, f := liveSession(t, nil)
	m := newTestModel(t, s, 120, 30)
	f.inject(`{"jsonrpc":"2.0","id":99,"result":{}}`)
	m.Pull()
	if got := lastLine(screen(m)); !strings.Contains(got, "⚠ response to unknown id 99") {
		t.Fatalf("footer after the warning: %q", got)
	}
	m.Pull()
	if got := lastLine(screen(m)); !strings.Contains(got, "⚠ response to unknown id 99") {
		t.Fatalf("the warning went without a key: %q", got)
	}
	press(m, "down")
	if got := lastLine(screen(m)); strings.Contains(got, "⚠") {
		t.Fatalf("the warning stayed after a key: %q", got)
	}
	f.inject(`{"jsonrpc":"2.0","id":100,"result":{}}`)
	m.Pull()
	if got := lastLine(screen(m)); !strings.Contains(got, "⚠ response to unknown id 100") {
		t.Fatalf("footer after a second warning: %q", got)
	}
}

func lastLine(s string) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return l[len(l)-1]
}
