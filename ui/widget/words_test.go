package widget

import "testing"

func TestIDText(t *testing.T) {
	for key, want := range map[string]string{
		`7`:                     `7`,
		`"7"`:                   `"7"`, // the number 7 is another id
		`"1e3"`:                 `"1e3"`,
		`"raw-1"`:               `raw-1`,
		`"mcpscope-1f2e3d4c-1"`: `mcpscope-1f2e3d4c-1`,
		`""`:                    `""`,
		`"a b"`:                 `"a b"`,
		`"tab\there"`:           `"tab\there"`,
	} {
		if got := IDText(key); got != want {
			t.Errorf("IDText(%s) = %s, want %s", key, got, want)
		}
	}
}

func TestMidCut(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"raw-1", 5, "raw-1"},
		{"mcpscope-1f2e3d4c-1", 10, "mcps…d4c-1"},
		{"mcpscope-1f2e3d4c-1", 11, "mcpsc…d4c-1"},
		{"abcdef", 2, "ab"},
	} {
		if got := MidCut(c.s, c.n); got != c.want {
			t.Errorf("MidCut(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
