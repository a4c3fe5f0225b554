package near

import (
	"slices"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"echo", "echo", 0}, {"ech", "echo", 1}, {"ecoh", "echo", 2}, {"kitten", "sitting", 3}, {"", "abc", 3}} {
		if d := Distance(c.a, c.b); d != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, d, c.d)
		}
	}
}

func TestNames(t *testing.T) {
	tools := []string{"echo", "add", "get-env", "get-tiny-image", "longRunningOperation", "Echo2", "sampleLLM"}
	for _, c := range []struct {
		name string
		want []string
	}{
		{"ech", []string{"echo", "Echo2"}},             // one edit, then two
		{"ECHO", []string{"echo", "Echo2"}},            // case aside
		{"get", []string{"get-env", "get-tiny-image"}}, // a prefix, however far
		{"longrunning", []string{"longRunningOperation"}},
		{"zzz", []string{}},
		{"echo", []string{"Echo2"}}, // itself is not a slip
	} {
		if got := Names(c.name, tools, 3); !slices.Equal(got, c.want) {
			t.Errorf("Names(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	if got := Names("a", []string{"ab", "ac", "ad", "ae"}, 2); len(got) != 2 {
		t.Errorf("at most 2 names, got %q", got)
	}
}
