// Package pager is the detail view's reader: a Doc is lines of text, JSON
// and raw bytes that are never all laid out, and a Pager shows one, with a
// cursor, folds, soft wrap or sideways scrolling, and search. Every
// operation costs in proportion to the rows on screen, not to the doc.
package pager

import (
	"bytes"
	"encoding/json"
	"sort"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"mcpscope/internal/jsonscan"
	"mcpscope/internal/termsafe"
)

// A Doc is what one tab of the detail view shows: a list of lines that are
// never all laid out. JSON is indexed once (an offset, a depth and a few
// flags per pretty-printed line, 8 bytes) and each visible line is formatted
// from the frame's own bytes when it is drawn, so a 20 MiB result costs its
// bytes (shared with the store, or read back once) plus its index, never a
// second, indented copy. Bytes from a server are made inert cell by cell as
// they are drawn.
type Doc struct {
	segs []*Segment
	base []int // the first line of each segment
	n    int
}

type segKind uint8

const (
	segText segKind = iota // lines of our own text (server strings sanitised)
	segJSON                // indented JSON drawn from b
	segRaw                 // bytes split at newlines, made inert as drawn
)

// Class is how a piece of a line is styled.
type Class = uint8

// The classes a doc's own text lines take (AddText).
const (
	Plain   = clPlain
	Faint   = clFaint
	Heading = clKey // a heading: drawn as a JSON key
	Error   = clError
)

// Cell classes: how a piece of a line is styled.
const (
	clPlain uint8 = iota
	clKey
	clString
	clNumber
	clLiteral
	clPunct
	clFaint
	clError // an isError result's banner and text
)

// Segment is a run of a doc's lines of one kind.
type Segment struct {
	kind  segKind
	style uint8    // segText: the class of its lines
	text  [][]byte // segText
	b     []byte   // segJSON, segRaw
	recs  []uint64 // segJSON: off<<32 | depth<<8 | flags
	offs  []uint32 // segRaw: line starts
}

// JSON line flags.
const (
	flKey   = 1 << iota // the line starts with an object key
	flOpen              // the line ends with { or [ of a non-empty container
	flClose             // the line starts with the } or ] of one
)

func (s *Segment) lines() int {
	switch s.kind {
	case segJSON:
		return len(s.recs)
	case segRaw:
		return len(s.offs)
	}
	return len(s.text)
}

// Add adds a segment (JSONSegment, RawSegment), which may be shared with
// other docs: it is only read.
func (d *Doc) Add(s *Segment) {
	if s.lines() == 0 {
		return
	}
	d.segs = append(d.segs, s)
	d.base = append(d.base, d.n)
	d.n += s.lines()
}

// Lines is how many lines the doc has.
func (d *Doc) Lines() int { return d.n }

// AddText adds lines of text; each is made inert.
func (d *Doc) AddText(style Class, lines ...string) {
	s := &Segment{kind: segText, style: style}
	for _, l := range lines {
		s.text = append(s.text, []byte(termsafe.Line(l)))
	}
	d.Add(s)
}

// AddJSON adds b pretty-printed when it is JSON, as raw lines otherwise.
func (d *Doc) AddJSON(b []byte) {
	if len(bytes.TrimSpace(b)) > 0 && json.Valid(b) {
		d.Add(JSONSegment(b))
		return
	}
	d.AddRaw(b)
}

// AddRaw adds b as lines of inert text (a final newline ends the last line
// rather than starting an empty one).
func (d *Doc) AddRaw(b []byte) {
	d.Add(RawSegment(b))
}

// JSONSegment is b (valid JSON) pretty-printed, indexed once; the bytes
// are drawn from, never copied.
func JSONSegment(b []byte) *Segment { return &Segment{kind: segJSON, b: b, recs: indexJSON(b)} }

// RawSegment is b as lines of inert text.
func RawSegment(b []byte) *Segment { return &Segment{kind: segRaw, b: b, offs: lineStarts(b)} }

// Bytes is the bytes a JSON or raw segment draws from (nil for text): to
// tell that two docs share one copy.
func (s *Segment) Bytes() []byte { return s.b }

// Segment is the segment that holds line i.
func (d *Doc) Segment(i int) *Segment {
	s, _ := d.at(i)
	return s
}

func lineStarts(b []byte) []uint32 {
	offs := []uint32{0}
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		if i < len(b) {
			offs = append(offs, uint32(i))
		}
	}
	return offs
}

// at finds the segment of line i and the line's number inside it.
func (d *Doc) at(i int) (*Segment, int) {
	k := sort.Search(len(d.base), func(k int) bool { return d.base[k] > i }) - 1
	if k < 0 {
		return nil, 0
	}
	return d.segs[k], i - d.base[k]
}

func unpack(r uint64) (off int, depth int, flags uint8) {
	return int(r >> 32), int(r>>8) & 0xffffff, uint8(r)
}

// jsonLine is line k of a JSON segment: its bytes (up to the next line's
// first token), depth and flags.
func (s *Segment) jsonLine(k int) ([]byte, int, uint8) {
	off, depth, fl := unpack(s.recs[k])
	end := len(s.b)
	if k+1 < len(s.recs) {
		end, _, _ = unpack(s.recs[k+1])
	}
	return s.b[off:end], depth, fl
}

func (s *Segment) rawLine(k int) []byte {
	end := len(s.b)
	if k+1 < len(s.offs) {
		end = int(s.offs[k+1])
	}
	l := s.b[s.offs[k]:end]
	l = bytes.TrimSuffix(l, []byte("\n"))
	return bytes.TrimSuffix(l, []byte("\r"))
}

// flags is the JSON flags of line i (0 for other lines).
func (d *Doc) flags(i int) uint8 {
	s, k := d.at(i)
	if s == nil || s.kind != segJSON {
		return 0
	}
	return uint8(s.recs[k])
}

func (d *Doc) depth(i int) int {
	s, k := d.at(i)
	if s == nil || s.kind != segJSON {
		return -1
	}
	_, dp, _ := unpack(s.recs[k])
	return dp
}

// closer is the line that closes the container opened on line i (-1 when i
// opens none). The walk is over 8-byte records, and only on a fold.
func (d *Doc) closer(i int) int {
	s, k := d.at(i)
	if s == nil || s.kind != segJSON || uint8(s.recs[k])&flOpen == 0 {
		return -1
	}
	_, dp, _ := unpack(s.recs[k])
	for j := k + 1; j < len(s.recs); j++ {
		_, dj, fj := unpack(s.recs[j])
		if dj == dp && fj&flClose != 0 {
			return i + j - k
		}
	}
	return -1
}

// opener is the line that opens the container holding line i (-1: none).
func (d *Doc) opener(i int) int {
	s, k := d.at(i)
	if s == nil || s.kind != segJSON {
		return -1
	}
	_, dp, fl := unpack(s.recs[k])
	if fl&flClose != 0 {
		dp++ // a closer sits at its opener's depth
	}
	for j := k - 1; j >= 0; j-- {
		_, dj, fj := unpack(s.recs[j])
		if dj < dp && fj&flOpen != 0 {
			return i - (k - j)
		}
	}
	return -1
}

// children counts the members of the container opened on line i.
func (d *Doc) children(i, close int) int {
	s, k := d.at(i)
	_, dp, _ := unpack(s.recs[k])
	n := 0
	for j := k + 1; j < k+(close-i); j++ {
		if _, dj, fj := unpack(s.recs[j]); dj == dp+1 && fj&flClose == 0 {
			n++
		}
	}
	return n
}

// indexJSON lays valid JSON out the way json.Indent(…, "", "  ") would,
// without writing it: one record per output line. A container with
// members opens a line's end and its close starts a line; a comma ends a
// line; an empty container stays inline.
func indexJSON(b []byte) []uint64 {
	var recs []uint64
	var objs []bool // open containers: true for an object
	depth := 0
	need := true // the next token starts a line
	start := func(at int, fl uint8) {
		recs = append(recs, uint64(at)<<32|uint64(depth)<<8|uint64(fl))
		need = false
	}
	n := len(b)
	for i := 0; i < n; {
		c := b[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			i++
			continue
		case '}', ']':
			depth--
			if len(objs) > 0 {
				objs = objs[:len(objs)-1]
			}
			start(i, flClose)
			i++
			continue
		}
		if need {
			var fl uint8
			if c == '"' && len(objs) > 0 && objs[len(objs)-1] {
				fl = flKey
			}
			start(i, fl)
		}
		switch c {
		case '"':
			if i = jsonscan.SkipString(b, i); i < 0 {
				i = n // not JSON after all: the string runs to the end
			}
		case '{', '[':
			j := i + 1
			for j < n && (b[j] == ' ' || b[j] == '\t' || b[j] == '\n' || b[j] == '\r') {
				j++
			}
			if j < n && (b[j] == '}' || b[j] == ']') {
				i = j + 1 // {} and [] stay on the line
				continue
			}
			recs[len(recs)-1] |= flOpen
			objs = append(objs, c == '{')
			depth++
			need = true
			i++
		case ',':
			need = true
			i++
		case ':':
			i++
		default:
			for i < n && !isDelim(b[i]) {
				i++
			}
		}
	}
	return recs
}

func isDelim(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', ':', '{', '}', '[', ']', '"':
		return true
	}
	return false
}

// iterState is where a line's drawing is: enough to resume from a
// checkpoint in the middle of a huge line.
type iterState struct {
	pos     int   // next byte of the line
	ind     int   // indent cells still to draw
	pendN   int8  // cells of an expansion still to draw (a tab, a \u escape)
	pendK   uint8 // 1: spaces, 2: \uXXXX of pendR
	pendR   rune
	inStr   bool
	esc     bool
	keyDone bool // the line's key has been drawn
	inNum   bool
	strCls  uint8
	tailPos int // next byte of the tail
}

// iter draws one line cell by cell. Every unit is 0, 1 or 2 cells wide.
type iter struct {
	b    []byte
	json bool
	key  bool   // the line starts with a key
	tail string // drawn after the line (a fold's summary), our own text
	iterState
	scratch [4]byte
}

func newIter(d *Doc, i int, folded string) *iter {
	s, k := d.at(i)
	it := &iter{tail: folded}
	switch s.kind {
	case segJSON:
		b, depth, fl := s.jsonLine(k)
		it.b, it.json, it.key, it.ind = b, true, fl&flKey != 0, 2*depth
	case segRaw:
		it.b = s.rawLine(k)
	default:
		it.b = s.text[k]
	}
	return it
}

var hexDigits = "0123456789abcdef"

// next returns the next unit: its bytes (valid until the next call), its
// width and its class; ok is false at the end of the line.
func (it *iter) next() (u []byte, w int, cls uint8, ok bool) {
	if it.ind > 0 {
		it.ind--
		return spaceBytes, 1, clPlain, true
	}
	if it.pendN > 0 {
		k := it.pendN
		it.pendN--
		cls := clPlain
		if it.inStr {
			cls = it.strCls
		}
		if it.pendK == 1 {
			return spaceBytes, 1, cls, true
		}
		// the rest of \uXXXX: k counts down from 5.
		c := byte('u')
		if k < 5 {
			c = hexDigits[(it.pendR>>(4*(uint(k)-1)))&0xf]
		}
		it.scratch[0] = c
		return it.scratch[:1], 1, cls, true
	}
	for it.pos < len(it.b) {
		c := it.b[it.pos]
		if it.json && !it.inStr {
			switch c {
			case ' ', '\t', '\n', '\r':
				it.pos++
				continue
			case '"':
				it.inStr = true
				it.strCls = clString
				if it.key && !it.keyDone {
					it.strCls = clKey
				}
				it.pos++
				return it.b[it.pos-1 : it.pos], 1, it.strCls, true
			case ':':
				it.inNum = false
				it.pos++
				it.pendN, it.pendK = 1, 1 // ": "
				return it.b[it.pos-1 : it.pos], 1, clPunct, true
			case '{', '}', '[', ']', ',':
				it.inNum = false
				it.pos++
				return it.b[it.pos-1 : it.pos], 1, clPunct, true
			}
			if c == '-' || (c >= '0' && c <= '9') {
				it.inNum = true
			} else if !it.inNum || !(c == '.' || c == 'e' || c == 'E' || c == '+') {
				it.inNum = false
			}
			cls := clLiteral
			if it.inNum {
				cls = clNumber
			}
			if c < 0x80 {
				it.pos++
				return it.b[it.pos-1 : it.pos], 1, cls, true
			}
		}
		if it.json && it.inStr {
			switch {
			case it.esc:
				it.esc = false
			case c == '\\':
				it.esc = true
			case c == '"':
				it.inStr = false
				if it.strCls == clKey {
					it.keyDone = true
				}
				it.pos++
				return it.b[it.pos-1 : it.pos], 1, it.strCls, true
			}
		}
		cls := clPlain
		if it.inStr {
			cls = it.strCls
		}
		if c >= 0x20 && c < 0x7f {
			it.pos++
			return it.b[it.pos-1 : it.pos], 1, cls, true
		}
		r, n := utf8.DecodeRune(it.b[it.pos:])
		start := it.pos
		it.pos += n
		switch {
		case r == utf8.RuneError && n == 1:
			if it.json {
				return it.expand(0xfffd, cls)
			}
			return replacement, 1, cls, true
		case r == '\t' && !it.json:
			it.pendN, it.pendK = 3, 1
			return spaceBytes, 1, cls, true
		case r < 0x20 && !it.json:
			return it.encode(0x2400 + r), 1, cls, true // ␛ for ESC: a server's attempt stays visible
		case r == 0x7f && !it.json:
			return it.encode('␡'), 1, cls, true
		case termsafe.Hidden(r) || r < 0x20:
			if it.json {
				return it.expand(r, cls) // keep the meaning: \u202e
			}
			return replacement, 1, cls, true
		}
		u := it.b[start:it.pos]
		return u, runeCells(u), cls, true
	}
	if it.tailPos < len(it.tail) {
		c := it.tail[it.tailPos]
		if c < 0x80 {
			it.tailPos++
			it.scratch[0] = c
			return it.scratch[:1], 1, clFaint, true
		}
		r, n := utf8.DecodeRuneInString(it.tail[it.tailPos:])
		it.tailPos += n
		u := it.encode(r)
		return u, runeCells(u), clFaint, true
	}
	return nil, 0, 0, false
}

// plainRun skips up to max cells of plain ASCII that draw as themselves,
// one cell each: the fast path that lets a 20 MiB line be laid out quickly.
func (it *iter) plainRun(max int) int {
	if it.ind > 0 || it.pendN > 0 || (it.json && (!it.inStr || it.esc)) {
		return 0
	}
	end := min(len(it.b), it.pos+max)
	i := it.pos
	for i < end {
		c := it.b[i]
		if c < 0x20 || c >= 0x7f || (it.json && (c == '"' || c == '\\')) {
			break
		}
		i++
	}
	n := i - it.pos
	it.pos = i
	return n
}

func (it *iter) expand(r rune, cls uint8) ([]byte, int, uint8, bool) {
	it.pendN, it.pendK, it.pendR = 5, 2, r
	it.scratch[0] = '\\'
	return it.scratch[:1], 1, cls, true
}

func (it *iter) encode(r rune) []byte {
	n := utf8.EncodeRune(it.scratch[:], r)
	return it.scratch[:n]
}

var (
	spaceBytes  = []byte(" ")
	replacement = []byte("\uFFFD")
)

// runeCells is the width of one encoded rune, the way the renderer counts.
func runeCells(u []byte) int {
	if len(u) == 1 {
		return 1
	}
	return min(2, ansi.StringWidth(string(u)))
}

// Text is the doc's lines as text, for copying a tab without bytes of
// its own.
func (dc *Doc) Text() []string {
	out := make([]string, 0, dc.n)
	for i := 0; i < dc.n; i++ {
		it := newIter(dc, i, "")
		var b []byte
		for {
			u, _, _, ok := it.next()
			if !ok {
				break
			}
			b = append(b, u...)
		}
		out = append(out, string(b))
	}
	return out
}
