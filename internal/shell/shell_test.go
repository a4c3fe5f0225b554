package shell

import (
	"os/exec"
	"slices"
	"testing"

	"mcpscope/internal/termsafe"
	"mcpscope/testkit/shelltest"
)

func TestQuote(t *testing.T) {
	cases := map[string]string{
		"":              "''",
		"plain":         "plain",
		"a=b,c:d/e@f+g": "a=b,c:d/e@f+g",
		"two words":     "'two words'",
		"it's":          `'it'\''s'`,
		`{"a":1}`:       `'{"a":1}'`,
		"$HOME":         "'$HOME'",
		"a\nb":          `$'a\012b'`,
		"\x1b[31mred":   `$'\033[31mred'`,
		"it's\t\\":      `$'it\047s\011\\'`,
		"rtl\u202eexe":  `$'rtl\342\200\256exe'`,
		"bad\xffbyte":   `$'bad\377byte'`,
		"é ok":          "'é ok'",
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

// TestQuoteRoundTrip pastes Join's line into real shells: bash reads back
// exactly the words, and no shell runs anything in them. Each quoted word
// is also inert on a terminal: sanitising it changes nothing.
func TestQuoteRoundTrip(t *testing.T) {
	dir := t.TempDir()
	words := append(slices.Clone(shelltest.Hostile), "nul\x00")
	for _, w := range words {
		q := Quote(w)
		if termsafe.Line(q) != q {
			t.Errorf("Quote(%q) = %q is not terminal-safe: termsafe.Line makes it %q", w, q, termsafe.Line(q))
		}
	}
	words = words[:len(words)-1] // NUL cannot be in an argv
	line := Join(words)
	if got := shelltest.Words(t, "bash", dir, line); !slices.Equal(got, words) {
		t.Errorf("bash read %q back as\n%q\nwant\n%q", line, got, words)
	}
	// dash (a POSIX sh before 2024) does not know $'…': the words differ
	// there, but nothing runs.
	if _, err := exec.LookPath("dash"); err == nil {
		shelltest.Words(t, "dash", dir, line)
	}
}
