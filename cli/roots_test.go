package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveRoots(t *testing.T) {
	wd, _ := os.Getwd()
	dir := filepath.Join(t.TempDir(), "a b%c")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	roots, ask, err := resolveRoots("mcpscope", nil)
	if err != nil || ask || len(roots) != 1 || roots[0].Name != filepath.Base(wd) || !strings.HasPrefix(roots[0].URI, "file:///") {
		t.Fatalf("default: %v %v %v", roots, ask, err)
	}
	roots, _, err = resolveRoots("mcpscope", []string{dir, "file:///srv/x"})
	want := "file://" + filepath.ToSlash(dir)
	want = strings.ReplaceAll(strings.ReplaceAll(want, "%", "%25"), " ", "%20")
	if err != nil || len(roots) != 2 || roots[0].URI != want || roots[0].Name != "a b%c" || roots[1].URI != "file:///srv/x" || roots[1].Name != "x" {
		t.Fatalf("given: %+v %v (want %s)", roots, err, want)
	}
	roots, ask, err = resolveRoots("mcpscope", []string{"none"})
	if err != nil || ask || roots == nil || len(roots) != 0 {
		t.Fatalf("none: %v %v %v", roots, ask, err)
	}
	if _, ask, err = resolveRoots("mcpscope", []string{"ask"}); err != nil || !ask {
		t.Fatalf("ask: %v %v", ask, err)
	}
	for _, bad := range [][]string{{"ask", dir}, {"none", "ask"}, {"https://example.com/x"}, {filepath.Join(dir, "missing")}, {""}, {"file://host/x"}} {
		_, _, err := resolveRoots("mcpscope", bad)
		var ue *usageError
		if !errors.As(err, &ue) || exitCode(err) != 2 || !strings.Contains(err.Error(), "--root") {
			t.Errorf("%q: want a usage error naming --root, got %v", bad, err)
		}
	}
}
