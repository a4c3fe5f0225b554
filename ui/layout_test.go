package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"mcpscope/session"
	"mcpscope/transport"

	"github.com/charmbracelet/x/ansi"
)

// layoutSizes are the terminals the layout must hold at.
var layoutSizes = [][2]int{{60, 20}, {80, 24}, {120, 40}, {200, 60}}

// afterStatus is a call's status word and what follows it: its duration,
// in a request row and in a detail's title.
var (
	afterStatus = regexp.MustCompile(`\b(ok|error|streaming|cancelled|late|pending|detached|input|legacy|reissued)( · |\s+)(\S+)`)
	wholeDur    = regexp.MustCompile(`^\d+(ms|\.\ds|m\d\ds|h\d\dm)$`)
	// detailBeside is where a detail's title starts beside the list: a
	// call's ("call 3 · …") or a message's ("#14 · …").
	detailBeside = regexp.MustCompile(`│ (call |#\d)`)
)

// cutDuration reports a call row or title whose duration is cut ("1…").
func cutDuration(l string) bool {
	g := afterStatus.FindStringSubmatch(l) // the first: the status column
	return g != nil && !wholeDur.MatchString(g[3])
}

// checkLayout asserts what must hold on any screen: the size, durations
// whole, pane rules drawn to the edge (or to the side-by-side separator).
func checkLayout(t *testing.T, what string, sc string, w, h int) {
	t.Helper()
	checkSize(t, sc, w, h)
	lines := strings.Split(sc, "\n")
	inCalls := false
	for i, l := range lines {
		left := l
		if loc := detailBeside.FindStringIndex(l); loc != nil {
			left = l[:loc[0]] // side by side: the list's half
		}
		trim := strings.TrimLeft(left, "▌ ")
		switch {
		case strings.HasPrefix(trim, "Requests") || strings.HasPrefix(trim, "Running"):
			inCalls = true
		case strings.HasPrefix(trim, "Notifications"):
			inCalls = false
		}
		if strings.HasPrefix(trim, "Requests") || strings.HasPrefix(trim, "Running") || strings.HasPrefix(trim, "Notifications") {
			if rule := strings.TrimRight(left, " │"); !strings.HasSuffix(rule, "─") {
				t.Errorf("%s: the rule of line %d stops short: %q", what, i, l)
			}
		}
		title := strings.HasPrefix(strings.TrimSpace(l), "call ")
		if j := strings.Index(l, "│ call "); j >= 0 && cutDuration(l[j:]) {
			t.Errorf("%s: the detail's duration is cut on line %d: %q", what, i, l)
		}
		if (inCalls || title) && cutDuration(left) {
			t.Errorf("%s: a duration is cut on line %d: %q", what, i, l)
		}
	}
}

// Every view holds at 60×20, 80×24, 120×40 and 200×60.
func TestLayoutsHold(t *testing.T) {
	views := []struct {
		name  string
		setup func(m *Model)
	}{
		{"panes", func(m *Model) {}},
		{"notes", func(m *Model) { press(m, "focus-next") }},
		{"detail", func(m *Model) { press(m, "top", "down", "open", "tab-next") }},
		{"detail-mrtr-title", func(m *Model) { press(m, "top", "down", "open") }},
		{"catalog-templates", func(m *Model) { loadLongCatalog(m); press(m, "catalog", "section-next", "section-next") }},
		{"catalog-resources", func(m *Model) { loadLongCatalog(m); press(m, "catalog", "section-next", "follow") }},
		{"tool-form", func(m *Model) { loadLongCatalog(m); press(m, "catalog", "open") }},
		{"elicitation", func(m *Model) { m.Update(serverPromptMsg{elicitPrompt(multiSchema)}) }},
		{"help", func(m *Model) { press(m, "help") }},
		{"log-level", func(m *Model) { press(m, "log-level", "follow") }},
		{"tasks", func(m *Model) { press(m, "tasks") }},
	}
	for _, sz := range layoutSizes {
		for _, v := range views {
			m := newTestModel(t, loadFixture(t), sz[0], sz[1])
			v.setup(m)
			checkLayout(t, fmt.Sprintf("%s at %dx%d", v.name, sz[0], sz[1]), screen(m), sz[0], sz[1])
		}
	}
}

// TestGoldenLayouts pins the panes, a call's detail (its request and its
// notifications) and a notification's at the layout sizes TestGoldenPanes
// leaves out: 60×20, and 200×60 where the detail sits beside the list. A
// call's notifications tab is pinned at all four.
func TestGoldenLayouts(t *testing.T) {
	cases := []struct {
		name  string
		setup func(m *Model)
		sizes [][2]int
	}{
		{"requests", func(m *Model) {}, nil},
		{"notifications", func(m *Model) { press(m, "focus-next") }, nil},
		{"detail-request", func(m *Model) { press(m, "top", "down", "open") }, nil},
		{"detail-notification", func(m *Model) { press(m, "focus-next", "top", "down", "down", "down", "down", "open") }, nil},
		{"detail-call-notifications", func(m *Model) { press(m, "top", "down", "open", "tab-prev") }, layoutSizes},
	}
	for _, c := range cases {
		sizes := c.sizes
		if sizes == nil {
			sizes = [][2]int{{60, 20}, {200, 60}}
		}
		for _, sz := range sizes {
			name := fmt.Sprintf("%s-%dx%d", c.name, sz[0], sz[1])
			t.Run(name, func(t *testing.T) {
				m := newTestModel(t, loadFixture(t), sz[0], sz[1])
				c.setup(m)
				got := screen(m)
				checkLayout(t, name, got, sz[0], sz[1])
				golden(t, name, got)
			})
		}
	}
}

// TestGoldenNarrow pins the narrowest layout a form holds.
func TestGoldenNarrow(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(m *Model)
	}{
		{"elicitation-multi-60x20", func(m *Model) { m.Update(serverPromptMsg{elicitPrompt(multiSchema)}) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newTestModel(t, loadFixture(t), 60, 20)
			c.setup(m)
			golden(t, c.name, screen(m))
		})
	}
}

const longURI = "demo://files/projects/mcpscope/internal/testservers/cmd/goserver/a-rather-long-file-name.json"

// loadLongCatalog fills the catalog with long names, URIs and templates.
func loadLongCatalog(m *Model) {
	loadPage(m, 0, `{"tools":[{"name":"summarise-the-repository-history","title":"Summarise history","description":"Summarises","inputSchema":{"type":"object","properties":{"a-property-with-a-very-long-name":{"type":"string"},"mode":{"type":"string","enum":["alpha","bravo","charlie","delta","echo","foxtrot","golf","hotel","india","juliett","kilo","lima"]}}}}]}`)
	loadPage(m, 1, `{"resources":[{"uri":"demo://readme","name":"readme","title":"Read me"},{"uri":"`+longURI+`","name":"long","title":"A long one"}]}`)
	loadPage(m, 2, `{"resourceTemplates":[{"uriTemplate":"demo://items/{id}","name":"item","title":"Item by id"},{"uriTemplate":"demo://files/{project}/{path}/revisions/{revision}/blobs/{blob}","name":"blob","title":"A file at a revision"}]}`)
}

func elicitPrompt(params string) *serverPrompt {
	return &serverPrompt{req: session.ServerRequest{Method: "elicitation/create", Related: "7", Params: json.RawMessage(params)},
		ctx: context.Background(), reply: make(chan answer, 1)}
}

// multiSchema has both kinds of multi-select of elicitation 2025-11-25
// (and 2026-07-28): items.enum, and items.anyOf with titles.
const multiSchema = `{"message":"Pick some","requestedSchema":{"type":"object","properties":{
"colours":{"type":"array","title":"Favourite colours","minItems":1,"maxItems":2,"items":{"anyOf":[{"const":"#f00","title":"Red"},{"const":"#0f0","title":"Green"},{"const":"#00f","title":"Blue"}]},"default":["#0f0"]},
"tags":{"type":"array","title":"Tags","items":{"type":"string","enum":["urgent","later","someday"]}},
"size":{"type":"string","title":"A size field with a long title that needs room","enum":["xs","s","m","l","xl","xxl","3xl","4xl","5xl","6xl","7xl","8xl"]}},
"required":["colours"]}}`

// The catalog's name column fits the longest name it can, and the
// selected entry's whole URI is spelled out below the list.
func TestCatalogColumnsAndWholeURI(t *testing.T) {
	for _, sz := range layoutSizes {
		m := newTestModel(t, loadFixture(t), sz[0], sz[1])
		loadLongCatalog(m)
		press(m, "catalog", "section-next", "follow")
		if got := strings.Join(strings.Fields(screen(m)), ""); !strings.Contains(got, longURI) {
			t.Errorf("%dx%d: the selected URI is not spelled out whole:\n%s", sz[0], sz[1], screen(m))
		}
		press(m, "section-next")
		if sz[0] >= 120 && !strings.Contains(screen(m), "demo://files/{project}/{path}/revisions/{revision}/blobs/{blob} A file at a revision") {
			t.Errorf("%dx%d: the template column should fit the template:\n%s", sz[0], sz[1], screen(m))
		}
	}
}

// A choice far along an enum stays in view: the strip shows a window of
// choices around it.
func TestEnumChoiceStaysVisible(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 60, 20)
	m.Update(serverPromptMsg{elicitPrompt(multiSchema)})
	for !strings.Contains(screen(m), "▸ A size") {
		press(m, "form-next")
	}
	press(m, "form-choice-prev") // wraps to the last choice
	sc := screen(m)
	if !strings.Contains(sc, "[8xl]▸") || !strings.Contains(sc, "◂…") {
		t.Fatalf("the last choice should show, with a mark for those left out:\n%s", sc)
	}
	press(m, "form-choice-next") // wraps to the first
	if sc := screen(m); !strings.Contains(sc, "◂[xs]") || !strings.Contains(sc, "…▸") {
		t.Fatalf("back to the first choices:\n%s", sc)
	}
}

// A multi-select is a checklist: the focus walks its choices, space
// ticks one, and the answer is the array of the ticked values, checked
// against minItems and maxItems.
func TestElicitationMultiSelect(t *testing.T) {
	r := NewResponder(nil, true)
	m, _, _ := newLive(t, r)
	m.resp = r
	got := answerPrompt(t, m, r, "elicitation/create", multiSchema)
	sc := screen(m)
	for _, want := range []string{"[ ] Red", "[x] Green", "[ ] Blue", "(choose 1–2)", "[ ] urgent", "[ ] someday"} {
		if !strings.Contains(sc, want) {
			t.Fatalf("the checklist lacks %q:\n%s", want, sc)
		}
	}
	typeText(m, " ") // Red
	press(m, "form-next", "form-next")
	typeText(m, " ") // Blue: three is too many
	press(m, "form-submit")
	if !strings.Contains(screen(m), "choose at most 2") {
		t.Fatalf("maxItems not enforced:\n%s", screen(m))
	}
	press(m, "form-prev")
	typeText(m, " ")                   // Green off
	press(m, "form-next", "form-next") // into tags: urgent
	press(m, "form-next", "form-next") // someday
	typeText(m, " ")
	press(m, "form-submit")
	a := <-got
	if a.err != nil || !strings.Contains(string(a.result), `"content":{"colours":["#f00","#00f"],"tags":["someday"]}`) {
		t.Fatalf("answer %s %v", a.result, a.err)
	}
}

// TestRequestColumnsFitTheirContent: a method longer than the column's
// usual width (resources/templates/list) is shown whole from 80 columns,
// with the other rows aligned to it; at 60 it takes the cells of the name
// it does not have, durations whole.
func TestRequestColumnsFitTheirContent(t *testing.T) {
	frames := append(fixtureFrames(),
		msg(4.2, transport.Out, `{"jsonrpc":"2.0","id":6,"method":"resources/templates/list","params":{}}`),
		msg(4.3, transport.In, `{"jsonrpc":"2.0","id":6,"result":{"resourceTemplates":[]}}`),
		msg(4.4, transport.Out, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"trigger-long-running-operation"}}`),
		msg(4.5, transport.In, `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`),
		msg(4.6, transport.Out, `{"jsonrpc":"2.0","id":8,"method":"resources/templates/list","params":{}}`),
		msg(4.7, transport.In, `{"jsonrpc":"2.0","id":8,"result":{"resourceTemplates":[]}}`))
	for _, sz := range layoutSizes {
		w, h := sz[0], sz[1]
		m := newTestModel(t, loadFrames(t, frames), w, h)
		sc := screen(m)
		checkLayout(t, fmt.Sprintf("requests at %dx%d", w, h), sc, w, h)
		var list, echo string
		for _, l := range strings.Split(sc, "\n") {
			if strings.Contains(l, " 8 ") && strings.Contains(l, "resources/") {
				list = l
			}
			if strings.Contains(l, "tools/call") && strings.Contains(l, "echo") {
				echo = l
			}
		}
		if !strings.Contains(list, "resources/templates/list ") {
			t.Fatalf("at %dx%d the method is cut: %q", w, h, list)
		}
		press(m, "open") // the selected row, the last
		if title := strings.Split(screen(m), "\n")[1]; !strings.Contains(title, " call 8 · resources/templates/list · ok · 100ms") {
			t.Fatalf("at %dx%d the detail's title: %q", w, h, title)
		}
		if w < 80 {
			continue
		}
		// A long tool name beside a nameless long method keeps its
		// words: the method column holds only what a named row needs.
		if !strings.Contains(sc, "trigger-long-run") {
			t.Fatalf("at %dx%d the tool name is cut short:\n%s", w, h, sc)
		}
		col := func(l string) int { return ansi.StringWidth(l[:strings.Index(l, " ok ")]) } // cells, not bytes: ▸ is three
		if !strings.Contains(list, " ok ") || !strings.Contains(echo, " ok ") || col(list) != col(echo) {
			t.Fatalf("at %dx%d the status columns do not line up:\n%s\n%s", w, h, list, echo)
		}
	}
}
