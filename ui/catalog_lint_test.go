package ui

import (
	"strings"
	"testing"
)

// lintTools: one tool Claude Code refuses (a bare true property, what
// Go's interface{} becomes), one OpenAI reads unevenly, one clean.
const lintTools = `{"tools":[
{"name":"store","description":"stores data","inputSchema":{"type":"object","properties":{"data":true},"additionalProperties":false}},
{"name":"fetch","description":"fetches a page","inputSchema":{"type":"object","properties":{"url":{"type":"string"}}}},
{"name":"ok","description":"is fine","inputSchema":{"type":"object","additionalProperties":false}}]}`

// The catalog marks a tool with findings (✗ a host refuses it, ! read
// unevenly) and its schema pane lists them under the schema.
func TestCatalogLintFindings(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 140, 40)
	loadTools(m, lintTools)
	press(m, "catalog")
	sc := screen(m)
	for _, want := range []string{"✗ store", "! fetch", "  ok", "hosts (mcpscope lint)", "✗ error bool-schema /inputSchema/properties/data", "claude-code"} {
		if !strings.Contains(sc, want) {
			t.Errorf("no %q in:\n%s", want, sc)
		}
	}
	press(m, "down", "down")
	if sc := screen(m); strings.Contains(sc, "hosts (mcpscope lint)") {
		t.Errorf("a clean tool lists findings:\n%s", sc)
	}
}
