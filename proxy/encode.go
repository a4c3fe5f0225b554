package proxy

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"time"

	"mcpscope/internal/jsonscan"
	"mcpscope/journal"
	"mcpscope/transport"
)

// runEncoder writes the journal records of the lines of runs: byte for byte
// what journal.AppendRecord writes (TestRunEncoderIsAppendRecord), at a
// fraction of its cost per line. What the lines of a run share (time, dir,
// kind, meta) is encoded once, by journal.AppendRecord itself, and cut out
// of its output; a line of ASCII is escaped here, by the journal's rules
// for ASCII; any other line (beyond ASCII the journal escapes by termsafe's
// rules, and a line that is not UTF-8 is base64) is encoded by
// journal.AppendRecord whole.
type runEncoder struct {
	t    time.Time
	dir  transport.Dir
	mids [transport.Event + 1][]byte // by kind, for t and dir: from after the seq to the raw string
	meta metaCache
	seq  journal.SeqDigits
	memo lineMemo
	head recordHead
}

// recordHead is what a record holds between its seq and its raw string's
// opening quote, for the last kind, pid and via met (and the encoder's
// time and dir): mid, meta and rawOpen in one, so that a line's record is
// three appends and its string.
type recordHead struct {
	ok     bool // b is for these
	kind   transport.Kind
	pid    int
	via    string
	b      []byte // nil: the record has not that shape (encode it whole)
	midLen int
}

// appendLine appends the record of line (a line of run, its terminator
// left out, of via), numbered seq.
func (e *runEncoder) appendLine(buf []byte, seq uint64, run *lineRun, line []byte, via string) []byte {
	if run.t != e.t || run.dir != e.dir {
		e.t, e.dir, e.mids = run.t, run.dir, [len(e.mids)][]byte{}
		e.head.ok = false
	}
	// The kind comes before the raw string, which says it: the record is
	// written as a message's, and its kind mended if it is not one.
	kind := run.kind
	if kind == 0 {
		kind = transport.Message
	}
	if h := &e.head; !h.ok || h.kind != kind || h.pid != run.pid || h.via != via {
		*h = recordHead{ok: true, kind: kind, pid: run.pid, via: via, b: h.b[:0]}
		mid, meta := e.mid(kind), e.meta.of(run.pid, via)
		if len(mid) > 0 && meta != nil {
			h.b = append(append(append(h.b, mid...), meta...), rawOpen...)
			h.midLen = len(mid)
		} else {
			h.b = nil
		}
	}
	if h := &e.head; h.b != nil {
		mark := len(buf)
		buf = append(buf, seqOpen...)
		buf = e.seq.Append(buf, seq)
		at := len(buf)
		buf = append(buf, h.b...)
		out, valid, ascii := e.memo.appendLineJSON(buf, line, run.kind == 0)
		if ascii {
			if run.kind != 0 || valid {
				return append(out, recordEnd...)
			}
			if g := e.mid(transport.Garbage); len(g) == h.midLen {
				copy(out[at:], g)
				return append(out, recordEnd...)
			}
		}
		buf = buf[:mark]
	}
	f := transport.Frame{Time: run.t, Dir: run.dir, Kind: run.kind, Data: line, Meta: transport.Meta{PID: run.pid, Via: via}}
	if f.Kind == 0 {
		f.Kind = transport.Garbage
		if validJSON(f.Data) {
			f.Kind = transport.Message
		}
	}
	return journal.AppendRecord(buf, seq, f)
}

// mid is cutMid for the encoder's time and dir, cached.
func (e *runEncoder) mid(kind transport.Kind) []byte {
	if e.mids[kind] == nil {
		e.mids[kind] = cutMid(e.t, e.dir, kind)
	}
	return e.mids[kind]
}

const (
	seqOpen   = `{"seq":`
	rawOpen   = `,"raw":`
	recordEnd = "}\n"
)

// cutMid is what journal.AppendRecord writes between a record's seq and
// its meta (or its raw string, when it has no meta) for a frame of this
// time, dir and kind; empty when its output does not have that shape
// (then every line is encoded by it whole).
func cutMid(t time.Time, dir transport.Dir, kind transport.Kind) []byte {
	const seq, tail = "1", rawOpen + `"x"` + recordEnd
	b := journal.AppendRecord(nil, 1, transport.Frame{Time: t, Dir: dir, Kind: kind, Data: []byte("x")})
	head := seqOpen + seq
	if len(b) < len(head)+len(tail) || string(b[:len(head)]) != head || string(b[len(b)-len(tail):]) != tail {
		return []byte{}
	}
	return b[len(head) : len(b)-len(tail)]
}

// metaCache holds the meta field {pid, via} as journal.AppendRecord writes
// it between a record's kind and its raw string.
type metaCache struct {
	pid   int
	via   string
	field []byte
	full  bool
}

// of returns the meta field for {pid, via}, nil if it cannot be cut
// out (then the caller encodes the record whole).
func (c *metaCache) of(pid int, via string) []byte {
	if c.full && c.pid == pid && c.via == via {
		return c.field
	}
	f := transport.Frame{Dir: transport.Local, Kind: transport.Event}
	bare := journal.AppendRecord(nil, 1, f)
	f.Meta = transport.Meta{PID: pid, Via: via}
	full := journal.AppendRecord(nil, 1, f)
	c.pid, c.via, c.full, c.field = pid, via, true, nil
	n := len(bare) - len(recordEnd)
	if n >= 0 && len(full) >= len(bare) && string(full[:n]) == string(bare[:n]) && string(full[len(full)-len(recordEnd):]) == recordEnd {
		c.field = full[n : len(full)-len(recordEnd)]
	}
	return c.field
}

// Escapes of ASCII bytes in the journal's strings: 0 as it is, 'u' as
// \u00XX, any other as a backslash and that byte; none beyond ASCII (and
// none for DEL), which only session's encoder escapes.
var asciiEscape = func() (t [256]byte) {
	for c := range 0x20 {
		t[c] = 'u'
	}
	t['\n'], t['\r'], t['\t'] = 'n', 'r', 't'
	t['"'], t['\\'] = '"', '\\'
	for c := 0x7f; c < 256; c++ {
		t[c] = 1
	}
	return t
}()

// lineMemo is what appendLineJSON remembers of the last line it checked,
// so that the next one, when it begins the same way (the lines of a flood
// differ in a field or two, most often near their end), resumes from there
// rather than from its first byte: the line, its escaped string, and the
// checker's state at the start of each member name (a checkpoint). Up to
// a checkpoint the two lines are the same bytes, so the checker's state
// and its output there are the same too.
type lineMemo struct {
	line []byte       // the last line checked (empty: nothing to resume)
	out  []byte       // its journal string so far: dst[:j] at its end
	cps  []checkpoint // in the order met, i growing
}

// checkpoint is the checker's state at a member name's opening quote,
// line[i], whose escape starts at dst[j]: the objects (1) and arrays (0)
// it is in, innermost in bit 0. Getting there looked at line[i] itself
// (a '{' followed by '}' is no member), so a line resumes from it only
// when it has that quote too.
type checkpoint struct {
	i, j  int
	depth int
	bits  uint64
}

const (
	memoLineMax     = 16 << 10 // longer lines are not remembered
	memoCheckpoints = 64       // per line, the first ones
)

// appendLineJSON appends line as a journal string, quotes included, escaped
// as journal.AppendRecord escapes it, and reports whether line is one JSON
// value (as json.Valid and validJSON say) when check is set. In one pass,
// written into room reserved up front: inside strings (and in what is not
// JSON) the line's bytes are copied eight at a time up to the next one to
// look at; between them, the JSON's structure is checked byte by byte.
// ascii is false (and buf is to be cut back) when line holds a byte beyond
// printable ASCII (DEL or over 0x7f).
func (mm *lineMemo) appendLineJSON(buf, line []byte, check bool) (out []byte, valid, ascii bool) {
	n := len(buf)
	buf, dst := reserve(buf, line)
	dst[0] = '"'
	// line[:i] is in dst[:j], escaped; where the line stops being JSON,
	// appendEscaped escapes what is left (a line that ends as JSON has
	// nothing left, and makes no call).
	var (
		i, j = 0, 1
		// line[:same] is mm.line[:same] and dst[:sameOut] mm.out[:sameOut]
		same, sameOut int
	)
	if check {
		// Resume from the last checkpoint of the previous line that this
		// one reaches with the same bytes: most often its last one (one
		// vector compare), else the last one before where they part.
		k := len(mm.cps) - 1
		if k >= 0 {
			if at := mm.cps[k].i + 1; at > len(line) || at > len(mm.line) || !bytes.Equal(line[:at], mm.line[:at]) {
				p := jsonscan.CommonPrefix(line, mm.line)
				for k--; k >= 0 && mm.cps[k].i >= p; k-- {
				}
			}
			if k >= 0 {
				same, sameOut = mm.cps[k].i, mm.cps[k].j
			}
		}
		i, j, valid = mm.checkJSON(line, dst, k)
	}
	if i < len(line) {
		if buf, dst, j, ascii = appendEscaped(buf, dst, line, n, i, j); !ascii {
			if check {
				mm.forget()
			}
			return buf[:n], false, false
		}
	}
	if check {
		mm.remember(line, dst, same, sameOut, j)
	}
	dst[j] = '"'
	return buf[:n+j+1], valid, true
}

// checkJSON is appendLineJSON's checker: from line's start, or from the
// memo's checkpoint k (none when k < 0), it escapes line into dst[1:] as
// far as it is JSON, checking its structure byte by byte and copying its
// strings eight bytes at a time, and returns where it stopped (line[:i] is
// in dst[:j]) and whether line is one JSON value. Each return is where the
// line stops being JSON, or ends.
func (mm *lineMemo) checkJSON(line, dst []byte, k int) (i, j int, valid bool) {
	const maxDepth = 10000 // encoding/json's maxNestingDepth
	var (
		key   bool                  // the string is a member's name
		stack = make([]bool, 0, 64) // true: in an object; false: in an array
		nest  uint64                // stack's last 64, innermost in bit 0
		deep  bool                  // the stack was over 64 deep
		c     byte
		m, v  uint64
		e     int
	)
	if k >= 0 { // the checkpoint's state, and the string up to it as it was
		cp := mm.cps[k]
		j = copy(dst[:cp.j], mm.out[:cp.j])
		i, nest = cp.i, cp.bits
		for d := cp.depth - 1; d >= 0; d-- {
			stack = append(stack, nest>>d&1 == 1)
		}
		mm.cps = mm.cps[:k] // key records it again
		goto key
	}
	j, mm.cps = 1, mm.cps[:0]
value:
	i, j = copySpace(line, dst, i, j)
	if i >= len(line) {
		return i, j, valid
	}
	switch c = line[i]; c {
	case '"':
		key = false
		goto str
	case '{', '[':
		if len(stack) >= maxDepth {
			return i, j, valid
		}
		stack = append(stack, c == '{')
		nest = nest<<1 | uint64(c>>5&1) // '{' is 0x7b, '[' 0x5b
		deep = deep || len(stack) > 64  // nest lost the outermost: no more checkpoints
		dst[j] = c
		i, j = copySpace(line, dst, i+1, j+1)
		if i < len(line) && line[i] == c+2 { // '}' or ']': after closes it
			goto after
		}
		if c == '{' {
			goto key
		}
		goto value
	case 't':
		e = validLiteral(line, i, "true")
	case 'f':
		e = validLiteral(line, i, "false")
	case 'n':
		e = validLiteral(line, i, "null")
	default:
		if c != '-' && (c < '0' || c > '9') {
			return i, j, valid
		}
		e = jsonscan.SkipNumber(line, i)
	}
	if e < 0 {
		return i, j, valid
	}
	j += copy(dst[j:], line[i:e]) // digits, signs, letters: as they are
	i = e
after:
	i, j = copySpace(line, dst, i, j)
	if len(stack) == 0 || i >= len(line) {
		valid = len(stack) == 0 && i == len(line)
		return i, j, valid
	}
	switch c = line[i]; {
	case c == ',':
		dst[j] = c
		i, j = i+1, j+1
		if !stack[len(stack)-1] {
			goto value
		}
		i, j = copySpace(line, dst, i, j)
		goto key
	case c == '}' && stack[len(stack)-1], c == ']' && !stack[len(stack)-1]:
		stack = stack[:len(stack)-1]
		nest >>= 1
		dst[j] = c
		i, j = i+1, j+1
		goto after
	default:
		return i, j, valid
	}
key:
	if !deep && len(mm.cps) < memoCheckpoints {
		mm.cps = append(mm.cps, checkpoint{i: i, j: j, depth: len(stack), bits: nest})
	}
	if i >= len(line) || line[i] != '"' {
		return i, j, valid
	}
	key = true
str:
	// The string at line[i] == '"', eight bytes at a time up to the next
	// byte to look at. dst has room for each word: j <= 2i+1.
	dst[j], dst[j+1] = '\\', '"'
	i, j = i+1, j+2
	for {
		v = jsonscan.Word(line, i)
		binary.LittleEndian.PutUint64(dst[j:], v)
		if m = jsonscan.SpecialDELMask(v); m == 0 {
			i, j = i+8, j+8
			continue
		}
		// The flagged byte, read from v: the flag is its high bit, 8e+7.
		e = bits.TrailingZeros64(m)
		c = byte(v >> (e - 7))
		e >>= 3
		i, j = i+e, j+e
		if c == '"' {
			dst[j], dst[j+1] = '\\', '"'
			i, j = i+1, j+2
			break
		}
		if c != '\\' || i+1 >= len(line) {
			return i, j, valid // a control (the line's end reads as one), a byte beyond ASCII, a lone backslash
		}
		switch c = line[i+1]; c {
		case '"', '\\':
			dst[j], dst[j+1], dst[j+2], dst[j+3] = '\\', '\\', '\\', c
			i, j = i+2, j+4
		case '/', 'b', 'f', 'n', 'r', 't':
			dst[j], dst[j+1], dst[j+2] = '\\', '\\', c
			i, j = i+2, j+3
		case 'u':
			if i+5 >= len(line) || !isHex4(line[i+2:i+6]) {
				return i, j, valid
			}
			dst[j], dst[j+1] = '\\', '\\'
			copy(dst[j+2:j+7], line[i+1:i+6])
			i, j = i+6, j+7
		default:
			return i, j, valid
		}
	}
	if !key {
		goto after
	}
	i, j = copySpace(line, dst, i, j)
	if i >= len(line) || line[i] != ':' {
		return i, j, valid
	}
	dst[j] = ':'
	i, j = i+1, j+1
	goto value
}

// appendEscaped escapes line[i:] into dst[j:] (dst is buf[n:]), eight bytes
// at a time up to the next byte to escape, and returns buf and dst (grown
// when controls need six bytes each) and where the string ends in dst.
// ascii is false when line holds a byte beyond printable ASCII. The loop's
// head is appendLineJSON's string loop written out again: as a helper it
// does not inline, and a call per string made short lines 2-18 % slower
// (BenchmarkAppendLineJSON); this is called once a line at most.
func appendEscaped(buf, dst, line []byte, n, i, j int) (_, _ []byte, _ int, ascii bool) {
	for i < len(line) {
		v := jsonscan.Word(line, i)
		binary.LittleEndian.PutUint64(dst[j:], v)
		m := jsonscan.SpecialDELMask(v)
		if m == 0 {
			i, j = i+8, j+8
			continue
		}
		e := bits.TrailingZeros64(m)
		c := byte(v >> (e - 7))
		e >>= 3
		i, j = i+e, j+e
		if i >= len(line) {
			break
		}
		switch asciiEscape[c] {
		case 1:
			return buf, dst, j, false
		case 'u':
			if need := j + 6*(len(line)-i) + 1 + 8; need > len(dst) {
				// Six bytes for each control from here on, at most.
				buf = slices.Grow(buf[:n+j], need-j)
				dst = buf[n : n+need]
			}
			const hex = "0123456789abcdef"
			dst[j], dst[j+1], dst[j+2], dst[j+3], dst[j+4], dst[j+5] = '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf]
			i, j = i+1, j+6
		default:
			dst[j], dst[j+1] = '\\', asciiEscape[c]
			i, j = i+1, j+2
		}
	}
	return buf, dst, j, true
}

// remember keeps line and its escaped string dst[:j] for the next line to
// resume from; of both, the first same and sameOut bytes are held already.
func (mm *lineMemo) remember(line, dst []byte, same, sameOut, j int) {
	if len(line) > memoLineMax {
		mm.forget()
		return
	}
	mm.line = append(mm.line[:same], line[same:]...)
	mm.out = append(mm.out[:sameOut], dst[sameOut:j]...)
}

// reserve grows buf for line's journal string, returned as dst (from
// buf's end): room for every byte escaped in two (what JSON holds,
// whitespace and escapes included, never takes more), the quotes, and the
// eight bytes a word's store may write past the last one; appendEscaped
// makes more if a control needs its six.
func reserve(buf, line []byte) (_, dst []byte) {
	n, room := len(buf), 2*len(line)+2+8
	buf = slices.Grow(buf, room)
	return buf, buf[n : n+room]
}

// forget drops what the memo holds: the next line starts afresh.
func (mm *lineMemo) forget() { mm.line, mm.cps = mm.line[:0], mm.cps[:0] }

// isHex4 reports whether h holds four hex digits.
func isHex4(h []byte) bool {
	for _, c := range h {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// copySpace copies the JSON whitespace at line[i:] to dst[j:], escaped.
// It inlines, and where there is none it costs a compare: the checker calls
// it wherever whitespace may be.
func copySpace(line, dst []byte, i, j int) (int, int) {
	for ; i < len(line) && line[i] <= ' '; i++ {
		switch c := line[i]; c {
		case ' ':
			dst[j] = ' '
			j++
		case '\t', '\r', '\n':
			dst[j], dst[j+1] = '\\', asciiEscape[c]
			j += 2
		default:
			return i, j
		}
	}
	return i, j
}
