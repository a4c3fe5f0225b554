package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"mcpscope/session"
)

var sizes = []struct{ w, h int }{{80, 24}, {120, 40}}

// TestGoldenPanes pins each pane's content at two sizes.
func TestGoldenPanes(t *testing.T) {
	cases := []struct {
		name  string
		setup func(m *Model)
	}{
		{"requests", func(m *Model) {}},
		{"requests-selected", func(m *Model) { press(m, "top", "down") }},
		{"notifications", func(m *Model) { press(m, "focus-next") }},
		{"notifications-log-filter", func(m *Model) { press(m, "focus-next", "kind-next") }},
		{"notifications-paused", func(m *Model) { press(m, "focus-next", "pause", "up", "up") }},
		{"detail-request", func(m *Model) { press(m, "top", "down", "open") }},
		{"detail-response", func(m *Model) { press(m, "top", "down", "down", "open", "tab-next") }},
		{"detail-raw", func(m *Model) { press(m, "top", "down", "down", "down", "down", "open", "tab-next", "tab-next") }},
		{"detail-search", func(m *Model) {
			press(m, "top", "down", "open", "search")
			typeText(m, "seconds")
			press(m, "search-run")
		}},
		{"detail-notification", func(m *Model) { press(m, "focus-next", "top", "down", "down", "down", "down", "open") }},
		{"detail-folded", func(m *Model) {
			press(m, "top", "down", "down", "open", "tab-next", "result-view", "fold-all", "down", "down", "down", "fold")
		}},
		{"detail-nowrap", func(m *Model) {
			press(m, "top", "down", "down", "down", "down", "open", "tab-next", "tab-next", "wrap", "down", "down", "down", "scroll-right")
		}},
		{"help", func(m *Model) { press(m, "help") }},
		{"catalog", func(m *Model) {
			loadPage(m, 0, `{"tools":[{"name":"slow","title":"Slow task","description":"Works \u001b[2J slowly","inputSchema":{"type":"object","properties":{"seconds":{"type":"number","default":10}}}},{"name":"echo","description":"Echo"}]}`)
			press(m, "catalog")
		}},
		{"catalog-schema", func(m *Model) {
			loadPage(m, 0, schemaTools)
			press(m, "catalog", "down")
		}},
		{"catalog-templates", func(m *Model) { loadLongCatalog(m); press(m, "catalog", "section-next", "section-next", "down") }},
		{"elicitation-multi", func(m *Model) { m.Update(serverPromptMsg{elicitPrompt(multiSchema)}); press(m, "form-next") }},
		{"tool-form", func(m *Model) {
			loadPage(m, 0, `{"tools":[{"name":"slow","description":"Works slowly","inputSchema":{"type":"object","properties":{"seconds":{"type":"number","default":10,"minimum":0,"description":"total duration"},"steps":{"type":"integer","default":10},"verbose":{"type":"boolean"},"mode":{"type":"string","enum":["fast","slow"]}},"required":["seconds"]}}]}`)
			press(m, "catalog", "open")
		}},
		{"elicitation", func(m *Model) {
			p := &serverPrompt{req: session.ServerRequest{Method: "elicitation/create", Related: "7",
				Params: json.RawMessage(`{"message":"Tell us \u001b]0;pwned\u0007 about you","requestedSchema":{"type":"object","properties":{"name":{"type":"string","title":"Your name"},"colour":{"type":"string","oneOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}]}},"required":["name"]}}`)},
				ctx: context.Background(), reply: make(chan answer, 1)}
			m.Update(serverPromptMsg{p})
		}},
	}
	for _, c := range cases {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s-%dx%d", c.name, sz.w, sz.h), func(t *testing.T) {
				m := newTestModel(t, loadFixture(t), sz.w, sz.h)
				c.setup(m)
				got := screen(m)
				checkSize(t, got, sz.w, sz.h)
				golden(t, fmt.Sprintf("%s-%dx%d", c.name, sz.w, sz.h), got)
			})
		}
	}
}

// TestGoldenSideBySide pins the wide layout: the list beside the detail.
func TestGoldenSideBySide(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{160, 40}, {200, 60}} {
		name := fmt.Sprintf("detail-side-by-side-%dx%d", sz.w, sz.h)
		t.Run(name, func(t *testing.T) {
			m := newTestModel(t, loadFixture(t), sz.w, sz.h)
			press(m, "top", "down", "down", "open", "tab-next")
			got := screen(m)
			checkSize(t, got, sz.w, sz.h)
			golden(t, name, got)
		})
	}
}

// loadPage fills a catalog section as if its list call had answered.
func loadPage(m *Model, sec int, result string) {
	var page map[string][]json.RawMessage
	_ = json.Unmarshal([]byte(result), &page)
	m.catalog.Load(sec, page[m.catalog.Field(sec)])
}

func checkSize(t *testing.T, s string, w, h int) {
	t.Helper()
	lines := strings.Split(s, "\n")
	if len(lines) != h {
		t.Errorf("%d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > w {
			t.Errorf("line %d is %d wide (> %d): %q", i, n, w, l)
		}
	}
}

// TestResizeAnySize renders every view at sizes from tiny to large
// without panicking and within bounds.
func TestResizeAnySize(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 80, 24)
	for _, sz := range [][2]int{{1, 1}, {10, 3}, {20, 6}, {40, 10}, {80, 24}, {81, 25}, {200, 60}} {
		for _, setup := range [][]string{nil, {"open"}, {"help"}, {"tasks"}, {"rejoinable"}} {
			m.modals = nil
			m.Update(windowSize(sz[0], sz[1]))
			press(m, setup...)
			got := screen(m)
			if sz[0] >= 20 && sz[1] >= 6 {
				checkSize(t, got, sz[0], sz[1])
			}
		}
	}
}

// schemaTools are tools whose schemas, output and annotations the
// catalog's schema pane shows.
const schemaTools = `{"tools":[{"name":"echo","description":"Echo"},{"name":"send_mail","title":"Send mail","description":"Sends one email \u001b]0;pwned\u0007 now, to one address, with a subject line and a priority that the mail server may ignore",
	"inputSchema":{"type":"object","properties":{"to":{"type":"string","format":"email","description":"who gets it"},
	"subject":{"type":"string","minLength":1,"maxLength":78},"priority":{"type":"string","enum":["low","normal","high"],"default":"normal"},
	"retries":{"type":"integer","minimum":0,"maximum":5}},"required":["to","subject"]},
	"outputSchema":{"type":"object","properties":{"id":{"type":"string","description":"the message id"},"queued":{"type":"boolean"}},"required":["id"]},
	"annotations":{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":false,"openWorldHint":true}}]}`
