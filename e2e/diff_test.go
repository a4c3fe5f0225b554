package e2e

import (
	"os"
	"strings"
	"testing"
)

// TestDemoCatalogBaseline is the CI gate on the embedded demo server's
// catalog: mcpscope diff --baseline against the committed snapshot exits 1
// (and shows what changed) when a tool, resource, template or prompt of
// the demo changes. After a deliberate change, rewrite the snapshot:
//
//	go run . diff --baseline e2e/testdata/demo-catalog.json --update
func TestDemoCatalogBaseline(t *testing.T) {
	const baseline = "testdata/demo-catalog.json"
	before, err := os.ReadFile(baseline)
	if err != nil {
		t.Fatal(err)
	}
	out, err := mcpscope(t, t.TempDir(), "diff", "--baseline", baseline).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "no drift") {
		t.Fatalf("the demo's catalog drifted from %s (%v); if the change is meant, run\n"+
			"  go run . diff --baseline e2e/%s --update\n%s", baseline, err, baseline, out)
	}
	if after, _ := os.ReadFile(baseline); string(after) != string(before) {
		t.Fatal("checking the baseline changed the file")
	}
}
