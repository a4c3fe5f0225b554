package session

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"mcpscope/internal/jsonscan"
	"mcpscope/internal/termsafe"
	"mcpscope/transport"
)

// JournalFormat names the first line of every journal file.
const JournalFormat = "mcpscope-journal/1"

// Record is one journal line: a frame with its sequence number. Raw holds the
// exact bytes when they are UTF-8, B64 otherwise, so nothing is rewritten.
type Record struct {
	Seq  uint64          `json:"seq"`
	Time time.Time       `json:"t"`
	Dir  string          `json:"dir"`
	Kind string          `json:"kind"`
	Raw  *string         `json:"raw,omitempty"`
	B64  string          `json:"b64,omitempty"`
	Meta *transport.Meta `json:"meta,omitempty"`
}

// Header is the first line of a journal.
type Header struct {
	Format  string    `json:"format"`
	Started time.Time `json:"started"`
	Target  string    `json:"target"`
	PID     int       `json:"pid"`
}

// AppendRecord encodes one frame as a journal line (with its newline) onto
// buf. It is written by hand because it runs for every frame: the members
// are Record's, in the order seq, t, dir, kind, meta, raw|b64, so any JSON
// reader reads it as a Record and the data comes last (journals written
// before had meta last; both are read).
func AppendRecord(buf []byte, seq uint64, f transport.Frame) []byte {
	return appendRecord(buf, seq, &f)
}

// appendRecord is AppendRecord without copying the frame (ingest's way).
func appendRecord(buf []byte, seq uint64, f *transport.Frame) []byte {
	buf = appendRecordHead(buf, seq, f)
	if len(f.Data) > 0 || f.Kind == transport.Message {
		if utf8.Valid(f.Data) {
			buf = append(buf, `,"raw":`...)
			buf = appendJSONString(buf, f.Data)
		} else {
			buf = append(buf, `,"b64":"`...)
			buf = base64.StdEncoding.AppendEncode(buf, f.Data)
			buf = append(buf, '"')
		}
	}
	return append(buf, '}', '\n')
}

// recordChunk is how much of a frame's data WriteRecord encodes at a time.
const recordChunk = 64 << 10

// WriteRecord writes to w the line AppendRecord makes, byte for byte, with
// the data encoded a piece at a time: a frame of any size costs buf's
// 64 KiB more, not a second copy of itself. It returns buf for reuse.
func WriteRecord(w io.Writer, buf []byte, seq uint64, f transport.Frame) ([]byte, error) {
	if len(f.Data) <= recordChunk {
		buf = AppendRecord(buf[:0], seq, f)
		_, err := w.Write(buf)
		return buf, err
	}
	buf = appendRecordHead(buf[:0], seq, &f)
	raw := utf8.Valid(f.Data)
	if raw {
		buf = append(buf, `,"raw":"`...)
	} else {
		buf = append(buf, `,"b64":"`...)
	}
	for d := f.Data; len(d) > 0; {
		var n int
		if raw {
			n = runeCut(d, recordChunk)
			buf = appendJSONText(buf, d[:n])
		} else {
			n = min(len(d), recordChunk/3*3) // whole groups of 3: no padding mid-stream
			buf = base64.StdEncoding.AppendEncode(buf, d[:n])
		}
		d = d[n:]
		if _, err := w.Write(buf); err != nil {
			return buf, err
		}
		buf = buf[:0]
	}
	buf = append(buf, '"', '}', '\n')
	_, err := w.Write(buf)
	return buf, err
}

// runeCut is where to cut d at most max bytes in without splitting a
// UTF-8 character (d is valid UTF-8).
func runeCut(d []byte, max int) int {
	if len(d) <= max {
		return len(d)
	}
	n := max
	for n > max-utf8.UTFMax && !utf8.RuneStart(d[n]) {
		n--
	}
	return n
}

// appendRecordHead is a record up to its data: seq, t, dir, kind, meta.
func appendRecordHead(buf []byte, seq uint64, f *transport.Frame) []byte {
	buf = append(buf, `{"seq":`...)
	buf = strconv.AppendUint(buf, seq, 10)
	buf = append(buf, `,"t":"`...)
	buf = appendStamp(buf, f.Time)
	buf = append(buf, `","dir":"`...)
	buf = append(buf, f.Dir.String()...)
	buf = append(buf, `","kind":"`...)
	buf = append(buf, f.Kind.String()...)
	buf = append(buf, '"')
	// meta goes before the bytes: a reader that pages back the head of a
	// huge line finds every field but the tail of the data (see pageRecord).
	if !metaEmpty(&f.Meta) {
		buf = append(buf, `,"meta":`...)
		rest := f.Meta
		rest.PID = 0
		if metaEmpty(&rest) {
			// The common stdio case: only the pid (metaEmpty is the one list
			// of fields, so a new field can never be dropped here).
			buf = append(buf, `{"pid":`...)
			buf = strconv.AppendInt(buf, int64(f.Meta.PID), 10)
			buf = append(buf, '}')
		} else {
			buf = appendMeta(buf, &f.Meta) // terminal-safe: Detail may quote a server
		}
	}
	return buf
}

// appendJSONString quotes valid UTF-8 as a JSON string without HTML
// escaping, so the journal stays greppable; the characters that could
// hijack a terminal showing it (controls, bidi, separators) are \u
// escapes, which read back as the same bytes.
func appendJSONString(buf, s []byte) []byte {
	buf = append(buf, '"')
	buf = appendJSONText(buf, s)
	return append(buf, '"')
}

// appendJSONText is appendJSONString without the quotes.
func appendJSONText(buf, s []byte) []byte { return AppendJSONText(buf, s, false) }

// AppendJSONText appends s as the inside of a JSON string: quotes,
// backslashes, controls and the characters that could hijack a terminal
// (termsafe.Hidden) escaped. Invalid UTF-8 is copied as it is (the journal
// writes only valid text this way), or with replace written as \ufffd (the
// exports, whose bodies may hold any bytes).
//
// It runs for every frame journaled, so s goes 8 bytes at a time: each
// word is stored whole at the end of the output and tested at once
// (jsonscan.SpecialDELMask); a word with nothing to escape is done, and in
// one with quotes or backslashes (a JSON frame has one every few bytes)
// each gets its backslash in place. Only the rarer bytes (controls, DEL,
// non-ASCII but the commonest characters) leave the loop, one at a time. The
// byte-at-a-time escapers in escape_test.go are its references.
func AppendJSONText(buf, s []byte, replace bool) []byte {
	const hex = "0123456789abcdef"
	// Room for the rest of s as it is, always (so a word fits wherever
	// there are 8 bytes left to read); each escape makes room for itself.
	buf = slices.Grow(buf, len(s))
	n := len(buf)
	b := buf[:cap(buf)]
	for i := 0; ; {
	words:
		for i+8 <= len(s) {
			// Room for this word with an escape before each byte, the
			// stores past it, and the rest as it is.
			if cap(b)-n < 16+len(s)-i {
				b = slices.Grow(b[:n], 16+len(s)-i+len(s)/8)
				b = b[:cap(b)]
			}
			w := binary.LittleEndian.Uint64(s[i:])
			binary.LittleEndian.PutUint64(b[n:], w)
			m := jsonscan.SpecialDELMask(w) // every flag exact: each is looked at
			if m == 0 {
				n, i = n+8, i+8
				continue
			}
			// What a JSON frame needs most is done here, without leaving
			// the loop: each quote or backslash of the word escaped (a
			// backslash before it, the rest of the word stored again one
			// byte on), a 2- or 3-byte character that cannot be hidden
			// copied.
			j := 0 // backslashes written into this word's output
			for ; m != 0; m &= m - 1 {
				bit := bits.TrailingZeros64(m) &^ 7
				k := bit >> 3
				if c := byte(w >> bit); c != '"' && c != '\\' {
					n, i = n+k+j, i+k
					if size := plainChar(s[i:]); size > 0 {
						for { // text in another script: characters in a row
							b[n], b[n+1] = s[i], s[i+1]
							if size == 3 {
								b[n+2] = s[i+2]
							}
							n, i = n+size, i+size
							if i == len(s) {
								return b[:n]
							}
							if size = plainChar(s[i:]); size == 0 {
								break
							}
						}
						continue words
					}
					break words
				}
				b[n+k+j] = '\\'
				binary.LittleEndian.PutUint64(b[n+k+j+1:], w>>bit)
				j++
			}
			n, i = n+8+j, i+8
		}
		for i < len(s) && plainByte[s[i]] { // fewer than 8 left, or a byte to look at
			b[n] = s[i]
			n, i = n+1, i+1
		}
		if i == len(s) {
			return b[:n]
		}
		// s[i] needs a look. What it becomes is at most 6 bytes for at
		// least 1 read: keep room for that and for the rest as it is.
		if need := 6 + len(s) - i; cap(b)-n < need {
			b = slices.Grow(b[:n], need+len(s)/8)
			b = b[:cap(b)]
		}
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b[n], b[n+1] = '\\', c
			n, i = n+2, i+1
			continue
		case c < 0x20:
			switch c {
			case '\n':
				b[n], b[n+1] = '\\', 'n'
				n += 2
			case '\r':
				b[n], b[n+1] = '\\', 'r'
				n += 2
			case '\t':
				b[n], b[n+1] = '\\', 't'
				n += 2
			default:
				n += copy(b[n:], []byte{'\\', 'u', '0', '0', hex[c>>4], hex[c&0xf]})
			}
			i++
			continue
		}
		// DEL or the first byte of a UTF-8 character (or of invalid UTF-8).
		r, size := rune(c), 1
		if c >= 0x80 {
			r, size = utf8.DecodeRune(s[i:])
		}
		switch {
		case termsafe.Hidden(r):
			n += copy(b[n:], []byte{'\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf]})
		case replace && r == utf8.RuneError && size == 1:
			n += copy(b[n:], `\ufffd`)
		default:
			n += copy(b[n:], s[i:i+size])
		}
		i += size
	}
}

// plainChar is the length of the UTF-8 character s begins with when it has
// 2 or 3 bytes, is valid and is not termsafe.Hidden, without decoding it;
// 0 when it must be looked at (DecodeRune and Hidden). Every character
// Hidden names has 2 bytes with a lead byte of 0xc2 (C1 controls) or 0xd8
// (U+061C), or 3 with a lead of 0xe2 (U+2000-2FFF) or 0xef (U+FEFF); 0xe0
// and 0xed lead bytes take a narrower second byte (overlong forms,
// surrogates), left to DecodeRune too.
func plainChar(s []byte) int {
	c := s[0]
	switch {
	case c >= 0xc3 && c < 0xe0 && c != 0xd8 && len(s) >= 2 && s[1]&0xc0 == 0x80:
		return 2
	case c >= 0xe1 && c < 0xef && c != 0xe2 && c != 0xed && len(s) >= 3 && s[1]&0xc0 == 0x80 && s[2]&0xc0 == 0x80:
		return 3
	}
	return 0
}

// plainByte: the bytes AppendJSONText copies as they are without a look
// (printable ASCII but '"', '\\' and DEL).
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func metaEmpty(m *transport.Meta) bool {
	return m.Event == "" && m.Detail == "" && m.HTTPMethod == "" && m.URL == "" && m.Status == 0 &&
		len(m.Headers) == 0 && m.Stream == "" && m.Resumes == "" && m.EventID == "" && m.EventType == "" &&
		m.Retry == 0 && m.PID == 0 && m.ExitCode == nil && m.Signal == "" && m.Via == ""
}

// Frame turns a record back into the frame it was written from.
func (r *Record) Frame() (transport.Frame, error) {
	f := transport.Frame{Time: r.Time}
	if f.Dir = dirOf(r.Dir); f.Dir == 0 {
		return f, fmt.Errorf("record %d: unknown direction %q", r.Seq, r.Dir)
	}
	if f.Kind = kindOf(r.Kind); f.Kind == 0 {
		return f, fmt.Errorf("record %d: unknown kind %q", r.Seq, r.Kind)
	}
	switch {
	case r.Raw != nil:
		f.Data = []byte(*r.Raw)
	case r.B64 != "":
		d, err := base64.StdEncoding.DecodeString(r.B64)
		if err != nil {
			return f, fmt.Errorf("record %d: bad base64: %w", r.Seq, err)
		}
		f.Data = d
	}
	if r.Meta != nil {
		f.Meta = *r.Meta
	}
	return f, nil
}
