package shell

import "testing"

func TestQuote(t *testing.T) {
	cases := map[string]string{
		"":              "''",
		"plain":         "plain",
		"a=b,c:d/e@f+g": "a=b,c:d/e@f+g",
		"two words":     "'two words'",
		"it's":          `'it'\''s'`,
		`{"a":1}`:       `'{"a":1}'`,
		"$HOME":         "'$HOME'",
	}
	for in, want := range cases {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
	if got := Join([]string{"mcpscope", "call", "x y"}); got != "mcpscope call 'x y'" {
		t.Errorf("Join = %s", got)
	}
}
