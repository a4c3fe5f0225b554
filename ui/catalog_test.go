package ui

import (
	"fmt"
	"strings"
	"testing"
)

// At 60×20 the schema pane sits under the list, and every line of a
// wrapped description keeps its indent (issue 23).
func TestGoldenCatalogSchemaNarrow(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 60, 20)
	loadPage(m, 0, schemaTools)
	press(m, "catalog", "down")
	got := screen(m)
	checkSize(t, got, 60, 20)
	golden(t, "catalog-schema-60x20", got)
	ls := strings.Split(got, "\n")
	for i, l := range ls {
		if strings.Contains(l, "Sends one email") {
			if i+1 >= len(ls) || !strings.HasPrefix(ls[i+1], " subject line") {
				t.Errorf("the description's second line lost its indent: %q", ls[min(i+1, len(ls)-1)])
			}
		}
	}
}

// The pane follows the selection: each tool shows its own schemas.
func TestCatalogSchemaFollowsSelection(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 120, 40)
	loadPage(m, 0, schemaTools)
	press(m, "catalog")
	if sc := screen(m); !strings.Contains(sc, "(no properties)") || strings.Contains(sc, "subject*") {
		t.Fatalf("echo's schema pane:\n%s", sc)
	}
	press(m, "down")
	if sc := screen(m); !strings.Contains(sc, "│  to*       string (email)") || !strings.Contains(sc, "│ writes · not destructive · not idempotent · open") {
		t.Fatalf("send_mail's schema pane, beside the list:\n%s", sc)
	}
}

// everythingTools are tools named as server-everything names them: long
// kebab-case names, descriptions that wrap.
const everythingTools = `{"tools":[
{"name":"echo","description":"Echoes back the input string"},
{"name":"get-sum","description":"Returns the sum of two numbers"},
{"name":"trigger-long-running-operation","description":"Demonstrates a long running operation with progress updates, one per step, until the duration has passed; it can be cancelled, detached, or run as a task where the server supports tasks",
 "inputSchema":{"type":"object","properties":{"duration":{"type":"number","default":10,"description":"Duration of the operation in seconds"},"steps":{"type":"number","default":5,"description":"Number of steps in the operation"}}}},
{"name":"trigger-sampling-request","description":"Asks the client's model (sampling) and returns what it said"},
{"name":"toggle-simulated-logging","description":"Starts or stops sending log messages at random levels"}]}`

// The catalog at the four sizes: names get the column they need (at
// 80×24 trigger-long-running-operation whole, not "trigge…"; titles and
// descriptions are cut instead), and the selected tool's description keeps
// its indent on every line, with the schemas under the list (narrow) or
// beside it (wide).
func TestGoldenCatalogSizes(t *testing.T) {
	for _, sz := range [][2]int{{60, 20}, {80, 24}, {120, 40}, {200, 60}} {
		w, h := sz[0], sz[1]
		name := fmt.Sprintf("catalog-everything-%dx%d", w, h)
		t.Run(name, func(t *testing.T) {
			m := newTestModel(t, loadFixture(t), w, h)
			loadTools(m, everythingTools)
			press(m, "catalog", "down", "down")
			got := screen(m)
			checkSize(t, got, w, h)
			golden(t, name, got)
			if w >= 80 && !strings.Contains(got, "trigger-long-running-operation ") {
				t.Errorf("the name column cut a tool's name at %dx%d:\n%s", w, h, got)
			}
			ls := strings.Split(got, "\n")
			desc := -1
			for i, l := range ls {
				if strings.Contains(l, " Demonstrates a long") {
					desc = i
				}
			}
			if desc < 0 || desc+1 >= len(ls) {
				t.Fatalf("no description of the selected tool:\n%s", got)
			}
			// The second line starts at the first's column, whether the
			// schemas are beside (a rule after it) or under the list.
			col := strings.Index(ls[desc], "Demonstrates")
			next := ls[desc+1]
			if r := []rune(next); len(r) == 0 || strings.TrimSpace(next) == "" {
				t.Fatalf("the description did not wrap at %dx%d (make it longer):\n%s", w, h, got)
			}
			if c := len(next) - len(strings.TrimLeft(next, " ")); c != col {
				t.Errorf("the description's second line starts at column %d, the first at %d:\n%s", c, col, got)
			}
		})
	}
}

// subscribe works on resources: elsewhere the footer dims it and pressing
// it says why, as a flash, without subscribing.
func TestCatalogSubscribeDisabled(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 80, 24)
	loadTools(m, everythingTools)
	press(m, "catalog")
	if why := m.disabled("subscribe"); why != "works on resources" {
		t.Fatalf("subscribe on tools: disabled %q", why)
	}
	press(m, "subscribe")
	if !strings.Contains(m.flash, "subscribe: works on resources") {
		t.Fatalf("flash %q", m.flash)
	}
}
