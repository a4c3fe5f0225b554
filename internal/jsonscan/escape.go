package jsonscan

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf8"

	"mcpscope/internal/termsafe"
)

// The JSON string escapers. There are two, because their outputs answer
// to different readers and must stay byte-identical to what each wrote
// before:
//
//   - AppendJSONText is the journal's rule (session writes every frame
//     with it; the HAR export copies frame bodies with it): no
//     HTML escaping, so a journal stays greppable, and the characters
//     that could hijack a terminal showing the text (controls, DEL, bidi,
//     separators: termsafe.Hidden) as \u escapes. Its output is what
//     termsafe.JSON leaves alone.
//   - AppendMarshalString is encoding/json's rule (json.Marshal's bytes,
//     which the OTLP and HAR writers must match: tests compare them): <,
//     > and & escaped, \b and \f short forms, U+2028 and U+2029 escaped,
//     DEL and the other hidden characters left as they are.
//
// The proxy's appendLineJSON (proxy/encode.go) writes the journal's rule
// too, but fused with the JSON validation of the same pass; separating it
// would read each line twice on the relay's hot path, so it stays there.

// AppendJSONText appends s as the inside of a JSON string: quotes,
// backslashes, controls and the characters that could hijack a terminal
// (termsafe.Hidden) escaped. Invalid UTF-8 is copied as it is (the journal
// writes only valid text this way), or with replace written as \ufffd (the
// exports, whose bodies may hold any bytes).
//
// It runs for every frame journaled, so s goes 8 bytes at a time: each
// word is stored whole at the end of the output and tested at once
// (SpecialDELMask); a word with nothing to escape is done, and in
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
			m := SpecialDELMask(w) // every flag exact: each is looked at
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

// AppendMarshalString quotes s as encoding/json does, HTML characters
// escaped and invalid UTF-8 as U+FFFD.
func AppendMarshalString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if marshalSafe[b] {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch b {
			case '\\', '"':
				buf = append(buf, '\\', b)
			case '\b':
				buf = append(buf, '\\', 'b')
			case '\f':
				buf = append(buf, '\\', 'f')
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// marshalSafe: the ASCII bytes encoding/json writes as they are (with
// HTML escaping, as json.Marshal does).
var marshalSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// MarshalSafe reports whether AppendMarshalString writes the ASCII byte c
// as it is.
func MarshalSafe(c byte) bool { return c < utf8.RuneSelf && marshalSafe[c] }
