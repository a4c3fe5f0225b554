package result

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// colSep parts a table's columns; the rule under the header crosses it.
const (
	colSep  = " │ "
	ruleSep = "─┼─"
)

// minCol is the fewest columns of text a table column is narrowed to
// (fewer when its widest cell is narrower); a table that cannot give every
// column that much shows as records instead.
const minCol = 6

// table renders t as aligned columns, the header in bold (with colour) and
// ruled off. Columns keep their widest cell's width when the table fits in
// w; else the widest are narrowed, evenly, and their cells wrap within them
// (a word longer than its column is cut), with a rule between body rows so
// that a wrapped row reads as one. Too narrow even for that, each body row
// shows as "header: value" lines.
func (r mdRenderer) table(t *tableNode, w int) []string {
	in := r
	in.cell = true
	n := len(t.aligns)
	var rows [][][]span
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		sgr := ""
		if row.(*tableRow).header {
			sgr = sgrStrong
		}
		var cells [][]span
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, in.inlines(c, sgr))
		}
		rows = append(rows, cells)
	}
	natural, words := make([]int, n), make([]int, n)
	for _, cells := range rows {
		for k, c := range cells {
			natural[k] = max(natural[k], 1, spansWidth(c))
			words[k] = max(words[k], longestWord(c))
		}
	}
	widths := fitColumns(natural, words, w-len([]rune(colSep))*(n-1))
	if widths == nil {
		return r.records(rows, w)
	}
	lines := func(cells [][]span) []string {
		cols := make([][]string, n)
		height := 0
		for k, c := range cells {
			cols[k] = wrapHard(c, widths[k], r.color)
			height = max(height, len(cols[k]))
		}
		out := make([]string, height)
		for i := range out {
			parts := make([]string, n)
			for k := range cols {
				s := ""
				if i < len(cols[k]) {
					s = cols[k][i]
				}
				parts[k] = alignCell(s, widths[k], t.aligns[k])
			}
			out[i] = strings.TrimRight(strings.Join(parts, " "+r.paint(strings.TrimSpace(colSep), sgrFaint)+" "), " ")
		}
		return out
	}
	rules := make([]string, n)
	for k, wk := range widths {
		rules[k] = strings.Repeat("─", wk)
	}
	rule := r.paint(strings.Join(rules, ruleSep), sgrFaint)
	out := append(lines(rows[0]), rule)
	var body [][]string
	wrapped := false
	for _, cells := range rows[1:] {
		ls := lines(cells)
		wrapped = wrapped || len(ls) > 1
		body = append(body, ls)
	}
	for i, ls := range body {
		if i > 0 && wrapped {
			out = append(out, rule)
		}
		out = append(out, ls...)
	}
	return out
}

// records is a table too wide for w: each body row as its cells, one
// "header: value" line each (wrapped), a blank line between rows; a table
// with no body is its header, in one line.
func (r mdRenderer) records(rows [][][]span, w int) []string {
	head := rows[0]
	if len(rows) == 1 {
		var spans []span
		for k, c := range head {
			if k > 0 {
				spans = append(spans, span{" · ", ""})
			}
			spans = append(spans, c...)
		}
		return wrap(spans, w, r.color)
	}
	var out []string
	for i, cells := range rows[1:] {
		if i > 0 {
			out = append(out, "")
		}
		for k, c := range cells {
			spans := append(append(append([]span(nil), head[k]...), span{": ", ""}), c...)
			out = append(out, wrap(spans, w, r.color)...)
		}
	}
	return out
}

// fitColumns is the columns' widths in avail cells: as they are when they
// fit. Else each column starts from its longest word (so that no word is
// cut) or, when those do not fit, from min(its width, minCol); what is
// left goes a cell at a time to the narrowest column still short of its
// width. Nil when even min(width, minCol) each does not fit.
func fitColumns(natural, words []int, avail int) []int {
	sum := func(ns []int) int {
		t := 0
		for _, n := range ns {
			t += n
		}
		return t
	}
	if sum(natural) <= avail {
		return natural
	}
	widths := make([]int, len(natural))
	for k, n := range natural {
		widths[k] = min(n, words[k])
	}
	if sum(widths) > avail {
		for k, n := range natural {
			widths[k] = min(n, minCol)
		}
	}
	left := avail - sum(widths)
	if left < 0 {
		return nil
	}
	for ; left > 0; left-- {
		pick := -1
		for k, wk := range widths {
			if wk < natural[k] && (pick < 0 || wk < widths[pick]) {
				pick = k
			}
		}
		if pick < 0 {
			break
		}
		widths[pick]++
	}
	return widths
}

// alignCell pads s (perhaps coloured) to w cells as a says.
func alignCell(s string, w int, a align) string {
	gap := max(0, w-ansi.StringWidth(s))
	switch a {
	case alignRight:
		return strings.Repeat(" ", gap) + s
	case alignCenter:
		return strings.Repeat(" ", gap/2) + s + strings.Repeat(" ", gap-gap/2)
	}
	return s + strings.Repeat(" ", gap)
}

// longestWord is the width of the widest word in spans.
func longestWord(spans []span) int {
	var b strings.Builder
	for _, s := range spans {
		b.WriteString(s.text)
	}
	n := 0
	for _, f := range strings.Fields(b.String()) {
		n = max(n, ansi.StringWidth(f))
	}
	return n
}

// spansWidth is how many cells the spans take on one line.
func spansWidth(spans []span) int {
	n := 0
	for _, s := range spans {
		n += ansi.StringWidth(s.text)
	}
	return n
}
