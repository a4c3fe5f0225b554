package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// startDetailTUI is startTUI with a choice of journal, waiting only for
// what every width shows (the status bar names the server only when it
// has room).
func startDetailTUI(t *testing.T, w, h int, journal bool) *tmux {
	t.Helper()
	tm := startDemo(t, w, h, journal)
	tm.waitFor("prompts/list", "Notifications")
	return tm
}

// detailText is the detail's text rows joined, the cursor gutter taken
// off: a wrapped line reads whole, end to end.
func detailText(sc string) string {
	lines := strings.Split(sc, "\n")
	var b strings.Builder
	in := false
	for _, l := range lines {
		switch {
		case strings.Contains(l, "request │ response") || strings.Contains(l, "message │ raw"):
			in = true
			continue
		case statusLine.MatchString(l):
			in = false
		}
		if in {
			if _, n := utf8.DecodeRuneInString(l); n > 0 {
				b.WriteString(l[n:])
			}
		}
	}
	return b.String()
}

var statusLine = regexp.MustCompile(`^(/.*: \d+ match(es)? · )?line \d+ of \d+`)

// A 20 MiB tool result, journaled (memory holds its head), reads to its
// last line in the response and raw tabs, wrapped and not.
func TestE2EDetailReadsA20MiBResult(t *testing.T) {
	tm := startDetailTUI(t, 120, 40, true)
	tm.openTool("Large result", "big")
	tm.fillField("megabytes", "20")
	tm.keys("Enter")
	// It lands on the response, which fills in once read and laid out.
	tm.waitFor("tools/call big · ok", `"jsonrpc": "2.0"`, `"text": "line 00000001 `)
	tm.keys("G")
	last := `line 00327680 .................................................\n"`
	tm.waitUntil("the last line of the result", func(s string) bool {
		body := strings.TrimRight(detailText(s), " ")
		return strings.Contains(body, last) && strings.HasSuffix(body, "}")
	})
	tm.keys("Tab")
	tm.waitFor("── #")
	tm.keys("G")
	tm.waitUntil("the last line in the raw tab", func(s string) bool { return strings.Contains(detailText(s), last) })
	// Without wrapping, the start of every line shows; the UI answers at once.
	tm.keys("w")
	tm.waitFor("no wrap")
	tm.keys("g")
	tm.waitRe(`(?m)^line 1 of \d+ · no wrap`)
}

// After a call from the catalog, the detail shows that call's response
// when it comes, with no key pressed: not the request and its _meta.
func TestE2ELandsOnTheResponse(t *testing.T) {
	tm := startDetailTUI(t, 120, 40, false)
	tm.openTool("Slow task with progress", "slow")
	tm.keys("C-u")
	tm.text("1")
	tm.keys("Tab", "C-u")
	tm.text("2")
	tm.waitRe(`seconds\*?\s+1\b`, `steps\s+2\b`)
	tm.keys("Enter")
	sc := tm.waitFor("tools/call slow · ok", "slow: finished 2 steps")
	if strings.Contains(sc, `"progressToken"`) || strings.Contains(sc, `"method": "tools/call"`) {
		t.Fatalf("the request shows, not the response:\n%s", sc)
	}
	// Closing it leaves that call selected in the requests pane.
	tm.keys("Escape")
	tm.waitUntil("the call selected", func(s string) bool {
		return regexp.MustCompile(`slow\s+ok`).MatchString(selectedLine(s))
	})
}

// statusThen is a call's status word and what follows: its duration.
var (
	statusThen = regexp.MustCompile(`\b(ok|error|streaming|cancelled|late|pending|detached|input|legacy|reissued)( · |\s+)(\S+)`)
	wholeDur   = regexp.MustCompile(`^\d+(ms|\.\ds|m\d\ds|h\d\dm)$`)
)

// checkLayout asserts what every screen must keep: its size, durations
// whole in call rows and detail titles, pane rules drawn to their edge,
// and, side by side (160 columns and more), the separator on every row.
func checkLayout(t *testing.T, what, sc string, w, h int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(sc, "\n"), "\n")
	if len(lines) > h {
		t.Errorf("%s: %d lines on a %d-line terminal", what, len(lines), h)
	}
	lw := w
	beside := w >= 160 && strings.Contains(sc, "│ call ")
	if beside {
		lw = w * 2 / 5
	}
	calls := false
	for i, l := range lines {
		r := []rune(l)
		if len(r) > w {
			t.Errorf("%s: line %d is %d wide (> %d): %q", what, i, len(r), w, l)
		}
		left, right := l, ""
		if beside && i > 0 && i < len(lines)-1 {
			if len(r) <= lw || r[lw] != '│' {
				t.Errorf("%s: no separator at column %d on line %d: %q", what, lw, i, l)
				continue
			}
			left, right = string(r[:lw]), string(r[lw+1:])
		}
		head := strings.TrimLeft(left, "▌ ")
		if strings.HasPrefix(head, "Requests") || strings.HasPrefix(head, "Running") || strings.HasPrefix(head, "Notifications") {
			calls = !strings.HasPrefix(head, "Notifications")
			if !strings.HasSuffix(strings.TrimRight(left, " "), "─") {
				t.Errorf("%s: the pane rule on line %d is broken: %q", what, i, l)
			}
			continue
		}
		for _, part := range []string{left, right} {
			title := strings.HasPrefix(strings.TrimSpace(part), "call ")
			if part == "" || (part == left && !calls && !title) || (part == right && !title) {
				continue
			}
			if g := statusThen.FindStringSubmatch(part); g != nil && !wholeDur.MatchString(g[3]) {
				t.Errorf("%s: a duration is cut on line %d: %q", what, i, l)
			}
		}
	}
}

// The layout holds at 60×20, 80×24, 120×40 and 200×60: the panes with
// running and finished calls, every catalog section, a tool form, a call's
// detail (beside the list at 200 columns).
func TestE2ELayouts(t *testing.T) {
	for _, sz := range [][2]int{{60, 20}, {80, 24}, {120, 40}, {200, 60}} {
		w, h := sz[0], sz[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			tm := startDetailTUI(t, w, h, false)
			check := func(what string) { checkLayout(t, what, tm.capture(), w, h) }
			check("the panes")

			tm.keys("C")
			tm.waitFor("Catalog", "tools (")
			check("catalog tools")
			for _, sec := range []string{"resources", "templates", "prompts"} {
				tm.keys("Right")
				tm.waitUntil(sec, func(s string) bool { return strings.Contains(s, "demo://") || sec == "prompts" })
				check("catalog " + sec)
			}
			tm.keys("Right")
			tm.waitFor("Ask the user") // back on tools, not still on prompts
			tm.selectRow("Slow task with progress")
			tm.keys("Enter")
			tm.waitFor("Call tool slow")
			check("the tool form")
			tm.fillField("seconds", "3")
			tm.fillField("steps", "30")
			tm.keys("Enter")
			tm.waitFor("tools/call slow", "streaming")
			check("a running call's detail")
			tm.keys("Escape")
			tm.waitRe(`slow\s+streaming`, `Running 1`)
			check("a running call in the panes")
			tm.waitRe(`slow\s+ok`)
			check("finished calls in the panes")
			tm.keys("Enter")
			sc := tm.waitFor("request │ response")
			check("a call's detail")
			if w >= 160 && !(strings.Contains(sc, "Requests") && strings.Contains(sc, "│ call ")) {
				t.Fatalf("at %d columns the list and the detail should sit side by side:\n%s", w, sc)
			}
			tm.keys("Escape")
			tm.waitUntil("the detail closed", func(s string) bool { return !strings.Contains(s, "request │ response") })
			tm.keys("w")
			// The title and its origin stay whole, a space apart.
			tm.waitRe(`Waterfall · \d+ calls · \d+ms( per column|/column) · fit +0 = \d\d:\d\d:\d\d\.\d{3} *\n`)
			check("the waterfall")
		})
	}
}
