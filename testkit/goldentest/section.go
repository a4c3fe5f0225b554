package goldentest

import (
	"os"
	"strings"
	"testing"
)

// Section is a part of a Markdown file kept by a test: the lines between
// a "<!-- NAME:begin …" line and "<!-- NAME:end -->". Doc is the whole
// file; Doc[Start:End] is the section.
type Section struct {
	Path       string
	Doc        string
	Start, End int
}

// ReadSection finds the section NAME of the file at path, failing the test
// when the file or either marker is missing.
func ReadSection(t testing.TB, path, name string) Section {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	begin, end := "<!-- "+name+":begin", "<!-- "+name+":end -->"
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q … %q section", path, begin, end)
	}
	i += strings.Index(s[i:], "\n") + 1 // the section starts after the begin marker's line
	return Section{Path: path, Doc: s, Start: i, End: j}
}

// Text is what the section holds now.
func (s Section) Text() string { return s.Doc[s.Start:s.End] }

// Write replaces the section's text in its file (for -update).
func (s Section) Write(t testing.TB, text string) {
	t.Helper()
	if err := os.WriteFile(s.Path, []byte(s.Doc[:s.Start]+text+s.Doc[s.End:]), 0o644); err != nil {
		t.Fatal(err)
	}
}
