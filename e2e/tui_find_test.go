package e2e

import (
	"regexp"
	"strings"
	"testing"
)

// paneRows are the rows of the requests pane on a captured screen: the
// lines between its title and the next pane's.
func paneRows(s string) []string {
	var rows []string
	in := false
	for _, l := range strings.Split(s, "\n") {
		t := strings.TrimLeft(l, "▌ ")
		switch {
		case strings.HasPrefix(t, "Requests "):
			in = true
		case strings.HasPrefix(t, "Running ") || strings.HasPrefix(t, "Notifications "):
			return rows
		case in && strings.TrimSpace(l) != "":
			rows = append(rows, l)
		}
	}
	return rows
}

// callTool finds a tool in the catalog by typing, opens its form and
// sends it with its defaults (and value in field, when given).
func (tm *tmux) callTool(name, field, value string) {
	tm.t.Helper()
	tm.keys("C")
	tm.waitFor("Catalog")
	tm.keys("/")
	tm.waitFor("find ›")
	tm.keys("C-u") // the find stays while the session lives: replace it
	tm.text(name)
	tm.waitUntil("the best match to be "+name, func(s string) bool {
		return strings.Contains(s, "find “"+name+"”") && regexp.MustCompile(`▸\s+`+name+`\s`).MatchString(selectedLine(s))
	})
	tm.keys("Enter") // keep the find
	tm.waitUntil("the input line to close", func(s string) bool { return !strings.Contains(s, "find ›") })
	tm.keys("Enter") // open the selected tool
	tm.waitFor("Call tool " + name)
	if field != "" {
		tm.fillField(field, value)
	}
	tm.keys("Enter")
	tm.waitRe(`sent tools/call ` + name + ` \(call \d+\)`)
}

// The catalog filters as you type: fuzzy over names and titles; esc
// clears the find first, then leaves the catalog.
func TestE2ECatalogFind(t *testing.T) {
	tm := startTUI(t, 120, 40)
	tm.keys("C")
	tm.waitFor("Catalog", "Slow task with progress", "Always fails")
	tm.keys("/")
	tm.waitFor("find ›")
	tm.text("lgmsg") // log's title, "Emit log messages", fuzzily
	s := tm.waitFor("find “lgmsg”", "Emit log messages")
	if strings.Contains(s, "Slow task with progress") || strings.Contains(s, "Always fails") {
		t.Fatalf("the find kept rows that do not match:\n%s", s)
	}
	if !strings.Contains(selectedLine(s), "log") {
		t.Fatalf("the best match is not selected: %q", selectedLine(s))
	}
	tm.keys("Enter")
	tm.waitUntil("the input line to close", func(s string) bool { return !strings.Contains(s, "find ›") })
	tm.keys("Escape") // clears the find, stays in the catalog
	tm.waitUntil("the find to be cleared", func(s string) bool {
		return strings.Contains(s, "Catalog") && !strings.Contains(s, "find “") && strings.Contains(s, "Slow task with progress")
	})
	tm.keys("Escape")
	tm.waitFor("Notifications")
}

// The requests pane takes a filter expression: ~e keeps the failed call,
// ~t echo the echo call; a syntax error shows its column as it is typed;
// esc clears the filter.
func TestE2EFilterRequests(t *testing.T) {
	tm := startTUI(t, 120, 40)
	tm.callTool("fail", "", "")
	tm.waitRe(`fail\s+error`)
	tm.callTool("echo", "message", "hello")
	tm.waitRe(`echo\s+ok`)

	tm.keys("f")
	tm.waitFor("filter requests ›")
	tm.text("~t echo | (~dur >")
	tm.waitFor(`^ column 17: bad duration`)
	tm.keys("BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace")
	s := tm.waitRe(`Requests 1 of \d+ · filter ~t echo`)
	if rows := paneRows(s); len(rows) != 1 || !strings.Contains(rows[0], "echo") {
		t.Fatalf("~t echo shows %q", rows)
	}
	tm.keys("Enter")
	tm.waitUntil("the input line to close", func(s string) bool { return !strings.Contains(s, "filter requests ›") })

	tm.keys("/", "C-u")
	tm.waitFor("filter requests ›")
	tm.text("~e")
	s = tm.waitRe(`Requests 1 of \d+ · filter ~e`)
	if rows := paneRows(s); len(rows) != 1 || !regexp.MustCompile(`fail\s+error`).MatchString(rows[0]) {
		t.Fatalf("~e shows %q", rows)
	}
	tm.keys("Enter")
	tm.waitUntil("the input line to close", func(s string) bool { return !strings.Contains(s, "filter requests ›") })
	tm.keys("Escape")
	s = tm.waitUntil("the filter to be cleared", func(s string) bool { return !strings.Contains(s, "· filter ") })
	if rows := paneRows(s); len(rows) < 4 {
		t.Fatalf("after esc only %d rows: %q", len(rows), rows)
	}
}

// The info view shows the server, its instructions, the era and the
// connection; at 80×24 the status bar keeps the era and the connection.
func TestE2EInfoView(t *testing.T) {
	tm := startTUI(t, 80, 24)
	bar := strings.SplitN(tm.waitRe(`\((modern|legacy)\)`), "\n", 2)[0]
	if !strings.Contains(bar, "connected") {
		t.Fatalf("status bar at 80 columns: %q", bar)
	}
	tm.keys("i")
	tm.waitFor("Session info", "server        mcpscope-demo", "connection    connected", "transport     stdio",
		"server pid    ", "journal       none", "instructions", "A demo server for trying out mcpscope")
	tm.waitRe(`protocol      \d{4}-\d\d-\d\d · (modern|legacy) era`)
	tm.keys("Escape")
	tm.waitFor("Notifications")
}
