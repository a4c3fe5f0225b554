package ui

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/testkit/testservers"
	"mcpscope/themes"
	"mcpscope/transport"
)

// TestQuitAsksBeforeLosingCalls: q with a running call that cannot be
// detached asks first, naming it and why; esc (or n) stays, with the call
// still running; q again (or y) quits. Quick calls (a listing) are no
// reason to ask, and with nothing running q quits at once.
func TestQuitAsksBeforeLosingCalls(t *testing.T) {
	s, f := liveSession(t, nil)
	m := newTestModel(t, s, 100, 24)
	m.opts.DetachOnQuit = true
	s.Call("tools/list", nil)
	c := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 600}})
	f.sentWith(t, `"slow"`)
	refresh(m)

	press(m, "quit")
	if m.quit {
		t.Fatal("q quit at once with a call running that cannot be detached")
	}
	sc := screen(m)
	golden(t, "quit-ask-100x24", sc)
	if !strings.Contains(sc, "Quit? 1 running call would be lost") || !strings.Contains(sc, "#"+c.Key+" tools/call slow") ||
		strings.Contains(sc, "tools/list") || !strings.Contains(sc, "no SSE event ids") {
		t.Fatalf("the panel does not name the call that would be lost (and only it):\n%s", sc)
	}
	for _, k := range []tea.KeyPressMsg{{Code: tea.KeyEscape}, {Code: 'n', Text: "n"}} {
		m.Update(k)
		if m.quit || strings.Contains(screen(m), "would be lost") || c.Snapshot().State.Ended() {
			t.Fatalf("%s should stay, the call running:\n%s", k, screen(m))
		}
		press(m, "quit")
		if !strings.Contains(screen(m), "would be lost") {
			t.Fatalf("q did not ask again:\n%s", screen(m))
		}
	}
	m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"}) // q again: quit anyway
	if !m.quit {
		t.Fatalf("q on the panel did not quit:\n%s", screen(m))
	}

	// y confirms too.
	m2 := newTestModel(t, s, 100, 24)
	press(m2, "quit")
	m2.Update(tea.KeyPressMsg{Code: 'y', Text: "y"})
	if !m2.quit {
		t.Fatal("y on the panel did not quit")
	}

	// Nothing running that matters: q quits at once.
	s2, _ := liveSession(t, nil)
	m3 := newTestModel(t, s2, 100, 24)
	s2.Call("tools/list", nil)
	press(m3, "quit")
	if !m3.quit {
		t.Fatalf("q asked with only a listing running:\n%s", screen(m3))
	}
}

// TestQuitDetachesWithoutAsking: a running call that can be rejoined (an
// HTTP server with an event store) is detached when the inspector exits,
// not lost: q quits at once. A session nobody detaches on exit (the live
// one a recording's replays went to) asks about the same call.
func TestQuitDetachesWithoutAsking(t *testing.T) {
	srv := testservers.StartHTTPServer(t, testservers.HTTPOpts{EventStore: true})
	store := &statestore.FileStore{Dir: t.TempDir()}
	s := session.New(transport.NewHTTP(transport.HTTPOptions{URL: srv.URL}), session.Options{Timeout: -1, MaxTimeout: -1,
		StateStore: store, Rejoin: session.RejoinInfo{Target: srv.URL}})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), uiWait)
	defer cancel()
	if _, err := s.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	m := New(Options{Session: s, Theme: themes.ByName("dark"), StateStore: store, Target: []string{srv.URL}, DetachOnQuit: true})
	m.Update(windowSize(120, 30))
	c := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 30, "steps": 30}})
	waitStoreFor(t, m, "the call to be rejoinable", func() bool { return s.Rejoinable(c) })
	press(m, "quit")
	if !m.quit {
		t.Fatalf("q asked though the running call can be detached:\n%s", screen(m))
	}
	// Without DetachOnQuit (a session nobody detaches on exit) it would be lost.
	m.quit = false
	m.opts.DetachOnQuit = false
	press(m, "quit")
	if m.quit || !strings.Contains(screen(m), "#"+c.Key+" tools/call slow") {
		t.Fatalf("q did not ask about a call nobody detaches:\n%s", screen(m))
	}
}

// TestTypeahead: keys typed while the inspector connected are taken once
// it draws, in order; an arrow's escape sequence is dropped whole.
func TestTypeahead(t *testing.T) {
	var got []string
	for _, k := range typeahead([]byte("C\r\x1b[Ax\x1b\t\x7f\x05")) {
		got = append(got, k.String())
	}
	if want := "C enter x esc tab backspace ctrl+e"; strings.Join(got, " ") != want {
		t.Fatalf("typeahead: %q, want %q", strings.Join(got, " "), want)
	}
}
