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
		case isFormat(r):
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isPlain is the fast path: printable ASCII plus tab (and newline when multiline).
func isPlain(s string, multiline bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x7f || (c < 0x20 && c != '\t' && (c != '\n' || !multiline)) {
			return false
		}
	}
	return true
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
