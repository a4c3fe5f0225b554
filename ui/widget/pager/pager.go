package pager

import (
	"bytes"
	"sort"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"

	"mcpscope/themes"
	"mcpscope/ui/widget"
)

var (
	clamp = widget.Clamp
	itoa  = strconv.Itoa
)

// Pager is the view over one doc: a cursor line (what a fold acts on), the
// first visible row, folds, soft wrap or a horizontal offset, and search
// hits. Every operation costs in proportion to the rows on screen, not to
// the doc: lines are laid out when they are drawn or passed, and only a
// huge line's layout (checkpoints every few rows) is kept.
type Pager struct {
	d        *Doc
	cur      int
	top, row int // the first visible line and its first visible row
	x        int // horizontal offset in cells when not wrapping
	wrap     bool
	folds    map[int]int // folded opener → its closer
	counts   map[int]int // folded opener → its members, once counted
	outer    []int       // folded openers outside any other fold, sorted
	w, h     int         // the text area (cells, rows) last laid out for
	lays     map[layKey]*lineLayout
	layOrder []layKey

	query string
	hits  []hit
	hi    int
}

type hit struct{ line, pos int } // pos: byte offset in the line's source

// maxHits bounds a search's hits (16 bytes each).
const maxHits = 50000

// New is a pager over d, wrapping, 80×20 until resized.
func New(d *Doc) *Pager {
	return &Pager{d: d, wrap: true, folds: map[int]int{}, w: 80, h: 20}
}

// Doc is the doc shown (nil for none).
func (p *Pager) Doc() *Doc { return p.d }

// Cursor is the cursor's line.
func (p *Pager) Cursor() int { return p.cur }

// Wrap reports whether long lines wrap.
func (p *Pager) Wrap() bool { return p.wrap }

// Size is the text area laid out for.
func (p *Pager) Size() (w, h int) { return p.w, p.h }

// Query is the search shown ("": none).
func (p *Pager) Query() string { return p.query }

// Hits is how many places match the search (at most maxHits).
func (p *Pager) Hits() int { return len(p.hits) }

// SetDoc shows a new version of the doc, keeping the place when it can.
func (p *Pager) SetDoc(d *Doc) {
	if p.d == nil || d.n != p.d.n {
		p.folds, p.outer = map[int]int{}, nil
	}
	p.counts = nil
	p.d, p.lays, p.layOrder = d, nil, nil
	p.cur = clamp(p.cur, 0, d.n-1)
	if p.top >= d.n {
		p.top, p.row = max(0, d.n-1), 0
	}
	p.row = min(p.row, p.rows(p.top)-1)
	if p.query != "" {
		p.Search(p.query)
	}
}

// Resize lays out for a w×h text area.
func (p *Pager) Resize(w, h int) {
	w, h = max(4, w), max(1, h)
	if w != p.w {
		p.lays, p.layOrder = nil, nil
		p.w = w
		p.row = min(p.row, p.rows(p.top)-1)
	}
	p.h = h
}

// ─── lines, folds and layout ───────────────────────────────────────────────

// next is the visible line after i (d.n at the end).
func (p *Pager) next(i int) int {
	if c, ok := p.folds[i]; ok {
		return c + 1
	}
	return i + 1
}

// prev is the visible line before i (-1 at the start).
func (p *Pager) prev(i int) int {
	j := i - 1
	if j < 0 {
		return -1
	}
	k := sort.SearchInts(p.outer, j) - 1 // the last fold opened before j
	if k >= 0 && j <= p.folds[p.outer[k]] {
		return p.outer[k]
	}
	return j
}

func (p *Pager) last() int { return p.prev(p.d.n) }

// foldTail is what a folded line shows after its opener: "…}," and how
// many members are hidden.
func (p *Pager) foldTail(i int) string {
	c, ok := p.folds[i]
	if !ok {
		return ""
	}
	s, k := p.d.at(c)
	b, _, _ := s.jsonLine(k)
	closeText := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
			return -1
		}
		return r
	}, string(b))
	n, ok := p.counts[i]
	if !ok {
		n = p.d.children(i, c) // a walk over the container: once per fold
		if p.counts == nil {
			p.counts = map[int]int{}
		}
		p.counts[i] = n
	}
	unit := " items"
	if strings.HasPrefix(closeText, "}") {
		unit = " keys"
	}
	if n == 1 {
		unit = unit[:len(unit)-1]
	}
	return "…" + closeText + "  " + itoa(n) + unit
}

func (p *Pager) iter(i int) *iter { return newIter(p.d, i, p.foldTail(i)) }

// ToggleFold folds or unfolds the container at the cursor: the one the
// cursor line opens, closes, or sits in. The cursor goes to its opener.
func (p *Pager) ToggleFold() bool {
	i := p.cur
	if _, ok := p.folds[i]; ok {
		delete(p.folds, i)
		p.refold()
		return true
	}
	fl := p.d.flags(i)
	if fl&flOpen == 0 {
		i = p.d.opener(i)
		if i < 0 {
			return false
		}
	}
	c := p.d.closer(i)
	if c < 0 {
		return false
	}
	p.folds[i] = c
	p.refold()
	p.cur = i
	p.show(false)
	return true
}

// FoldAll folds every container below the top level: the outline.
func (p *Pager) FoldAll() {
	p.folds = map[int]int{}
	for i := 0; i < p.d.n; i++ {
		if p.d.flags(i)&flOpen != 0 && p.d.depth(i) >= 1 {
			if c := p.d.closer(i); c > i {
				p.folds[i] = c
			}
		}
	}
	p.refold()
	if k := sort.SearchInts(p.outer, p.cur+1) - 1; k >= 0 && p.cur <= p.folds[p.outer[k]] {
		p.cur = p.outer[k]
	}
	p.top, p.row = min(p.top, p.cur), 0
	if p.prev(p.top+1) != p.top { // top was hidden
		p.top = p.prev(p.top + 1)
	}
	p.show(false)
}

// FoldKey folds every object or array under key (quoted, as in JSON).
func (p *Pager) FoldKey(key string) {
	for i := 0; i < p.d.n; i++ {
		if p.d.flags(i)&(flKey|flOpen) != flKey|flOpen {
			continue
		}
		s, k := p.d.at(i)
		b, _, _ := s.jsonLine(k)
		if rest, ok := bytes.CutPrefix(b, []byte(key)); ok && bytes.HasPrefix(bytes.TrimLeft(rest, " \t\r\n"), []byte(":")) {
			if c := p.d.closer(i); c > i {
				p.folds[i] = c
			}
		}
	}
	p.refold()
}

// UnfoldAll opens every fold.
func (p *Pager) UnfoldAll() {
	p.folds, p.outer = map[int]int{}, nil
	p.lays, p.layOrder = nil, nil
}

func (p *Pager) refold() {
	p.outer = p.outer[:0]
	keys := make([]int, 0, len(p.folds))
	for o := range p.folds {
		keys = append(keys, o)
	}
	sort.Ints(keys)
	end := -1
	for _, o := range keys {
		if o > end {
			p.outer = append(p.outer, o)
			end = p.folds[o]
		}
	}
	p.lays, p.layOrder = nil, nil // a folded line lays out differently
}

// lineLayout is a line's shape at the current width: its rows (wrap) or
// cells (no wrap), and where to resume drawing in the middle.
type lineLayout struct {
	rows, cells int
	cps         []checkpoint
}

type checkpoint struct {
	st        iterState
	row, cell int
}

type layKey struct {
	line int
	wrap bool
}

const (
	longLine   = 4096 // bytes: a line this long keeps its layout
	cpRows     = 32   // wrap: a checkpoint every cpRows rows
	cpCells    = 4096 // no wrap: a checkpoint every cpCells cells
	maxLayouts = 16
)

func (p *Pager) lineLen(i int) int {
	s, k := p.d.at(i)
	switch s.kind {
	case segJSON:
		b, _, _ := s.jsonLine(k)
		return len(b)
	case segRaw:
		return len(s.rawLine(k))
	}
	return len(s.text[k])
}

// layout measures line i; a long line's layout is kept.
func (p *Pager) layout(i int) *lineLayout {
	long := p.lineLen(i) > longLine
	key := layKey{i, p.wrap}
	if long {
		if l, ok := p.lays[key]; ok {
			return l
		}
	}
	it := p.iter(i)
	l := &lineLayout{}
	if p.wrap {
		every := 0
		if long {
			every = cpRows
		}
		l.rows = walkRows(it, p.w, -1, every, &l.cps)
	} else {
		every := 0
		if long {
			every = cpCells
		}
		l.cells = walkCells(it, every, &l.cps)
		l.rows = 1
	}
	if long {
		if p.lays == nil {
			p.lays = map[layKey]*lineLayout{}
		}
		if len(p.layOrder) >= maxLayouts {
			delete(p.lays, p.layOrder[0])
			p.layOrder = p.layOrder[1:]
		}
		p.lays[key] = l
		p.layOrder = append(p.layOrder, key)
	}
	return l
}

func (p *Pager) rows(i int) int {
	if !p.wrap || i < 0 || i >= p.d.n {
		return 1
	}
	return p.layout(i).rows
}

// walkRows lays a line out in rows of w cells (a unit that does not fit
// starts the next row). With stop >= 0 it stops at the start of row stop,
// the iterator there. every > 0 records a checkpoint each every rows.
func walkRows(it *iter, w, stop, every int, cps *[]checkpoint) int {
	r, c := 0, 0
	if every > 0 {
		*cps = append(*cps, checkpoint{st: it.iterState})
	}
	begin := func(st iterState) bool {
		r++
		if every > 0 && r%every == 0 {
			*cps = append(*cps, checkpoint{st: st, row: r})
		}
		if r == stop {
			it.iterState = st
			return true
		}
		return false
	}
	if stop == 0 {
		return 0
	}
	for {
		if c >= w {
			st := it.iterState
			n := it.plainRun(w)
			if n == 0 {
				_, uw, _, ok := it.next()
				if !ok {
					break
				}
				if uw == 0 {
					continue // joins the full row
				}
				n = uw
			}
			if begin(st) {
				return r
			}
			c = n
			continue
		}
		if n := it.plainRun(w - c); n > 0 {
			c += n
			continue
		}
		st := it.iterState
		_, uw, _, ok := it.next()
		if !ok {
			break
		}
		if c+uw > w {
			if begin(st) {
				return r
			}
			c = uw
			continue
		}
		c += uw
	}
	return r + 1
}

// walkCells measures a line in cells, recording a checkpoint every every
// cells.
func walkCells(it *iter, every int, cps *[]checkpoint) int {
	c, next := 0, every
	if every > 0 {
		*cps = append(*cps, checkpoint{st: it.iterState})
	}
	for {
		if every > 0 && c >= next {
			*cps = append(*cps, checkpoint{st: it.iterState, cell: c})
			next = c + every
		}
		limit := 1 << 30
		if every > 0 {
			limit = next - c
		}
		if n := it.plainRun(limit); n > 0 {
			c += n
			continue
		}
		_, uw, _, ok := it.next()
		if !ok {
			return c
		}
		c += uw
	}
}

// rowIter is an iterator at the start of row r of line i (wrap).
func (p *Pager) rowIter(i, r int) *iter {
	it := p.iter(i)
	if r == 0 {
		return it
	}
	l := p.layout(i)
	from := 0
	if len(l.cps) > 0 {
		k := sort.Search(len(l.cps), func(k int) bool { return l.cps[k].row > r }) - 1
		it.iterState, from = l.cps[k].st, l.cps[k].row
	}
	if r > from {
		walkRows(it, p.w, r-from, 0, nil)
	}
	return it
}

// ─── moving ────────────────────────────────────────────────────────────────

type pos struct{ line, row int }

func (a pos) before(b pos) bool { return a.line < b.line || (a.line == b.line && a.row < b.row) }

// down moves a position k rows down; it stops at the last row.
func (p *Pager) down(at pos, k int) pos {
	for ; k > 0; k-- {
		if at.row+1 < p.rows(at.line) {
			at.row++
			continue
		}
		n := p.next(at.line)
		if n >= p.d.n {
			break
		}
		at = pos{n, 0}
	}
	return at
}

func (p *Pager) up(at pos, k int) pos {
	for ; k > 0; k-- {
		if at.row > 0 {
			at.row--
			continue
		}
		pr := p.prev(at.line)
		if pr < 0 {
			break
		}
		at = pos{pr, p.rows(pr) - 1}
	}
	return at
}

// endPos is the top position that puts the last row at the bottom.
func (p *Pager) endPos() pos {
	l := p.last()
	if l < 0 {
		return pos{}
	}
	return p.up(pos{l, p.rows(l) - 1}, p.h-1)
}

func (p *Pager) clampTop() {
	if p.d.n == 0 {
		p.top, p.row = 0, 0
		return
	}
	if e := p.endPos(); e.before(pos{p.top, p.row}) {
		p.top, p.row = e.line, e.row
	}
}

// above is offset's answer for a line that starts above the top line.
const above = -1 << 30

// offset is how many rows below the top of the view line i starts:
// negative when it starts above (-row for the top line), p.h or more
// when below.
func (p *Pager) offset(i int) int {
	if i < p.top {
		return above
	}
	n := -p.row
	for l := p.top; l < p.d.n && n < p.h; l = p.next(l) {
		if l == i {
			return n
		}
		n += p.rows(l)
	}
	return p.h
}

// show brings the cursor line into view with the least scrolling; a line
// taller than the view shows its last rows when reached from below
// (fromBelow) and its first rows otherwise.
func (p *Pager) show(fromBelow bool) {
	rc := p.rows(p.cur)
	off := p.offset(p.cur)
	switch {
	case off < 0:
		p.top, p.row = p.cur, 0
		if fromBelow && rc > p.h {
			p.row = rc - p.h
		}
	case off+min(rc, p.h) > p.h:
		if rc >= p.h {
			p.top, p.row = p.cur, 0
		} else {
			at := p.up(pos{p.cur, rc - 1}, p.h-1)
			p.top, p.row = at.line, at.row
		}
	}
	p.clampTop()
}

// LineDown moves the cursor to the next line, or scrolls a row when the
// cursor's line goes on below the view.
func (p *Pager) LineDown() {
	if off := p.offset(p.cur); off > above && off < p.h && off+p.rows(p.cur) > p.h {
		p.Scroll(1)
		return
	}
	if n := p.next(p.cur); n < p.d.n {
		p.cur = n
	}
	p.show(false)
}

// LineUp moves the cursor to the line before, or scrolls a row when the
// cursor's line starts above the view.
func (p *Pager) LineUp() {
	if p.cur == p.top && p.row > 0 {
		p.Scroll(-1)
		return
	}
	if pr := p.prev(p.cur); pr >= 0 {
		p.cur = pr
	}
	p.show(true)
}

// Scroll moves the view k rows (negative: up) and keeps the cursor on a
// line that is in view.
func (p *Pager) Scroll(k int) {
	at := pos{p.top, p.row}
	if k > 0 {
		at = p.down(at, k)
	} else {
		at = p.up(at, -k)
	}
	p.top, p.row = at.line, at.row
	p.clampTop()
	switch off := p.offset(p.cur); {
	case off == above:
		p.cur = p.top
	case off >= p.h:
		// the last line that starts in view, else the top one
		c, n := p.top, -p.row
		for l := p.top; l < p.d.n && n < p.h; l = p.next(l) {
			if n >= 0 {
				c = l
			}
			n += p.rows(l)
		}
		p.cur = c
	}
}

// Home goes to the first line.
func (p *Pager) Home() { p.cur, p.top, p.row, p.x = 0, 0, 0, 0 }

// End goes to the last line.
func (p *Pager) End() {
	if l := p.last(); l >= 0 {
		p.cur = l
	}
	e := p.endPos()
	p.top, p.row = e.line, e.row
}

// HScroll moves the horizontal offset (no wrap), no further than the
// widest line in view allows.
func (p *Pager) HScroll(k int) {
	if p.wrap {
		return
	}
	widest := 0
	n := 0
	for l := p.top; l < p.d.n && n < p.h; l = p.next(l) {
		widest = max(widest, p.layout(l).cells)
		n++
	}
	limit := 0 // nothing to see sideways when every line fits
	if widest > p.w {
		limit = widest - p.w/2
	}
	p.x = clamp(p.x+k, 0, limit)
}

// SetWrap turns soft wrap on or off.
func (p *Pager) SetWrap(on bool) {
	if on == p.wrap {
		return
	}
	p.wrap, p.x, p.row = on, 0, 0
	p.show(false)
}

// ─── search ────────────────────────────────────────────────────────────────

// Search finds every case-insensitive (ASCII) occurrence of q in the doc's
// bytes, up to maxHits.
func (p *Pager) Search(q string) {
	p.query, p.hits, p.hi = q, p.hits[:0], 0
	if q == "" {
		return
	}
	nd := []byte(strings.ToLower(q))
	for k, s := range p.d.segs {
		base := p.d.base[k]
		switch s.kind {
		case segText:
			for j, l := range s.text {
				for _, o := range findFold(l, nd, maxHits-len(p.hits)) {
					p.hits = append(p.hits, hit{base + j, o})
				}
			}
		default:
			for _, o := range findFold(s.b, nd, maxHits-len(p.hits)) {
				j, start := s.lineAt(o)
				p.hits = append(p.hits, hit{base + j, o - start})
			}
		}
		if len(p.hits) >= maxHits {
			break
		}
	}
}

// lineAt is the line of a JSON or raw segment holding byte o, and where
// that line starts.
func (s *Segment) lineAt(o int) (int, int) {
	if s.kind == segJSON {
		j := sort.Search(len(s.recs), func(j int) bool { off, _, _ := unpack(s.recs[j]); return off > o }) - 1
		j = max(j, 0)
		off, _, _ := unpack(s.recs[j])
		return j, off
	}
	j := max(0, sort.Search(len(s.offs), func(j int) bool { return int(s.offs[j]) > o })-1)
	return j, int(s.offs[j])
}

// findFold returns the offsets of needle (lower case) in hay, ASCII case
// folded, at most max of them.
func findFold(hay, needle []byte, max int) []int {
	var out []int
	if len(needle) == 0 || max <= 0 {
		return nil
	}
	lo, up := needle[0], needle[0]
	if lo >= 'a' && lo <= 'z' {
		up = lo - 'a' + 'A'
	}
	// The next place of each form of the first byte, looked for again only
	// once passed: one scan of hay per form, however many false starts.
	nlo, nup := -2, -2
	if up == lo {
		nup = -1
	}
	find := func(at, i int, c byte) int {
		if at == -1 || at >= i {
			return at
		}
		if j := bytes.IndexByte(hay[i:], c); j >= 0 {
			return i + j
		}
		return -1
	}
	for i := 0; i+len(needle) <= len(hay) && len(out) < max; {
		nlo, nup = find(nlo, i, lo), find(nup, i, up)
		j := nlo
		if j < 0 || (nup >= 0 && nup < j) {
			j = nup
		}
		if j < 0 || j+len(needle) > len(hay) {
			break
		}
		if equalFold(hay[j:j+len(needle)], needle) {
			out = append(out, j)
			i = j + len(needle)
			continue
		}
		i = j + 1
	}
	return out
}

func equalFold(b, lower []byte) bool {
	for k, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[k] {
			return false
		}
	}
	return true
}

// Jump goes to a hit: step 0 the first at or after the cursor, ±1 the
// next or previous one.
func (p *Pager) Jump(step int) {
	if len(p.hits) == 0 {
		return
	}
	if step == 0 {
		p.hi = sort.Search(len(p.hits), func(k int) bool { return p.hits[k].line >= p.cur })
		if p.hi == len(p.hits) {
			p.hi = 0
		}
	} else {
		p.hi = (p.hi + step + len(p.hits)) % len(p.hits)
	}
	h := p.hits[p.hi]
	p.unfoldAround(h.line)
	p.cur = h.line
	if p.wrap {
		at := p.up(pos{h.line, p.rowOfPos(h.line, h.pos)}, min(2, p.h/3))
		p.top, p.row = at.line, at.row
		p.clampTop()
		return
	}
	c := p.cellOfPos(h.line, h.pos)
	if c < p.x || c >= p.x+p.w-len(p.query) {
		p.x = max(0, c-p.w/3)
	}
	p.show(false)
}

// unfoldAround opens the folds that hide line i.
func (p *Pager) unfoldAround(i int) {
	changed := false
	for o, c := range p.folds {
		if o < i && i <= c {
			delete(p.folds, o)
			changed = true
		}
	}
	if changed {
		p.refold()
	}
}

// rowOfPos is the row of line i that draws byte pos of its source.
func (p *Pager) rowOfPos(i, at int) int {
	l := p.layout(i)
	it, r := p.iter(i), 0
	if len(l.cps) > 0 {
		k := sort.Search(len(l.cps), func(k int) bool { return l.cps[k].st.pos > at }) - 1
		if k >= 0 {
			it.iterState, r = l.cps[k].st, l.cps[k].row
		}
	}
	for {
		walkRows(it, p.w, 1, 0, nil)
		if it.pos > at || r+1 >= l.rows {
			return r
		}
		r++
	}
}

// cellOfPos is the cell at which byte pos of line i's source is drawn.
func (p *Pager) cellOfPos(i, at int) int {
	it := p.iter(i)
	c := 0
	if p.lineLen(i) > longLine { // from the last checkpoint before it
		l := p.layout(i)
		if k := sort.Search(len(l.cps), func(k int) bool { return l.cps[k].st.pos > at }) - 1; k >= 0 {
			it.iterState, c = l.cps[k].st, l.cps[k].cell
		}
	}
	for it.pos <= at {
		if _, w, _, ok := it.next(); ok {
			c += w
			continue
		}
		break
	}
	return max(0, c-1)
}

// ─── drawing ───────────────────────────────────────────────────────────────

// Render draws the visible rows: a one-cell gutter that marks the cursor
// line, then the text.
func (p *Pager) Render(th themes.Theme) []string {
	out := make([]string, 0, p.h)
	var buf []byte
	var cls []uint8
	q := []byte(strings.ToLower(p.query))
	l, r := p.top, p.row
	for len(out) < p.h && l < p.d.n && l >= 0 {
		buf, cls = p.drawRow(l, r, buf[:0], cls[:0])
		mark := " "
		if l == p.cur {
			mark = th.Accent.Render("▌")
		}
		out = append(out, mark+styleRow(th, buf, cls, q))
		if r+1 < p.rows(l) {
			r++
		} else {
			l, r = p.next(l), 0
		}
	}
	return out
}

// drawRow appends the cells of row r of line i (wrap), or of the window
// [x, x+w) (no wrap), with a class per byte.
func (p *Pager) drawRow(i, r int, buf []byte, cls []uint8) ([]byte, []uint8) {
	put := func(u []byte, c uint8) {
		buf = append(buf, u...)
		for range u {
			cls = append(cls, c)
		}
	}
	if p.wrap {
		it := p.rowIter(i, r)
		c := 0
		for {
			st := it.iterState
			u, w, k, ok := it.next()
			if !ok {
				return buf, cls
			}
			if c+w > p.w {
				it.iterState = st
				return buf, cls
			}
			put(u, k)
			c += w
		}
	}
	it := p.iter(i)
	c := 0
	if p.x > 0 && p.lineLen(i) > longLine {
		l := p.layout(i)
		if k := sort.Search(len(l.cps), func(k int) bool { return l.cps[k].cell > p.x }) - 1; k >= 0 {
			it.iterState, c = l.cps[k].st, l.cps[k].cell
		}
	}
	for c < p.x {
		if n := it.plainRun(p.x - c); n > 0 {
			c += n
			continue
		}
		_, w, k, ok := it.next()
		if !ok {
			return buf, cls
		}
		if c+w > p.x { // a wide character cut by the left edge
			for j := p.x; j < c+w; j++ {
				put(spaceBytes, k)
			}
		}
		c += w
	}
	for {
		u, w, k, ok := it.next()
		if !ok {
			return buf, cls
		}
		if c+w > p.x+p.w {
			for j := c; j < p.x+p.w; j++ {
				put(spaceBytes, k)
			}
			return buf, cls
		}
		put(u, k)
		c += w
	}
}

const clMatch = 255

// styleRow colours a row by class, search hits over everything.
func styleRow(th themes.Theme, buf []byte, cls []uint8, q []byte) string {
	if len(q) > 0 {
		for _, o := range findFold(buf, q, len(buf)) {
			for j := o; j < o+len(q); j++ {
				cls[j] = clMatch
			}
		}
	}
	var b strings.Builder
	for i := 0; i < len(buf); {
		j := i + 1
		for j < len(buf) && cls[j] == cls[i] {
			j++
		}
		if st, plain := classStyle(th, cls[i]); plain {
			b.Write(buf[i:j])
		} else {
			b.WriteString(st.Render(string(buf[i:j])))
		}
		i = j
	}
	return b.String()
}

// classStyle is a class's style; plain: draw the text as it is.
func classStyle(th themes.Theme, c uint8) (st lipgloss.Style, plain bool) {
	switch c {
	case clMatch:
		return th.Match, false
	case clFaint:
		return th.Faint, false
	case clError:
		return th.Error, false
	}
	if th.NoColor {
		return st, true
	}
	switch c {
	case clKey:
		return th.JSONKey, false
	case clString:
		return th.JSONString, false
	case clNumber:
		return th.JSONNumber, false
	case clLiteral:
		return th.JSONLiteral, false
	case clPunct:
		return th.JSONPunct, false
	}
	return st, true
}

// Where says where the view is: "line 3 of 16", and the row inside a line
// taller than the view.
func (p *Pager) Where() string {
	s := "line " + itoa(min(p.cur+1, p.d.n)) + " of " + itoa(p.d.n)
	if p.wrap {
		if n := p.rows(p.top); n > p.h {
			s += " · row " + itoa(p.row+1) + " of " + itoa(n)
		}
	} else if p.x > 0 {
		s += " · col " + itoa(p.x+1)
	}
	if len(p.folds) > 0 {
		s += " · " + itoa(len(p.folds)) + " folded"
	}
	return s
}

// JSONRows draws b as the detail view does (indented, coloured, wrapped at
// w cells), whole, each row after indent: for views that show a small
// document in full.
func JSONRows(th themes.Theme, b []byte, w int, indent string) []string {
	d := &Doc{}
	d.AddJSON(b)
	p := New(d)
	p.cur = -1 // no cursor mark
	p.Resize(w, 1)
	rows := 0
	for i := 0; i < d.n; i++ {
		rows += p.rows(i)
	}
	p.Resize(w, rows)
	out := p.Render(th)
	for i := range out {
		out[i] = indent + out[i]
	}
	return out
}
