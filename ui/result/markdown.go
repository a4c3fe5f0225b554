package result

// A small Markdown renderer for a terminal, on goldmark's core parser
// (CommonMark, no extensions). It replaces glamour, whose dependencies
// (chroma, bluemonday, goldmark's extensions) allocate megabytes in their
// package inits at every start of mcpscope. Links show as "text (url)",
// never as OSC 8; the only escapes it writes are its own SGR colours, and
// every piece of text it prints goes through termsafe first.

import (
	"strconv"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"mcpscope/internal/termsafe"
)

// SGR parameters of the Markdown marks (used only with colour).
const (
	sgrHeading = "1;36"
	sgrStrong  = "1"
	sgrEmph    = "3"
	sgrCode    = "33"
	sgrLink    = "4"
	sgrFaint   = "2"
	sgrStrike  = "9"
)

// mdParser is goldmark's CommonMark parser with the GitHub additions of
// gfm.go (tables, strikethrough, task lists), built once on first use.
var mdParser = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(append(parser.DefaultInlineParsers(),
			util.Prioritized(taskParser{}, 50), util.Prioritized(strikeParser{}, 500))...),
		parser.WithParagraphTransformers(append(parser.DefaultParagraphTransformers(),
			util.Prioritized(tableTransformer{}, 200))...))
})

// maxNest is how deep quotes and lists indent; deeper ones show flat, so
// that a hostile "> > > …" costs linear time, not quadratic.
const maxNest = 8

// mdRenderer walks the tree of one document.
type mdRenderer struct {
	src   []byte
	color bool
	depth int  // of quotes and lists around the node
	cell  bool // in a table cell, where \| is a pipe even in code
}

// nested is r inside one more quote or list, and whether that one still
// indents.
func (r mdRenderer) nested() (mdRenderer, bool) {
	r.depth++
	return r, r.depth <= maxNest
}

// markdown renders text (sanitised first) as lines at most o.Width wide
// where words allow; SGR colours only when o.Markdown is set. False for a
// text nested too deep to parse in good time (goldmark takes quadratic
// time in the depth): it shows as plain text.
func markdown(s string, o Options) ([]string, bool) {
	if tooDeep(s) {
		return nil, false
	}
	w := o.Width
	if w <= 0 {
		w = 80
	}
	src := []byte(termsafe.Text(s))
	doc := mdParser().Parse(text.NewReader(src))
	r := mdRenderer{src: src, color: o.Markdown != ""}
	return r.blocks(doc, max(20, w), false), true
}

// maxPrefix is the most columns of quote and list marks and indentation
// a line may start with before the text is too deep for Markdown.
const maxPrefix = 200

// tooDeep reports whether some line nests quotes or lists past maxPrefix.
func tooDeep(s string) bool {
	for line := range strings.Lines(s) {
		if len(line)-len(strings.TrimLeft(line, " \t>-*+.)0123456789")) > maxPrefix {
			return true
		}
	}
	return false
}

// blocks renders n's block children, a blank line between them unless
// tight (a tight list item's paragraphs).
func (r mdRenderer) blocks(n ast.Node, w int, tight bool) []string {
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		ls := r.block(c, w)
		if len(ls) == 0 {
			continue
		}
		if len(out) > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, ls...)
	}
	return out
}

func (r mdRenderer) block(n ast.Node, w int) []string {
	switch n := n.(type) {
	case *ast.Heading:
		return wrap(r.inlines(n, sgrHeading), w, r.color)
	case *ast.Paragraph, *ast.TextBlock:
		return wrap(r.inlines(n, ""), w, r.color)
	case *ast.ThematicBreak:
		return []string{r.paint(strings.Repeat("─", min(w, 40)), sgrFaint)}
	case *ast.CodeBlock, *ast.FencedCodeBlock, *ast.HTMLBlock:
		return r.verbatim(n)
	case *ast.Blockquote:
		in, indent := r.nested()
		if !indent {
			return in.blocks(n, w, false)
		}
		return prefix(in.blocks(n, w-2, false), r.paint("│", sgrFaint)+" ", r.paint("│", sgrFaint)+" ")
	case *ast.List:
		in, indent := r.nested()
		return in.list(n, w, indent)
	case *tableNode:
		return r.table(n, w)
	}
	return r.blocks(n, w, false) // a node this renderer does not know: its children
}

// verbatim is a code or HTML block's lines as they are; code indented.
func (r mdRenderer) verbatim(n ast.Node) []string {
	var b strings.Builder
	ls := n.Lines()
	for i := 0; i < ls.Len(); i++ {
		seg := ls.At(i)
		b.Write(seg.Value(r.src))
	}
	if h, ok := n.(*ast.HTMLBlock); ok && h.HasClosure() {
		b.Write(h.ClosureLine.Value(r.src))
	}
	out := strings.Split(strings.TrimRight(termsafe.Text(b.String()), "\n"), "\n")
	if _, html := n.(*ast.HTMLBlock); !html {
		for i, l := range out {
			out[i] = strings.TrimRight("    "+l, " ")
		}
	}
	return out
}

// list renders items with their marker, nested content indented under it
// (unless too deep: then flat, without markers).
func (r mdRenderer) list(l *ast.List, w int, indent bool) []string {
	var out []string
	num := l.Start
	for it := l.FirstChild(); it != nil; it = it.NextSibling() {
		mark := "• "
		if l.IsOrdered() {
			mark = strconv.Itoa(num) + ". "
			num++
		}
		if box := taskOf(it); box != nil {
			check := "☐ "
			if box.checked {
				check = "☑ "
			}
			if l.IsOrdered() {
				mark += check
			} else {
				mark = check
			}
		}
		pad := strings.Repeat(" ", ansi.StringWidth(mark))
		if !indent {
			mark, pad = "", ""
		}
		ls := r.blocks(it, w-len(pad), l.IsTight)
		if len(ls) == 0 {
			ls = []string{""}
		}
		if len(out) > 0 && !l.IsTight {
			out = append(out, "")
		}
		out = append(out, prefix(ls, mark, pad)...)
	}
	return out
}

// prefix puts first before the first line and rest before the others
// (nothing before a blank line but a quote's bar).
func prefix(ls []string, first, rest string) []string {
	for i, l := range ls {
		p := rest
		if i == 0 {
			p = first
		}
		if l == "" {
			p = strings.TrimRight(p, " ")
		}
		ls[i] = p + l
	}
	return ls
}

// span is a run of inline text in one style.
type span struct{ text, sgr string }

// inlines flattens n's inline children into styled spans; "\n" in a
// span's text is a hard line break.
func (r mdRenderer) inlines(n ast.Node, sgr string) []span {
	var out []span
	var walk func(n ast.Node, sgr string)
	add := func(s, sgr string) { out = append(out, span{s, sgr}) }
	walk = func(n ast.Node, sgr string) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Text:
				add(r.unescape(c.Segment.Value(r.src)), sgr)
				switch {
				case c.HardLineBreak():
					add("\n", "")
				case c.SoftLineBreak():
					add(" ", "")
				}
			case *ast.String:
				add(r.unescape(c.Value), sgr)
			case *ast.CodeSpan:
				var b strings.Builder
				for t := c.FirstChild(); t != nil; t = t.NextSibling() {
					if t, ok := t.(*ast.Text); ok {
						b.Write(t.Segment.Value(r.src))
					}
				}
				code := b.String()
				if r.cell {
					code = strings.ReplaceAll(code, `\|`, "|")
				}
				add(code, join(sgr, sgrCode))
			case *ast.Emphasis:
				em := sgrEmph
				if c.Level > 1 {
					em = sgrStrong
				}
				walk(c, join(sgr, em))
			case *ast.Link:
				walk(c, join(sgr, sgrLink))
				add(" ("+r.unescape(c.Destination)+")", join(sgr, sgrFaint))
			case *ast.Image:
				add("[image: ", sgr)
				walk(c, sgr)
				add("]", sgr)
				add(" ("+r.unescape(c.Destination)+")", join(sgr, sgrFaint))
			case *strikeNode:
				if r.color {
					walk(c, join(sgr, sgrStrike))
				} else { // the marks stay: without a style they are all that says so
					add("~~", sgr)
					walk(c, sgr)
					add("~~", sgr)
				}
			case *taskBox: // list shows it as the item's mark
			case *ast.AutoLink:
				add(string(c.URL(r.src)), join(sgr, sgrLink))
			case *ast.RawHTML:
				for i := 0; i < c.Segments.Len(); i++ {
					seg := c.Segments.At(i)
					add(string(seg.Value(r.src)), sgr)
				}
			default:
				walk(c, sgr)
			}
		}
	}
	walk(n, sgr)
	return out
}

// unescape resolves backslash escapes and character references, as an
// HTML renderer would; a reference may name a control character, so the
// result is sanitised again.
func (r mdRenderer) unescape(b []byte) string {
	b = util.UnescapePunctuations(b)
	b = util.ResolveNumericReferences(b)
	b = util.ResolveEntityNames(b)
	return termsafe.Text(string(b))
}

func join(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + ";" + b
}

func (r mdRenderer) paint(s, sgr string) string {
	if !r.color || sgr == "" || s == "" {
		return s
	}
	return "\x1b[" + sgr + "m" + s + "\x1b[0m"
}

// wrap lays spans out as lines at most w wide, breaking at spaces (a word
// longer than w stays whole); each word is coloured on its own, so a line
// never leaves a colour open.
func wrap(spans []span, w int, color bool) []string { return layout(spans, w, color, false) }

// wrapHard is wrap that also cuts a word longer than w, for a table's
// columns: after its last hyphen, slash, underscore or dot that fits, else
// at w.
func wrapHard(spans []span, w int, color bool) []string { return layout(spans, w, color, true) }

func layout(spans []span, w int, color, hard bool) []string {
	r := mdRenderer{color: color}
	var out []string
	var line, word strings.Builder
	lineW, wordW := 0, 0
	flushWord := func() {
		if wordW == 0 {
			return
		}
		if lineW > 0 && lineW+1+wordW > w {
			out = append(out, line.String())
			line.Reset()
			lineW = 0
		}
		if lineW > 0 {
			line.WriteByte(' ')
			lineW++
		}
		line.WriteString(word.String())
		lineW += wordW
		word.Reset()
		wordW = 0
	}
	for _, s := range spans {
		for _, f := range strings.SplitAfter(s.text, " ") {
			for i, part := range strings.Split(f, "\n") {
				if i > 0 { // a hard break
					flushWord()
					out = append(out, line.String())
					line.Reset()
					lineW = 0
				}
				piece := strings.TrimRight(part, " ")
				for hard && piece != "" && wordW+ansi.StringWidth(piece) > w {
					head, tail := cutCells(piece, w-wordW)
					if i := strings.LastIndexAny(head, "-/_."); i > 0 && tail != "" {
						head, tail = piece[:i+1], piece[i+1:] // after a hyphen, slash…
					}
					if head == "" && wordW == 0 { // one character wider than w
						head, tail = cutCells(piece, 2)
					}
					word.WriteString(r.paint(head, s.sgr))
					wordW += ansi.StringWidth(head)
					flushWord()
					out = append(out, line.String()) // the word goes on below
					line.Reset()
					lineW = 0
					piece = tail
				}
				word.WriteString(r.paint(piece, s.sgr))
				wordW += ansi.StringWidth(piece)
				if piece != part {
					flushWord()
				}
			}
		}
	}
	flushWord()
	if lineW > 0 || len(out) == 0 {
		out = append(out, line.String())
	}
	return out
}

// cutCells splits plain text after at most n cells (a zero-width rune
// stays with the one before it).
func cutCells(s string, n int) (string, string) {
	w := 0
	for i, c := range s {
		cw := ansi.StringWidth(string(c))
		if w+cw > n {
			return s[:i], s[i:]
		}
		w += cw
	}
	return s, ""
}
