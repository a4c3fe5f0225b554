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
