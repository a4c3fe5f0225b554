package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"mcpscope/transport"
	"mcpscope/ui/help"
)

// stringIDFrames are calls with string ids, as a raw send and a proxy
// give them ("raw-1", "mcpscope-<hex>-N"), and one string id that reads
// as a number.
func stringIDFrames() []transport.Frame {
	out, in := transport.Out, transport.In
	return []transport.Frame{
		msg(0.1, out, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpscope","version":"0.1.0-dev"}}}`),
		msg(0.2, in, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"demo","version":"1.0"}}}`),
		msg(1, out, `{"jsonrpc":"2.0","id":"raw-1","method":"tools/list"}`),
		msg(1.1, in, `{"jsonrpc":"2.0","id":"raw-1","result":{"tools":[]}}`),
		msg(2, out, `{"jsonrpc":"2.0","id":"mcpscope-1f2e3d4c-12","method":"tools/call","params":{"name":"echo","arguments":{}}}`),
		msg(2.1, in, `{"jsonrpc":"2.0","id":"mcpscope-1f2e3d4c-12","result":{"content":[]}}`),
		msg(3, out, `{"jsonrpc":"2.0","id":"7","method":"ping"}`),
		msg(3.1, in, `{"jsonrpc":"2.0","id":"7","result":{}}`),
	}
}

// String ids read without their quotes; "7" keeps them (the number 7 is
// another id); a long one is cut in its middle only where it does not
// fit (issue 40, item 8).
func TestGoldenStringIDs(t *testing.T) {
	for _, sz := range wrapSizes {
		w, h := sz[0], sz[1]
		name := fmt.Sprintf("requests-string-ids-%dx%d", w, h)
		t.Run(name, func(t *testing.T) {
			m := newTestModel(t, loadFrames(t, stringIDFrames()), w, h)
			got := screen(m)
			checkSize(t, got, w, h)
			golden(t, name, got)
			if strings.Contains(got, `"raw`) || strings.Contains(got, `"mcp`) || !strings.Contains(got, " raw-1 ") {
				t.Errorf("a string id is shown quoted or cut:\n%s", got)
			}
			if !strings.Contains(got, ` "7" `) {
				t.Errorf(`the string id "7" lost its quotes:`+"\n%s", got)
			}
			long := "mcpscope-1f2e3d4c-12"
			switch {
			case w >= 160 && !strings.Contains(got, long):
				t.Errorf("the long id is cut at %d columns:\n%s", w, got)
			case w < 160 && !regexp.MustCompile(`mcp\S*…\S*-12 `).MatchString(got):
				t.Errorf("the long id is not cut in its middle at %d columns:\n%s", w, got)
			}
		})
	}
	m := newTestModel(t, loadFrames(t, stringIDFrames()), 80, 24)
	press(m, "top", "down", "down", "open")
	if sc := screen(m); !strings.Contains(sc, "call mcpscope-1f2e3d4c-12 · tools/call echo") {
		t.Errorf("the detail's head does not name the id readably:\n%s", sc)
	}
}

// The status bar gives the cells it has to the session id instead of
// cutting it to 12 while cells stay empty (issue 40, item 8).
func TestStatusBarSessionIDUsesTheRoom(t *testing.T) {
	const id = "5f0c2a9e-6b1d-4c3e-9a77-0d4f8e2b1c63"
	for _, c := range []struct {
		w      int
		target string
		whole  bool
	}{{200, "", true}, {200, "stdio: demo-server --stdio", false}, {160, "", false}, {120, "", false}} {
		m := newTestModel(t, loadFixture(t), c.w, 30)
		m.info.SessionID, m.info.Target = id, c.target
		l := statusLine(m)
		if ansi.StringWidth(l) > c.w {
			t.Fatalf("%d: the status bar is %d wide", c.w, ansi.StringWidth(l))
		}
		if c.whole && !strings.Contains(l, "session "+id) {
			t.Errorf("%d columns: the session id is not whole: %q", c.w, l)
		}
		if strings.Contains(l, "session ") && !strings.Contains(l, "session "+id) && strings.Contains(l, "    ") {
			t.Errorf("%d columns: the session id is cut while cells stay empty: %q", c.w, l)
		}
	}
}

// The footer drops whole hints from its end, never cutting one in a word
// ("D detac…"); ? help stays while it fits (issue 40, item 8).
func TestFooterDropsWholeHints(t *testing.T) {
	all := "tab pane enter detail c cancel r replay e edit+replay y copy / filter C catalog ? help q quit d detach t tasks D detached"
	for _, w := range []int{60, 80, 100, 120, 200} {
		m := newTestModel(t, loadFixture(t), w, 24)
		ls := strings.Split(screen(m), "\n")
		foot := strings.TrimSpace(ls[len(ls)-1])
		if strings.Contains(foot, "…") {
			t.Errorf("%d: a hint is cut: %q", w, foot)
		}
		if !strings.HasPrefix(all, strings.TrimSuffix(strings.TrimSuffix(foot, "? help"), " ")) && !strings.HasPrefix(all, foot) {
			t.Errorf("%d: the footer is not the hints in order with the last ones dropped: %q", w, foot)
		}
		if !strings.Contains(foot, "? help") {
			t.Errorf("%d: ? help was dropped: %q", w, foot)
		}
	}
}

// A stdio call's detail has no http tab, and v, with no rendered view of
// an initialize result, is dimmed with its reason in ? (issue 40, item 8).
func TestDetailOfStdioCall(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 120, 40)
	press(m, "top", "open")
	sc := screen(m)
	if strings.Contains(sc, "│ http │") || !strings.Contains(sc, "request │ response │ raw │ notifications") {
		t.Fatalf("a stdio call's detail offers an http tab:\n%s", sc)
	}
	lines := strings.Split(m.Render(), "\n")
	if foot := lines[len(lines)-1]; !strings.Contains(foot, m.th.Faint.Render("v rendered/raw")) {
		t.Errorf("v is not dimmed for a response with no rendered view: %q", ansi.Strip(foot))
	}
	press(m, "help")
	hp, _ := topView[*help.View](m)
	if all := ansi.Strip(strings.Join(hp.Lines(), "\n")); !strings.Contains(all, "raw JSON — not now: this response has no rendered view") {
		t.Errorf("? does not say why v cannot act:\n%s", all)
	}
	press(m, "help", "result-view")
	if sc := screen(m); !strings.Contains(sc, "this response has no rendered view") {
		t.Errorf("v does not say why it does nothing:\n%s", sc)
	}
}
