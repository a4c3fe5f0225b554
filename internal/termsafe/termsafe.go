// Package termsafe makes text that came from a server inert before it
// reaches a terminal: no escape sequences (so no OSC 52 clipboard writes, no
// screen clears, no title changes), no control characters, no bidi overrides.
// What was removed stays visible as a placeholder, because an inspector must
// show that a server tried.
package termsafe

import (
	"strings"
	"unicode/utf8"
)

// Text sanitizes s for a multi-line display: newlines and tabs survive.
func Text(s string) string { return clean(s, true) }

// Line sanitizes s for a single line: newlines become "⏎".
func Line(s string) string { return clean(s, false) }

// Cut is Line cut to at most n runes, the last of them "…" when cut.
func Cut(s string, n int) string {
	s = Line(s)
	if utf8.RuneCountInString(s) <= n || n < 1 {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

func clean(s string, multiline bool) string {
	if isPlain(s, multiline) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune('\uFFFD')
		case r == '\n':
			if multiline {
				b.WriteByte('\n')
			} else {
				b.WriteString("⏎")
			}
		case r == '\t':
			b.WriteByte('\t')
		case r == '\r':
			if !multiline {
				b.WriteString("␍")
			}
		case r < 0x20:
			b.WriteRune(0x2400 + r) // Control Pictures: ESC shows as ␛
		case r == 0x7f:
			b.WriteRune('␡')
		case r >= 0x80 && r <= 0x9f: // C1 controls, including the 8-bit CSI and OSC
			b.WriteRune('\uFFFD')
		case isFormat(r), r == 0x2028, r == 0x2029: // the separators break lines where none shows
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isPlain is the fast path: printable ASCII plus tab (and newline when multiline).
// It tests eight bytes at a time (every JSON line an export writes passes
// here), looking closer only at a word that holds a byte outside 0x20–0x7e.
func isPlain(s string, multiline bool) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		// A byte ≥ 0x80, a byte < 0x20 or DEL sets its high bit here; a
		// flag above a real one may be false, never one below it.
		const ones, high = 0x0101010101010101, 0x8080808080808080
		d := w ^ (0x7f * ones)
		if (w|((w-0x20*ones)&^w)|((d-ones)&^d))&high == 0 {
			continue
		}
		if !plainBytes(s[i:i+8], multiline) {
			return false
		}
	}
	return plainBytes(s[i:], multiline)
}

func plainBytes(s string, multiline bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x7f || (c < 0x20 && c != '\t' && (c != '\n' || !multiline)) {
			return false
		}
	}
	return true
}

// Hidden reports a printable-looking rune that must not reach a terminal
// raw: DEL, the C1 controls, bidi and invisible format characters, and the
// line and paragraph separators. JSON writers escape these as \u.
func Hidden(r rune) bool {
	return r == 0x7f || (r >= 0x80 && r <= 0x9f) || isFormat(r) || r == 0x2028 || r == 0x2029
}

// isFormat reports the invisible characters that reorder or hide text:
// bidi embeddings, overrides and isolates, and zero-width joiners aside.
func isFormat(r rune) bool {
	switch {
	case r == 0x061C, r == 0x200E, r == 0x200F:
		return true
	case r >= 0x202A && r <= 0x202E:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0xFEFF, r == 0x200B:
		return true
	}
	return false
}

// JSON makes JSON text inert without changing what it says: inside strings,
// control characters, DEL, C1 controls, bidi and other invisible format
// characters and the line/paragraph separators become \u escapes, which a
// JSON reader turns back into the same value; invalid UTF-8 becomes
// \ufffd. Between tokens, anything but JSON's own blanks is shown as in
// Text. Clean input is returned as is.
func JSON(b []byte) []byte {
	if isPlain(string(b), true) {
		return b
	}
	const hex = "0123456789abcdef"
	out := make([]byte, 0, len(b)+16)
	inString := false
	for i := 0; i < len(b); {
		c := b[i]
		if inString && c == '\\' && i+1 < len(b) {
			out = append(out, c, b[i+1]) // an escape stays as written
			i += 2
			continue
		}
		if c == '"' {
			inString = !inString
		}
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			if inString {
				out = append(out, `\ufffd`...)
			} else {
				out = append(out, "\uFFFD"...)
			}
		case !inString && (r == '\n' || r == '\t' || r == ' ' || r == '\r'):
			if r != '\r' {
				out = append(out, c)
			}
		case inString && (r < 0x20 || Hidden(r)):
			out = append(out, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
		case !inString && (r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || isFormat(r)):
			out = append(out, clean(string(b[i:i+n]), false)...)
		default:
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}
