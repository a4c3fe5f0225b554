package ui

import (
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
