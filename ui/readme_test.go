package ui

import (
	"os"
	"strings"
	"testing"

	"mcpscope/internal/testkit/goldentest"
)

// The README's key section is the keymap's: this fails when they disagree,
// and -update rewrites the section between its markers.
func TestREADMEKeysMatchKeymap(t *testing.T) {
	const path = "../README.md"
	const begin, end = "<!-- keys:begin", "<!-- keys:end -->"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q … %q section", path, begin, end)
	}
	i += strings.Index(s[i:], "\n") + 1 // the section starts after the begin marker's line
	want := "\n" + DefaultKeys().Markdown() + "\n"
	if s[i:j] == want {
		return
	}
	if goldentest.Update() {
		if err := os.WriteFile(path, []byte(s[:i]+want+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the README's key section differs from the keymap (go test ./ui -run %s -update rewrites it):\n--- keymap ---\n%s\n--- README ---\n%s",
		t.Name(), want, s[i:j])
}
