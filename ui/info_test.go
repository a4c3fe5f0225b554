package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/transport"
)

// instructionsFrames is the fixture with a server that gives
// instructions (hostile bytes and a long paragraph) and capabilities.
func instructionsFrames() []transport.Frame {
	fr := fixtureFrames()
	fr[2] = msg(0.2, transport.In, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"logging":{},"resources":{"subscribe":true}},"serverInfo":{"name":"evil\u001b]52;c;ZXZpbA==\u0007srv","version":"6.6\u202e6"},"instructions":"Use the tools \u001b]52;c;cHduZWQ=\u0007 wisely.\nCall slow before fast; never call fail twice in a row, because it remembers and will fail harder each time it is called, which is documented nowhere else.\n\u202eReversed?"}}`)
	return fr
}

// The info view shows what the session knows, instructions wrapped and
// made inert, and copies it as text.
func TestInfoView(t *testing.T) {
	var clip []string
	s := loadFrames(t, instructionsFrames())
	m := New(Options{Session: s, Now: func() time.Time { return at(5) }, Location: time.UTC,
		Clipboard: func(c string) error { clip = append(clip, c); return nil }, StateStore: &statestore.FileStore{Dir: t.TempDir()}})
	m.Update(windowSize(80, 40))
	press(m, "info")
	got := screen(m)
	for _, want := range []string{"server        evil␛]52;c;ZXZpbA==␇srv 6.6", "protocol      2025-11-25 · legacy era",
		"connection    recording: offline · fixture.jsonl", "transport     stdio (the server is a child process)", "endpoint      demo-server --stdio",
		"server pid    4242", "started       2026-03-01 12:00:00 UTC (when it was recorded)", "fixture.jsonl",
		"Use the tools ␛]52;c;cHduZWQ=␇ wisely.", `"subscribe": true`} {
		if !strings.Contains(got, want) {
			t.Errorf("info view lacks %q", want)
		}
	}
	checkSize(t, got, 80, 40)
	assertInert(t, m.Render())
	// The long instruction is wrapped, not cut.
	if !strings.Contains(got, "documented") || !strings.Contains(got, "nowhere") {
		t.Errorf("the long line of the instructions was cut:\n%s", got)
	}
	press(m, "copy")
	if len(clip) != 1 || !strings.Contains(clip[0], "server pid    4242") || strings.Contains(clip[0], "\x1b") {
		t.Fatalf("copied %q", clip)
	}
	press(m, "info-close")
	if m.top() != nil {
		t.Fatal("esc did not close the info view")
	}
}

// The status bar says connected, reconnecting or disconnected, and at 80
// columns keeps the era while it shortens the rest.
func TestStatusBarConnectionAndEra(t *testing.T) {
	s, _ := liveSession(t, nil)
	s.Adopt(session.EraVerdict{Era: protocol.EraLegacy, Reason: "server/discover got HTTP 404 (the server predates 2026)"})
	m := newTestModel(t, s, 80, 24)
	refresh(m)
	bar := func() string { return strings.Split(screen(m), "\n")[0] }
	if b := bar(); !strings.Contains(b, "│ connected │") || !strings.Contains(b, "(legacy") || !strings.Contains(b, "calls 0") {
		t.Fatalf("status bar at 80: %q", b)
	}
	m.info.Reconnecting = 2 // what Info says while two resumes wait (session tests count them)
	if b := bar(); !strings.Contains(b, "reconnecting (2)") || !strings.Contains(b, "(legacy") {
		t.Fatalf("status bar while reconnecting: %q", b)
	}
	s.Close()
	refresh(m)
	if b := bar(); !strings.Contains(b, "disconnected") || !strings.Contains(b, "(legacy") {
		t.Fatalf("status bar after close: %q", b)
	}
	if b := bar(); ansi.StringWidth(b) > 80 {
		t.Fatalf("status bar is %d wide", ansi.StringWidth(b))
	}
}

// At 200 columns the era's reason shows its whole first clause (it was cut
// at 32 runes whatever the width); narrower, it gives way.
func TestStatusBarEraReasonWholeWhenRoom(t *testing.T) {
	for _, reason := range []string{
		"server/discover answered error -32601 (Method not found)",
		"no answer to server/discover on stdio (timed out after 3s)",
	} {
		s, _ := liveSession(t, nil)
		s.Adopt(session.EraVerdict{Era: protocol.EraLegacy, Reason: reason})
		clause, _, _ := strings.Cut(reason, " (")
		for _, w := range []int{200, 120, 80, 60} {
			m := newTestModel(t, s, w, 24)
			refresh(m)
			bar := strings.Split(screen(m), "\n")[0]
			if w >= 120 && !strings.Contains(bar, "(legacy: "+clause+")") {
				t.Errorf("at %d columns the era reason is cut: %q", w, bar)
			}
			if !strings.Contains(bar, "(legacy") || ansi.StringWidth(bar) > w {
				t.Errorf("at %d columns: %q", w, bar)
			}
		}
		s.Close()
	}
}

// The info view's golden at both sizes.
func TestGoldenInfo(t *testing.T) {
	for _, sz := range sizes {
		name := fmt.Sprintf("info-%dx%d", sz.w, sz.h)
		t.Run(name, func(t *testing.T) {
			m := newTestModel(t, loadFrames(t, instructionsFrames()), sz.w, sz.h)
			press(m, "info")
			// The journal lives in a temporary directory: a fixed path keeps
			// the golden stable (TestInfoView checks the real one).
			m.info.JournalPath = "/home/ada/.local/state/mcpscope/journals/20260301T120000-4242.jsonl"
			got := screen(m)
			checkSize(t, got, sz.w, sz.h)
			assertInert(t, m.Render())
			golden(t, name, got)
		})
	}
}

// Every new view renders within bounds at any size, without panicking.
func TestFindViewsAnySize(t *testing.T) {
	setups := [][]string{{"info"}, {"filter"}, {"focus-next", "filter"}, {"catalog", "catalog-find"}}
	for _, sz := range [][2]int{{1, 1}, {10, 3}, {20, 6}, {40, 10}, {80, 24}, {200, 60}} {
		for _, setup := range setups {
			m := newTestModel(t, loadFixture(t), sz[0], sz[1])
			press(m, setup...)
			typeText(m, "~t (") // a syntax error where the input takes one
			got := screen(m)
			if sz[0] >= 20 && sz[1] >= 6 {
				checkSize(t, got, sz[0], sz[1])
			}
		}
	}
}
