package keys

import "testing"

func TestParseRoundTrip(t *testing.T) {
	for _, s := range []string{"a", "G", "?", "/", ":", "enter", "esc", "tab", "shift+tab", "ctrl+c", "ctrl+e", "up", "pgdown", "space", "home"} {
		if got := Parse(s).String(); got != s {
			t.Errorf("Parse(%q).String() = %q", s, got)
		}
	}
}

func TestLookupAndPress(t *testing.T) {
	m := New([]Binding{
		{Name: "quit", Scope: Global, Keys: []string{"q", "ctrl+c"}, Help: "quit"},
		{Name: "cancel", Scope: Requests, Keys: []string{"c"}, Help: "cancel"},
	})
	if n := m.Lookup(Requests, "c", true); n != "cancel" {
		t.Fatalf("Lookup c = %q", n)
	}
	if n := m.Lookup(Requests, "ctrl+c", true); n != "quit" {
		t.Fatalf("global fallthrough = %q", n)
	}
	if n := m.Lookup(Form, "q", false); n != "" {
		t.Fatalf("text scopes must not see globals, got %q", n)
	}
	if m.Press("cancel").String() != "c" {
		t.Fatal("Press")
	}
}

func TestDuplicatePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("duplicate key in one scope did not panic")
		}
	}()
	New([]Binding{{Name: "a", Scope: Global, Keys: []string{"x"}}, {Name: "b", Scope: Global, Keys: []string{"x"}}})
}

func TestMarkdownAndFooter(t *testing.T) {
	m := New([]Binding{
		{Name: "quit", Scope: Global, Keys: []string{"q", "ctrl+c"}, Help: "quit"},
		{Name: "or", Scope: Requests, Keys: []string{"|"}, Help: "a | b (pipes escaped)", Short: "or"},
	})
	want := "**global**\n\n| keys | what |\n|---|---|\n| `q` `ctrl+c` | quit |\n\n" +
		"**requests**\n\n| keys | what |\n|---|---|\n| `\\|` | a \\| b (pipes escaped) |\n"
	if got := m.Markdown(); got != want {
		t.Errorf("Markdown:\n%s\nwant:\n%s", got, want)
	}
	if b, _ := m.Get("quit"); b.Label() != "quit" {
		t.Errorf("Label of quit = %q", b.Label())
	}
	if b, _ := m.Get("or"); b.Label() != "or" {
		t.Errorf("Label of or = %q", b.Label())
	}
	m.SetFooter(Requests, "or", "quit")
	if f := m.Footer(Requests); len(f) != 2 || f[0] != "or" {
		t.Errorf("Footer = %v", f)
	}
	defer func() {
		if recover() == nil {
			t.Error("a footer naming no binding did not panic")
		}
	}()
	m.SetFooter(Global, "nope")
}
