package proxy

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"strconv"
	"time"

	"mcpscope/internal/jsonscan"
	"mcpscope/session"
	"mcpscope/transport"
)

// runEncoder writes the journal records of the lines of runs: byte for byte
// what session.AppendRecord writes (TestRunEncoderIsAppendRecord), at a
// fraction of its cost per line. What the lines of a run share (time, dir,
// kind, meta) is encoded once, by session.AppendRecord itself, and cut out
// of its output; a line of ASCII is escaped here, by the journal's rules
// for ASCII; any other line (beyond ASCII the journal escapes by termsafe's
// rules, and a line that is not UTF-8 is base64) is encoded by
// session.AppendRecord whole.
type runEncoder struct {
	t    time.Time
	dir  transport.Dir
	mids [transport.Event + 1][]byte // by kind, for t and dir: from after the seq to the raw string
	meta metaCache
	seq  uint64 // the last seq written, in decimal in digits
	text []byte
}

// appendSeq appends seq in decimal; the next seq after the last one is
// the last one's digits counted up, which is all a run's lines need.
func (e *runEncoder) appendSeq(buf []byte, seq uint64) []byte {
	if seq != e.seq+1 || len(e.text) == 0 {
		e.text = strconv.AppendUint(e.text[:0], seq, 10)
	} else {
		i := len(e.text) - 1
		for ; i >= 0 && e.text[i] == '9'; i-- {
			e.text[i] = '0'
		}
		if i < 0 {
			e.text = append(e.text, 0)
			copy(e.text[1:], e.text)
			e.text[0] = '1'
		} else {
			e.text[i]++
		}
	}
	e.seq = seq
	return append(buf, e.text...)
}

// appendLine appends the record of line (a line of run, its terminator
// left out, of via), numbered seq.
func (e *runEncoder) appendLine(buf []byte, seq uint64, run *lineRun, line []byte, via string) []byte {
	f := transport.Frame{Time: run.t, Dir: run.dir, Kind: run.kind, Data: line}
	if f.Time != e.t || f.Dir != e.dir {
		e.t, e.dir, e.mids = f.Time, f.Dir, [len(e.mids)][]byte{}
	}
	// The kind comes before the raw string, which says it: the record is
	// written as a message's, and its kind mended if it is not one.
	kind := f.Kind
	if kind == 0 {
		kind = transport.Message
	}
	meta := e.meta.of(run.pid, via)
	if mid := e.mid(kind); len(mid) > 0 && meta != nil {
		mark := len(buf)
		buf = append(buf, seqOpen...)
		buf = e.appendSeq(buf, seq)
		at := len(buf)
		buf = append(buf, mid...)
		buf = append(buf, meta...)
		buf = append(buf, rawOpen...)
		out, valid, ascii := appendLineJSON(buf, f.Data, f.Kind == 0)
		if ascii {
			if f.Kind != 0 || valid {
				return append(out, recordEnd...)
			}
			if g := e.mid(transport.Garbage); len(g) == len(mid) {
				copy(out[at:], g)
				return append(out, recordEnd...)
			}
		}
		buf = buf[:mark]
	}
	if f.Kind == 0 {
		f.Kind = transport.Garbage
		if validJSON(f.Data) {
			f.Kind = transport.Message
		}
	}
	f.Meta = transport.Meta{PID: run.pid, Via: via}
	return session.AppendRecord(buf, seq, f)
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

// cutMid is what session.AppendRecord writes between a record's seq and
// its meta (or its raw string, when it has no meta) for a frame of this
// time, dir and kind; empty when its output does not have that shape
// (then every line is encoded by it whole).
func cutMid(t time.Time, dir transport.Dir, kind transport.Kind) []byte {
	const seq, tail = "1", rawOpen + `"x"` + recordEnd
	b := session.AppendRecord(nil, 1, transport.Frame{Time: t, Dir: dir, Kind: kind, Data: []byte("x")})
	head := seqOpen + seq
	if len(b) < len(head)+len(tail) || string(b[:len(head)]) != head || string(b[len(b)-len(tail):]) != tail {
		return []byte{}
	}
	return b[len(head) : len(b)-len(tail)]
}

// metaCache holds the meta field {pid, via} as session.AppendRecord writes
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
	bare := session.AppendRecord(nil, 1, f)
	f.Meta = transport.Meta{PID: pid, Via: via}
	full := session.AppendRecord(nil, 1, f)
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

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// zeroBytes flags (high bit) the zero bytes of v; above the lowest one
// flagged it may flag others wrongly.
func zeroBytes(v uint64) uint64 { return (v - ones) & ^v & highs }

// specials flags the bytes of v a journal string escapes or that end an
// ASCII run: controls, '"', '\\', DEL and beyond. Its lowest flag is
// exact.
func specials(v uint64) uint64 {
	return zeroBytes(v^(ones*'"')) | zeroBytes(v^(ones*'\\')) | zeroBytes(v^(ones*0x7f)) | (v-ones*0x20)&^v&highs | v&highs
}

// appendLineJSON appends line as a journal string, quotes included, escaped
// as session.AppendRecord escapes it, and reports whether line is one JSON
// value (as json.Valid and validJSON say) when check is set. In one pass:
// the line's bytes are copied eight at a time inside JSON strings. ascii is
// false (and buf is to be cut back) when line holds a byte beyond
// printable ASCII (DEL or over 0x7f).
func appendLineJSON(buf, line []byte, check bool) (out []byte, valid, ascii bool) {
	const maxDepth = 10000             // encoding/json's maxNestingDepth
	n, room := len(buf), 2*len(line)+2 // room for every byte escaped in two
	buf = slices.Grow(buf, room)
	dst := buf[n : n+room]
	dst[0] = '"'
	var (
		i, j  = 0, 1
		ok    bool
		small [64]bool // true: in an object; false: in an array
		stack = small[:0]
	)
	// Below, i and j always agree: line[:i] is in dst[:j], escaped; where
	// the line stops being JSON, rest escapes what is left.
	if !check {
		goto rest
	}
	if i, j, ok = copySpace(line, dst, i, j); !ok {
		goto rest
	}
value:
	if i >= len(line) {
		goto rest
	}
	switch line[i] {
	case '{', '[':
		if len(stack) >= maxDepth {
			goto rest
		}
		obj := line[i] == '{'
		stack = append(stack, obj)
		dst[j] = line[i]
		i, j = i+1, j+1
		if i, j, ok = copySpace(line, dst, i, j); !ok {
			goto rest
		}
		if i < len(line) && (obj && line[i] == '}' || !obj && line[i] == ']') {
			stack = stack[:len(stack)-1]
			dst[j] = line[i]
			i, j = i+1, j+1
			goto after
		}
		if obj {
			goto key
		}
		goto value
	case '"':
		if i, j, ok = copyString(line, dst, i, j); !ok {
			goto rest
		}
	default:
		var e int
		switch c := line[i]; {
		case c == '-' || c >= '0' && c <= '9':
			e = jsonscan.SkipNumber(line, i)
		case c == 't':
			e = validLiteral(line, i, "true")
		case c == 'f':
			e = validLiteral(line, i, "false")
		case c == 'n':
			e = validLiteral(line, i, "null")
		default:
			goto rest
		}
		if e < 0 {
			goto rest
		}
		j += copy(dst[j:], line[i:e]) // digits, signs, letters: as they are
		i = e
	}
after:
	if i, j, ok = copySpace(line, dst, i, j); !ok {
		goto rest
	}
	if len(stack) == 0 {
		valid = i == len(line)
		goto rest
	}
	if i >= len(line) {
		goto rest
	}
	switch c := line[i]; {
	case c == ',':
		dst[j] = c
		i, j = i+1, j+1
		if i, j, ok = copySpace(line, dst, i, j); !ok {
			goto rest
		}
		if stack[len(stack)-1] {
			goto key
		}
		goto value
	case c == '}' && stack[len(stack)-1], c == ']' && !stack[len(stack)-1]:
		stack = stack[:len(stack)-1]
		dst[j] = c
		i, j = i+1, j+1
		goto after
	default:
		goto rest
	}
key:
	if i >= len(line) || line[i] != '"' {
		goto rest
	}
	if i, j, ok = copyString(line, dst, i, j); !ok {
		goto rest
	}
	if i, j, ok = copySpace(line, dst, i, j); !ok || i >= len(line) || line[i] != ':' {
		goto rest
	}
	dst[j] = ':'
	i, j = i+1, j+1
	if i, j, ok = copySpace(line, dst, i, j); !ok {
		goto rest
	}
	goto value

rest:
	// The rest of the line (all of it when it is no JSON): escaped only.
	buf = buf[:n+j]
	for ; i < len(line); i++ {
		c := line[i]
		switch x := asciiEscape[c]; x {
		case 0:
			buf = append(buf, c)
		case 1:
			return buf[:n], false, false
		case 'u':
			const hex = "0123456789abcdef"
			buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			buf = append(buf, '\\', x)
		}
	}
	return append(buf, '"'), valid, true
}

// copySpace copies the JSON whitespace at line[i:] to dst[j:], escaped.
func copySpace(line, dst []byte, i, j int) (int, int, bool) {
	for ; i < len(line); i++ {
		switch line[i] {
		case ' ':
			dst[j] = ' '
			j++
		case '\t':
			dst[j], dst[j+1] = '\\', 't'
			j += 2
		case '\r':
			dst[j], dst[j+1] = '\\', 'r'
			j += 2
		case '\n':
			dst[j], dst[j+1] = '\\', 'n'
			j += 2
		default:
			return i, j, true
		}
	}
	return i, j, true
}

// copyString copies the JSON string starting at line[i] == '"' to dst[j:],
// escaped; false where it stops being one (or holds a control character
// or a byte beyond ASCII, which rest escapes).
func copyString(line, dst []byte, i, j int) (int, int, bool) {
	dst[j], dst[j+1] = '\\', '"'
	i, j = i+1, j+2
	for {
		// Eight bytes at a time up to the first one to look at. dst has
		// room: j <= 2i+1 and i+8 <= len(line).
		for i+8 <= len(line) {
			v := binary.LittleEndian.Uint64(line[i:])
			binary.LittleEndian.PutUint64(dst[j:], v)
			if m := specials(v); m != 0 {
				k := bits.TrailingZeros64(m) >> 3
				i, j = i+k, j+k
				break
			}
			i, j = i+8, j+8
		}
		if i >= len(line) {
			return i, j, false
		}
		switch c := line[i]; {
		case c == '"':
			dst[j], dst[j+1] = '\\', '"'
			return i + 1, j + 2, true
		case c == '\\':
			if i+1 >= len(line) {
				return i, j, false
			}
			switch e := line[i+1]; e {
			case '"', '\\':
				dst[j], dst[j+1], dst[j+2], dst[j+3] = '\\', '\\', '\\', e
				i, j = i+2, j+4
			case '/', 'b', 'f', 'n', 'r', 't':
				dst[j], dst[j+1], dst[j+2] = '\\', '\\', e
				i, j = i+2, j+3
			case 'u':
				if i+5 >= len(line) {
					return i, j, false
				}
				for _, h := range line[i+2 : i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return i, j, false
					}
				}
				dst[j], dst[j+1] = '\\', '\\'
				copy(dst[j+2:], line[i+1:i+6])
				i, j = i+6, j+7
			default:
				return i, j, false
			}
		case c < 0x20 || c >= 0x7f:
			return i, j, false
		default:
			dst[j] = c
			i, j = i+1, j+1
		}
	}
}
