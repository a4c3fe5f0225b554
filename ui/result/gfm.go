package result

// GitHub's Markdown additions the renderer reads: tables, strikethrough
// (~~x~~) and task list items (- [ ] / - [x]). goldmark's extension
// package has them, but importing it adds about 0.3 MB and 2,200
// allocations of package init (its regular expressions, the HTML renderer
// it pulls in) to every start of mcpscope, past the start-up budget
// (TestStartupWork); these are small parsers on goldmark's parser
// interfaces instead, with no package-level work beyond naming their node
// kinds.

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// align is a table column's alignment, from its delimiter row's colons.
type align uint8

const (
	alignLeft align = iota // also the default, no colons
	alignRight
	alignCenter
)

var (
	kindTable  = ast.NewNodeKind("mcpscopeTable")
	kindRow    = ast.NewNodeKind("mcpscopeTableRow")
	kindCell   = ast.NewNodeKind("mcpscopeTableCell")
	kindStrike = ast.NewNodeKind("mcpscopeStrikethrough")
	kindTask   = ast.NewNodeKind("mcpscopeTaskBox")
)

// tableNode is a table: its rows, the header first.
type tableNode struct {
	ast.BaseBlock
	aligns []align
}

func (n *tableNode) Kind() ast.NodeKind         { return kindTable }
func (n *tableNode) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

// tableRow is one row; its children are its cells, as many as the
// table has columns.
type tableRow struct {
	ast.BaseBlock
	header bool
}

func (n *tableRow) Kind() ast.NodeKind         { return kindRow }
func (n *tableRow) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

// tableCell is one cell: a block whose one line goldmark parses for
// inlines, as it does a paragraph's.
type tableCell struct{ ast.BaseBlock }

func (n *tableCell) Kind() ast.NodeKind         { return kindCell }
func (n *tableCell) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

// tableTransformer turns a paragraph holding a header row and a delimiter
// row (and the body rows after them) into a table; lines before the header
// stay a paragraph.
type tableTransformer struct{}

func (tableTransformer) Transform(p *ast.Paragraph, reader text.Reader, _ parser.Context) {
	src := reader.Source()
	lines := p.Lines()
	for i := 1; i < lines.Len(); i++ {
		delim := lines.At(i)
		aligns, ok := delimiterRow(src[delim.Start:delim.Stop])
		if !ok {
			continue
		}
		head := lines.At(i - 1)
		if len(splitRow(src, head.Start, head.Stop)) != len(aligns) {
			continue
		}
		t := &tableNode{aligns: aligns}
		t.AppendChild(t, newRow(src, head, len(aligns), true))
		for j := i + 1; j < lines.Len(); j++ {
			t.AppendChild(t, newRow(src, lines.At(j), len(aligns), false))
		}
		parent := p.Parent()
		if i == 1 {
			parent.ReplaceChild(parent, p, t)
		} else {
			lines.SetSliced(0, i-1)
			parent.InsertAfter(parent, p, t)
		}
		return
	}
}

// newRow is the line's cells, cut or filled to n.
func newRow(src []byte, line text.Segment, n int, header bool) *tableRow {
	r := &tableRow{header: header}
	cells := splitRow(src, line.Start, line.Stop)
	for k := 0; k < n; k++ {
		c := &tableCell{}
		if k < len(cells) && cells[k][0] < cells[k][1] {
			c.Lines().Append(text.NewSegment(cells[k][0], cells[k][1]))
		}
		r.AppendChild(r, c)
	}
	return r
}

// splitRow cuts src[start:stop] at its unescaped pipes into cells, each
// as [start, stop) without the spaces around it; a pipe at either end
// only bounds the row.
func splitRow(src []byte, start, stop int) [][2]int {
	for start < stop && util.IsSpace(src[start]) {
		start++
	}
	for stop > start && util.IsSpace(src[stop-1]) {
		stop--
	}
	if start < stop && src[start] == '|' {
		start++
	}
	if stop > start && src[stop-1] == '|' && !escaped(src, start, stop-1) {
		stop--
	}
	var cells [][2]int
	from := start
	for i := start; i <= stop; i++ {
		if i < stop && (src[i] != '|' || escaped(src, start, i)) {
			continue
		}
		a, b := from, i
		for a < b && util.IsSpace(src[a]) {
			a++
		}
		for b > a && util.IsSpace(src[b-1]) {
			b--
		}
		cells = append(cells, [2]int{a, b})
		from = i + 1
	}
	return cells
}

// escaped reports whether src[i] follows an odd run of backslashes that
// starts at or after start.
func escaped(src []byte, start, i int) bool {
	n := 0
	for j := i - 1; j >= start && src[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// delimiterRow reads a table's delimiter row ("| --- | :-: | --: |"): the
// columns' alignments, false when line is not one. It needs a pipe, so
// that a lone "---" stays what CommonMark makes of it.
func delimiterRow(line []byte) ([]align, bool) {
	pipe := false
	for _, c := range line {
		switch c {
		case '|':
			pipe = true
		case '-', ':', ' ', '\t', '\n', '\r':
		default:
			return nil, false
		}
	}
	if !pipe {
		return nil, false
	}
	cells := splitRow(line, 0, len(line))
	aligns := make([]align, len(cells))
	for k, c := range cells {
		cell := line[c[0]:c[1]]
		left, right := len(cell) > 0 && cell[0] == ':', len(cell) > 1 && cell[len(cell)-1] == ':'
		dashes := cell
		if left {
			dashes = dashes[1:]
		}
		if right {
			dashes = dashes[:len(dashes)-1]
		}
		if len(dashes) == 0 {
			return nil, false
		}
		for _, d := range dashes {
			if d != '-' {
				return nil, false
			}
		}
		switch {
		case left && right:
			aligns[k] = alignCenter
		case right:
			aligns[k] = alignRight
		}
	}
	return aligns, true
}

// strikeNode is ~~struck~~ text.
type strikeNode struct{ ast.BaseInline }

func (n *strikeNode) Kind() ast.NodeKind         { return kindStrike }
func (n *strikeNode) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

// strikeParser reads runs of two tildes as strikethrough delimiters,
// matched as emphasis is (goldmark's delimiter stack). One tilde, or three
// and more, stay text: "~5 min" and "~/path" are common in tool output.
type strikeParser struct{}

type strikeDelimiter struct{}

func (strikeDelimiter) IsDelimiter(b byte) bool { return b == '~' }
func (strikeDelimiter) OnMatch(int) ast.Node    { return &strikeNode{} }

func (strikeDelimiter) CanOpenCloser(opener, closer *parser.Delimiter) bool {
	return opener.Char == closer.Char && opener.OriginalLength == closer.OriginalLength
}

func (strikeParser) Trigger() []byte { return []byte{'~'} }

func (strikeParser) Parse(_ ast.Node, block text.Reader, pc parser.Context) ast.Node {
	before := block.PrecendingCharacter()
	line, seg := block.PeekLine()
	d := parser.ScanDelimiter(line, before, 1, strikeDelimiter{})
	if d == nil {
		return nil
	}
	run := d.OriginalLength
	block.Advance(run)
	if run != 2 {
		return ast.NewTextSegment(seg.WithStop(seg.Start + run))
	}
	d.Segment = seg.WithStop(seg.Start + run)
	pc.PushDelimiter(d)
	return d
}

// taskBox is a task list item's [ ] or [x].
type taskBox struct {
	ast.BaseInline
	checked bool
}

func (n *taskBox) Kind() ast.NodeKind         { return kindTask }
func (n *taskBox) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

// taskParser reads "[ ]", "[x]" or "[X]" before a space or the line's end
// at the very start of a list item's first paragraph.
type taskParser struct{}

func (taskParser) Trigger() []byte { return []byte{'['} }

func (taskParser) Parse(parent ast.Node, block text.Reader, _ parser.Context) ast.Node {
	if parent.FirstChild() != nil || parent.PreviousSibling() != nil {
		return nil
	}
	if _, ok := parent.Parent().(*ast.ListItem); !ok {
		return nil
	}
	line, _ := block.PeekLine()
	if len(line) < 3 || line[0] != '[' || line[2] != ']' || len(line) > 3 && !util.IsSpace(line[3]) {
		return nil
	}
	switch line[1] {
	case ' ', 'x', 'X':
	default:
		return nil
	}
	block.Advance(3)
	return &taskBox{checked: line[1] != ' '}
}

// taskOf is the box of a task list item, nil for another item.
func taskOf(item ast.Node) *taskBox {
	if first := item.FirstChild(); first != nil {
		if b, ok := first.FirstChild().(*taskBox); ok {
			return b
		}
	}
	return nil
}
