package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/themes"
	"mcpscope/ui/roots"
)

// rootsModel is a live session at w×h whose client answers roots/list
// (asking the user when ask).
func rootsModel(t *testing.T, w, h int, ask bool) (*Model, *Responder, *fakeTransport) {
	t.Helper()
	r := NewResponder([]session.Root{{URI: "file:///work/project", Name: "project"}}, ask)
	s, f := liveSession(t, r)
	m := New(Options{Session: s, Theme: themes.ByName("dark"), Now: func() time.Time { return at(5) }, Location: time.UTC,
		Clipboard: func(string) error { return nil }, StateStore: &statestore.FileStore{Dir: t.TempDir()}})
	m.resp = r
	m.Update(windowSize(w, h))
	return m, r, f
}

// Under --root ask the server's roots/list is a small panel over the
// panes, not a page: the requests pane stays in sight, and the title and
// the footer say the same of esc (it declines) (issue 40, item 5).
func TestGoldenRootsAskPanel(t *testing.T) {
	for _, sz := range wrapSizes {
		w, h := sz[0], sz[1]
		name := fmt.Sprintf("roots-ask-%dx%d", w, h)
		t.Run(name, func(t *testing.T) {
			m, r, _ := rootsModel(t, w, h, true)
			got := answerPrompt(t, m, r, "roots/list", `{}`)
			sc := screen(m)
			checkSize(t, sc, w, h)
			golden(t, name, sc)
			ls := strings.Split(sc, "\n")
			if !strings.Contains(ls[1], "Requests") {
				t.Errorf("the panes are not in sight above the panel:\n%s", sc)
			}
			if _, ok := topView[*roots.View](m); !ok {
				t.Fatalf("no roots panel:\n%s", sc)
			}
			panel := strings.Join(ls[len(ls)-9:], "\n")
			if !strings.Contains(panel, "file:///work/project project") {
				t.Errorf("the panel does not hold the roots:\n%s", sc)
			}
			foot := ls[len(ls)-1]
			if !strings.Contains(foot, "esc decline") || strings.Contains(sc, "cancel") {
				t.Errorf("the footer does not say esc declines, or something says cancel: %q\n%s", foot, sc)
			}
			if w >= 80 && !strings.Contains(sc, "esc declines") {
				t.Errorf("the title does not say esc declines:\n%s", sc)
			}
			press(m, "roots-decline")
			if a := <-got; a.err == nil {
				t.Fatalf("esc answered %s, want an error (declined)", a.result)
			}
		})
	}
}

// R changes the roots mid-session in the small panel: ctrl+s keeps them,
// the next roots/list is answered with them, and the server is told with
// notifications/roots/list_changed, which the client advertised; esc
// cancels and sends nothing (issue 40, item 5).
func TestRootsChangedMidSession(t *testing.T) {
	if !rootsListChanged(NewResponder(nil, false).Capabilities()) {
		t.Fatal("the client does not advertise roots.listChanged")
	}
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		w, h := sz[0], sz[1]
		m, r, f := rootsModel(t, w, h, false)
		press(m, "roots")
		sc := screen(m)
		checkSize(t, sc, w, h)
		golden(t, fmt.Sprintf("roots-edit-%dx%d", w, h), sc)
		if !strings.Contains(sc, "esc cancels") || !strings.Contains(strings.Split(sc, "\n")[h-1], "esc cancel") {
			t.Fatalf("the panel's title and footer do not both say esc cancels:\n%s", sc)
		}
		typeText(m, "/srv/data")
		press(m, "roots-cancel")
		if got := RootsLine(r.Roots()); got != "file:///work/project (project)" {
			t.Fatalf("esc changed the roots: %s", got)
		}
		press(m, "roots")
		typeText(m, "/srv/data")
		press(m, "roots-apply")
		if got := RootsLine(r.Roots()); got != "file:///work/project (project), file:///srv/data (data)" {
			t.Fatalf("the roots after ctrl+s: %s", got)
		}
		f.sentWith(t, `"method":"notifications/roots/list_changed"`)
		if sc := screen(m); !strings.Contains(strings.Join(strings.Fields(sc), " "), "told the server (notifications/roots/list_changed)") {
			t.Errorf("no flash says the server was told:\n%s", sc)
		}
		f.mu.Lock()
		n := 0
		for _, b := range f.sent {
			if strings.Contains(string(b), "list_changed") {
				n++
			}
		}
		f.mu.Unlock()
		if n != 1 {
			t.Errorf("%d list_changed notifications, want 1 (esc sends none)", n)
		}
	}
}

// A line that is not a root keeps the panel open, saying which.
func TestRootsPanelRefusesANonRoot(t *testing.T) {
	m, r, _ := rootsModel(t, 80, 24, false)
	press(m, "roots")
	typeText(m, "https://example.com")
	press(m, "roots-apply")
	if _, ok := topView[*roots.View](m); !ok || !strings.Contains(screen(m), "line 2: https://example.com: a root is a file:// URI or an absolute path") {
		t.Fatalf("a URL was taken as a root:\n%s", screen(m))
	}
	if len(r.Roots()) != 1 {
		t.Fatalf("the roots changed: %v", r.Roots())
	}
}
