package cli

import (
	"bytes"
	"cmp"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"
)

// fangWidth is the variable fang reads, once per process, for the width it
// wraps help to (it otherwise takes the terminal's, or 120 when stdout is
// not one).
const fangWidth = "__FANG_TEST_WIDTH"

// helpRequested reports whether args ask for help (help CMD, -h, --help
// before --).
func helpRequested(args []string) bool {
	for i, a := range args {
		switch {
		case a == "--":
			return false
		case a == "-h" || a == "--help" || i == 0 && a == "help":
			return true
		}
	}
	return false
}

// setHelpWidth sets, before fang first reads it (for help, and for the
// styles it makes on any error), the width fang wraps help to: the
// terminal's (at most 120) when stdout is one, 80 otherwise. Fang reads it
// once per process; a width already set is kept.
func setHelpWidth(stdout io.Writer) int {
	if w, _ := strconv.Atoi(os.Getenv(fangWidth)); w > 0 {
		return w
	}
	w := 80
	if f, ok := stdout.(*os.File); ok && term.IsTerminal(f.Fd()) {
		if cols, _, err := term.GetSize(f.Fd()); err == nil && cols > 0 {
			w = min(cols, 120)
		}
	}
	os.Setenv(fangWidth, strconv.Itoa(w))
	return w
}

// helpOutput is stdout for help: the lines fang pads to its width lose
// their trailing spaces, and long rows are wrapped. Its Flush writes what
// is left of the last line.
func helpOutput(stdout io.Writer) *trimWriter {
	return &trimWriter{w: stdout, width: setHelpWidth(stdout)}
}

// trimWriter writes help lines without their trailing spaces, and wraps
// the rows fang leaves long (a flag or a command and its description) with
// the description's column as a hanging indent; when that column is past
// half the width, every row's description goes under its key instead.
type trimWriter struct {
	w     io.Writer
	width int
	line  []byte
}

// rowKey is the start of a row up to its description: an indented key
// (which may hold single spaces, as "-h --help"), then two spaces or more.
var rowKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ +\S+(?: \S+)*? {2,}`) })

// wrapRow wraps line to t.width when it is a row; other lines stay whole
// (fang truncates its code blocks itself).
func (t *trimWriter) wrapRow(line []byte) []byte {
	s := string(line)
	w := ansi.StringWidth(s)
	plain := ansi.Strip(s)
	col := len(rowKey().FindString(plain))
	if t.width <= 0 || col == 0 || w <= t.width && col <= t.width/2 {
		return line
	}
	head, desc := ansi.Cut(s, 0, col), ansi.Cut(s, col, w)
	if col > t.width/2 {
		// The description column is too far right to wrap in: the
		// description goes under its key, indented.
		indent := len(plain) - len(strings.TrimLeft(plain, " ")) + 4
		head = strings.TrimRight(head, " ") + "\n" + strings.Repeat(" ", indent)
		col = indent
	}
	return []byte(head + strings.Join(wordWrap(desc, t.width-col), "\n"+strings.Repeat(" ", col)))
}

// wordWrap breaks s into lines of at most limit cells at spaces only (a
// word longer than limit has a line of its own); escape sequences stay
// where they are and count no width.
func wordWrap(s string, limit int) []string {
	var lines []string
	cur, curW := "", 0
	for _, word := range strings.Split(s, " ") {
		ww := ansi.StringWidth(word)
		switch {
		case cur == "" && curW == 0:
			cur, curW = word, ww
		case curW+1+ww <= limit:
			cur, curW = cur+" "+word, curW+1+ww
		default:
			lines = append(lines, cur)
			cur, curW = word, ww
		}
	}
	return append(lines, cur)
}

func (t *trimWriter) Write(p []byte) (int, error) {
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			t.line = append(t.line, rest...)
			break
		}
		t.line = append(t.wrapRow(bytes.TrimRight(append(t.line, rest[:i]...), " ")), '\n')
		if _, err := t.w.Write(t.line); err != nil {
			return 0, err
		}
		t.line, rest = t.line[:0], rest[i+1:]
	}
	return len(p), nil
}

// Flush writes the last line when it has no newline.
func (t *trimWriter) Flush() {
	if len(t.line) > 0 {
		t.w.Write(bytes.TrimRight(t.line, " "))
		t.line = t.line[:0]
	}
}

// wrapHelpText wraps every command's help text (its Long, or its Short
// when it has none, as fang shows it) to fang's width at spaces only,
// before fang renders it: fang's own wrapping also breaks words at their
// hyphens (--host, bash-completion), and a word broken there cannot be
// searched for or pasted. width is setHelpWidth's; fang pads the text by
// two columns. Lines that fit, and so the paragraph breaks, are kept.
func wrapHelpText(root *cobra.Command, width int) {
	limit := width - 2
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Long = wrapLines(cmp.Or(c.Long, c.Short), limit) // Short stays one line in lists
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// wrapLines word-wraps each line of s longer than limit cells, its
// continuation lines indented as it is.
func wrapLines(s string, limit int) string {
	if limit < 1 {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if ansi.StringWidth(l) <= limit {
			continue
		}
		body := strings.TrimLeft(l, " ")
		indent := l[:len(l)-len(body)]
		lines[i] = indent + strings.Join(wordWrap(body, limit-len(indent)), "\n"+indent)
	}
	return strings.Join(lines, "\n")
}
