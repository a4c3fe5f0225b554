package result

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// GitHub's tables, strikethrough and task lists, as a terminal shows them.
func TestMarkdownGFM(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		color    bool
		want     []string
	}{
		{"table aligned, pipes gone", "| Name | Qty | Note |\n| :--- | --: | :-: |\n| apple | 3 | crisp |\n| kiwi | 12 | ok |", false, []string{
			"Name  │ Qty │ Note",
			"──────┼─────┼──────",
			"apple │   3 │ crisp",
			"kiwi  │  12 │  ok"}},
		{"table header bold, rules faint", "a | b\n--|--\n1 | 2", true, []string{
			"\x1b[1ma\x1b[0m \x1b[2m│\x1b[0m \x1b[1mb\x1b[0m",
			"\x1b[2m──┼──\x1b[0m",
			"1 \x1b[2m│\x1b[0m 2"}},
		{"text before the header stays a paragraph", "Fruit:\n| a | b |\n|---|---|\n| 1 | 2 |", false, []string{
			"Fruit:", "", "a │ b", "──┼──", "1 │ 2"}},
		{"short rows filled, long rows cut", "| a | b |\n|---|---|\n| 1 |\n| 1 | 2 | 3 |", false, []string{
			"a │ b", "──┼──", "1 │", "1 │ 2"}},
		{"escaped pipe is a cell's text, in code too", "| a | b |\n|---|---|\n| x \\| y | `p\\|q` |", false, []string{
			"a     │ b", "──────┼────", "x | y │ p|q"}},
		{"emphasis and links in cells", "| k | v |\n|---|---|\n| **b** | [d](https://d.ex) |", false, []string{
			"k │ v", "──┼─────────────────", "b │ d (https://d.ex)"}},
		{"header and delimiter of different widths is no table", "| a | b |\n|---|\n| 1 | 2 |", false, []string{
			"| a | b | |---| | 1 | 2 |"}},
		{"a delimiter row needs a pipe", "a\n:-:", false, []string{"a :-:"}},
		{"table in a quote", "> | q | r |\n> |---|---|\n> | 1 | 2 |", false, []string{"│ q │ r", "│ ──┼──", "│ 1 │ 2"}},
		{"strikethrough keeps its marks without colour", "~~old~~ new", false, []string{"~~old~~ new"}},
		{"strikethrough styled with colour", "~~old price~~ new", true, []string{"\x1b[9mold\x1b[0m \x1b[9mprice\x1b[0m new"}},
		{"one tilde or three stay text", "~5 min ~~~x~~~ ~y~", true, []string{"~5 min ~~~x~~~ ~y~"}},
		{"unmatched tildes stay text", "a ~~b", true, []string{"a ~~b"}},
		{"task list", "- [ ] todo\n- [x] done\n- [X] also\n- plain", false, []string{"☐ todo", "☑ done", "☑ also", "• plain"}},
		{"task list item wraps under its text", "- [ ] one two three four five six seven eight", false,
			[]string{"☐ one two three four five six seven", "  eight"}},
		{"ordered task list keeps its number", "3. [x] done", false, []string{"3. ☑ done"}},
		{"a box not at an item's start is text", "- a [ ] b\n\n[x] c", false, []string{"• a [ ] b", "", "[x] c"}},
		{"a box needs a space after it", "- [x]y", false, []string{"• [x]y"}},
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

// A table wider than the width narrows its widest columns and wraps their
// cells (cutting a word longer than its column), a rule between wrapped
// rows; every line fits, in colour too.
func TestMarkdownTableFitsTheWidth(t *testing.T) {
	in := "| id | description | state |\n|---|---|:-:|\n" +
		"| 1 | one two three four five six seven eight nine ten | ok |\n" +
		"| 2 | averyveryverylongwordwithoutanyspaces | failed |"
	for _, color := range []string{"", "dark"} {
		got, ok := markdown(in, Options{Width: 36, Markdown: color})
		if !ok {
			t.Fatal("not rendered")
		}
		plain := ansi.Strip(strings.Join(got, "\n"))
		want := strings.Join([]string{
			"id │ description            │ state",
			"───┼────────────────────────┼───────",
			"1  │ one two three four     │   ok",
			"   │ five six seven eight   │",
			"   │ nine ten               │",
			"───┼────────────────────────┼───────",
			"2  │ averyveryverylongwordw │ failed",
			"   │ ithoutanyspaces        │"}, "\n")
		if plain != want {
			t.Errorf("colour %q:\n got\n%s\nwant\n%s", color, plain, want)
		}
		for _, l := range got {
			if w := ansi.StringWidth(l); w > 36 {
				t.Errorf("colour %q: a line %d wide: %q", color, w, l)
			}
			if color != "" && strings.Count(l, "\x1b[1m")+strings.Count(l, "\x1b[2m") != strings.Count(l, "\x1b[0m") {
				t.Errorf("a line leaves a colour open: %q", l)
			}
		}
	}
}

// A table too wide to give each column a few cells shows each row as
// "header: value" lines.
func TestMarkdownTableTooNarrowIsRecords(t *testing.T) {
	in := "| alpha | beta | gamma | delta |\n|---|---|---|---|\n| a long first value | b | c | d |\n| 2 | 3 | 4 | 5 |"
	got, _ := markdown(in, Options{Width: 20})
	want := []string{"alpha: a long first", "value", "beta: b", "gamma: c", "delta: d", "", "alpha: 2", "beta: 3", "gamma: 4", "delta: 5"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// Escapes in a cell, raw or as a character reference, are inert, and a
// cell's width counts them as the placeholders it shows.
func TestMarkdownTableCellsInert(t *testing.T) {
	in := "| x \x1b[31m | y |\n|--|--|\n| \x1b]8;;http://e.example\x07z\x1b]8;;\x07 | &#27;[2J &#x9b;1m |"
	for _, color := range []string{"", "dark"} {
		got, _ := markdown(in, Options{Width: 60, Markdown: color})
		plain := ansi.Strip(strings.Join(got, "\n"))
		for _, l := range got {
			rest := strings.NewReplacer("\x1b[0m", "", "\x1b[1m", "", "\x1b[2m", "").Replace(l)
			if strings.ContainsAny(rest, "\x1b\x07\u009b") {
				t.Errorf("colour %q: a raw escape in %q", color, l)
			}
		}
		if !strings.Contains(plain, "␛]8;;http://e.example␇z␛]8;;␇ │ ␛[2J") || !strings.Contains(plain, "x ␛[31m") {
			t.Errorf("colour %q: the escapes do not show as placeholders:\n%s", color, plain)
		}
		lines := strings.Split(plain, "\n")
		if i, j := strings.Index(lines[0], "│"), strings.Index(lines[2], "│"); i < 0 || j < 0 || ansi.StringWidth(lines[0][:i]) != ansi.StringWidth(lines[2][:j]) {
			t.Errorf("colour %q: columns not aligned:\n%s", color, plain)
		}
	}
}

// Text without a MIME type reads as Markdown by its tables and
// strikethrough too.
func TestLooksMarkdownGFM(t *testing.T) {
	for _, s := range []string{"a | b\n--|--\n1 | 2", "a | b\n:-: | ---", "price ~~10~~ 8"} {
		if !looksMarkdown(s) {
			t.Errorf("%q does not read as Markdown", s)
		}
	}
	for _, s := range []string{"a | b", "took ~5 min", "x -- y | z"} {
		if looksMarkdown(s) {
			t.Errorf("%q reads as Markdown", s)
		}
	}
}

// server-everything's own features.md table: at 80 columns the long
// names are cut after a hyphen or slash; at 90 every word keeps whole
// (columns start from their longest word).
func TestMarkdownTableServerEverything(t *testing.T) {
	in := "| Direction        | Request Type             | Task Executor | Demo Tool                           |\n" +
		"| ---------------- | ------------------------ | ------------- | ----------------------------------- |\n" +
		"| Client -> Server | `tools/call`             | Server        | `simulate-research-query`           |\n" +
		"| Server -> Client | `sampling/createMessage` | Client        | `trigger-sampling-request-async`    |\n" +
		"| Server -> Client | `elicitation/create`     | Client        | `trigger-elicitation-request-async` |\n"
	got, _ := markdown(in, Options{Width: 80})
	want := []string{
		"Direction        │ Request Type          │ Task Executor │ Demo Tool",
		"─────────────────┼───────────────────────┼───────────────┼──────────────────────",
		"Client -> Server │ tools/call            │ Server        │ simulate-research-",
		"                 │                       │               │ query",
		"─────────────────┼───────────────────────┼───────────────┼──────────────────────",
		"Server -> Client │ sampling/             │ Client        │ trigger-sampling-",
		"                 │ createMessage         │               │ request-async",
		"─────────────────┼───────────────────────┼───────────────┼──────────────────────",
		"Server -> Client │ elicitation/create    │ Client        │ trigger-elicitation-",
		"                 │                       │               │ request-async"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("at 80:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got, _ = markdown(in, Options{Width: 90})
	text := strings.Join(got, "\n")
	for _, w := range []string{"simulate-research-query", "sampling/createMessage", "trigger-elicitation-request-async", "Executor"} {
		if !strings.Contains(text, w) {
			t.Errorf("at 90, %q is cut:\n%s", w, text)
		}
	}
	for _, l := range got {
		if ansi.StringWidth(l) > 90 {
			t.Errorf("at 90, a line %d wide: %q", ansi.StringWidth(l), l)
		}
	}
}
