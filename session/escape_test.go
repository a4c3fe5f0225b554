package session

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"mcpscope/internal/termsafe"
)

// escapeByteLoop is the byte-at-a-time escaper appendJSONText replaced:
// the reference the run-at-a-time one must match byte for byte.
func escapeByteLoop(buf, s []byte) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c == 0x7f {
			r, n := utf8.DecodeRune(s[i:])
			if termsafe.Hidden(r) {
				buf = append(buf, s[start:i]...)
				buf = append(buf, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
				start = i + n
			}
			i += n - 1
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		buf = append(buf, s[start:i]...)
		switch c {
		case '"', '\\':
			buf = append(buf, '\\', c)
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		default:
			buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	return append(buf, s[start:]...)
}

var escapeSeeds = []string{
	"", "plain ascii only, longer than eight bytes", `{"jsonrpc":"2.0","id":1,"result":{"text":"a \"quoted\" \\ word"}}`,
	"del\x7fhere and\x7f", "\x1b[2J\x1b]52;c;aGk=\x07", "é ü 😀 \u202e bidi \u2028 sep", "\u00ad soft", "tab\there\r\n",
	"12345678\"", "1234567\\", "\x00\x01\x02\x03\x04\x05\x06\x07\x08", "abcdefgh\u0085ijk",
}

func TestAppendJSONTextMatchesByteLoop(t *testing.T) {
	for _, s := range escapeSeeds {
		if got, want := appendJSONText(nil, []byte(s)), escapeByteLoop(nil, []byte(s)); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %q, want %q", s, got, want)
		}
	}
}

func FuzzAppendJSONText(f *testing.F) {
	for _, s := range escapeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		if !utf8.Valid(s) {
			return // AppendRecord writes invalid UTF-8 as base64
		}
		if got, want := appendJSONText(nil, s), escapeByteLoop(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %q, want %q", s, got, want)
		}
	})
}
