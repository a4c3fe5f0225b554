package ui

import (
	"testing"

	"mcpscope/testkit/goldentest"
)

// The README's key section is the keymap's: this fails when they disagree,
// and -update rewrites the section between its markers.
func TestREADMEKeysMatchKeymap(t *testing.T) {
	sec := goldentest.ReadSection(t, "../README.md", "keys")
	want := "\n" + DefaultKeys().Markdown() + "\n"
	if sec.Text() == want {
		return
	}
	if goldentest.Update() {
		sec.Write(t, want)
		return
	}
	t.Errorf("the README's key section differs from the keymap (go test ./ui -run %s -update rewrites it):\n--- keymap ---\n%s\n--- README ---\n%s",
		t.Name(), want, sec.Text())
}
