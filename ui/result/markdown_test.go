package result

import (
	"strings"
	"testing"
)

// The Markdown renderer: each construct as a terminal shows it, without
// colour (the viewer's mode) and with it (headless call on a terminal).
func TestMarkdown(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		color    bool
		want     []string
	}{
		{"heading then paragraph", "# Title\nbody", false, []string{"Title", "", "body"}},
		{"heading coloured", "## Sub", true, []string{"\x1b[1;36mSub\x1b[0m"}},
		{"emphasis loses its marks", "*a* **b** `c`", false, []string{"a b c"}},
		{"emphasis coloured", "*a* **b** `c`", true, []string{"\x1b[3ma\x1b[0m \x1b[1mb\x1b[0m \x1b[33mc\x1b[0m"}},
		{"wrapped to the width", "one two three four five six seven eight nine ten eleven", false,
			[]string{"one two three four five six seven", "eight nine ten eleven"}},
		{"a long word stays whole", "x " + strings.Repeat("y", 40), false, []string{"x", strings.Repeat("y", 40)}},
		{"hard break", "a  \nb", false, []string{"a", "b"}},
		{"link as text and url", "see [docs](https://d.example/x)", false, []string{"see docs (https://d.example/x)"}},
		{"link coloured, no OSC 8", "[docs](https://d.example/x)", true, []string{"\x1b[4mdocs\x1b[0m \x1b[2m(https://d.example/x)\x1b[0m"}},
		{"autolink", "<https://a.example>", false, []string{"https://a.example"}},
		{"image", "![cat](https://c.ex/c.png)", false, []string{"[image: cat] (https://c.ex/c.png)"}},
		{"raw html is text", "a <b>b</b>\n\n<div>\nx\n</div>", false, []string{"a <b>b</b>", "", "<div>", "x", "</div>"}},
		{"escapes and entities", `\*not\* &amp; &copy;`, false, []string{"*not* & ©"}},
		{"fenced code indented, not wrapped", "```go\nx := 1 // a comment much longer than the width of the pane here\n```", false,
			[]string{"    x := 1 // a comment much longer than the width of the pane here"}},
		{"indented code", "    code", false, []string{"    code"}},
		{"block quote", "> quoted\n>\n> more", false, []string{"│ quoted", "│", "│ more"}},
		{"nested list", "- one\n  - inner\n- two", false, []string{"• one", "  • inner", "• two"}},
		{"ordered list from its start", "3. c\n4. d", false, []string{"3. c", "4. d"}},
		{"loose list", "- a\n\n- b", false, []string{"• a", "", "• b"}},
		{"list item wraps under its text", "- one two three four five six seven eight", false,
			[]string{"• one two three four five six seven", "  eight"}},
		{"thematic break", "a\n\n---\n\nb", false, []string{"a", "", strings.Repeat("─", 36), "", "b"}},
		{"server escapes inert", "# \x1b]8;;https://e.example\x07x\x1b]8;;\x07 &#27;[2J", false, []string{"␛]8;;https://e.example␇x␛]8;;␇ ␛[2J"}},
	} {
		o := Options{Width: 36}
		if tc.color {
			o.Markdown = "dark"
		}
		got, ok := markdown(tc.in, o)
		if !ok || strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// Quotes or lists nested past what goldmark parses in good time show as
// plain text, at once (a hostile "> > > …" took seconds).
func TestMarkdownTooDeepIsPlain(t *testing.T) {
	for _, deep := range []string{strings.Repeat(">", 30000) + " x", strings.Repeat("- ", 30000) + "x", "ok\n" + strings.Repeat(" ", 300) + "- x"} {
		if _, ok := markdown(deep, Options{}); ok {
			t.Errorf("%.20q… was rendered as Markdown", deep)
		}
	}
	if ls, ok := markdown(strings.Repeat("> ", 50)+"x", Options{}); !ok || !strings.HasSuffix(ls[0], "│ x") {
		t.Errorf("50 nested quotes: %q", ls)
	}
}
