// Package goldentest compares what a test drew with a golden file under
// testdata/, and rewrites the file when the test runs with -update.
package goldentest

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// Update says whether the test binary runs with -update.
func Update() bool { return *update }

// Check fails t when got differs from testdata/NAME.golden, showing a
// unified line diff (- the golden file, + what was drawn), or writes got
// there under -update.
func Check(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update in this package writes it)", err, t.Name())
	}
	if d := unifiedDiff(path, "drawn by "+t.Name(), string(want), got); d != "" {
		t.Errorf("%s differs from %s (go test -run %s -update in this package rewrites it):\n%s", t.Name(), path, t.Name(), d)
	}
}
