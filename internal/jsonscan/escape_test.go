package jsonscan

import (
	"bytes"
	"math/rand"
	"testing"
	"unicode/utf8"

	"mcpscope/internal/termsafe"
)

// escapeByteLoop is the byte-at-a-time escaper AppendJSONText replaced:
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
		if got, want := AppendJSONText(nil, []byte(s), false), escapeByteLoop(nil, []byte(s)); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %q, want %q", s, got, want)
		}
	}
}

func FuzzAppendJSONText(f *testing.F) {
	for _, s := range escapeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) { checkEscape(t, s) })
}

// checkEscape holds AppendJSONText to its references on s, both ways
// (invalid UTF-8 copied: escapeByteLoop; replaced: oldExportText), after a
// prefix it must keep, into buffers with no room, a little room and ample
// room (the growth paths).
func checkEscape(t *testing.T, s []byte) {
	t.Helper()
	for _, room := range []int{0, 3, 7 * len(s)} {
		for _, replace := range []bool{false, true} {
			buf := append(make([]byte, 0, 2+room), "p:"...)
			got := AppendJSONText(buf, s, replace)
			var want []byte
			if replace {
				want = oldExportText([]byte("p:"), s)
			} else {
				want = escapeByteLoop([]byte("p:"), s)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("AppendJSONText(%q, replace=%v, room %d) = %q, want %q", s, replace, room, got, want)
			}
		}
	}
}

// escapePieces are what the hostile inputs are made of: plain ASCII, every
// byte AppendJSONText must stop at, whole UTF-8 characters of every length
// (hidden ones among them), and invalid UTF-8 of every kind.
var escapePieces = []string{
	"a", "Z", " ", "~", `"`, `\`, "\n", "\r", "\t", "\x00", "\x1f", "\x7f",
	"é", "\u0080", "\u0085", "\u009f", "\u00a0", "\u00ad", "\u061c", "€", "\u200b", "\u200e", "\u200f",
	"\u2028", "\u2029", "\u202a", "\u202e", "\u2066", "\u2069", "\ufeff", "\ufffd", "😀", "\U0010ffff",
	"\u00c0", "\u0600", "\u061b", "\u061d", "\u07ff", "\u0800", "中", "\u1fff", "\u3000", "\ud7ff", "\ue000", "\uffff",
	"\x80", "\xbf", "\xe0\x80\x80", "\xe1\x80", "\xe3\x41\x80", "\xe3\x81\x41", "\xd8", "\xdf\x7f", "\xee\x80", "\xc0\xaf", "\xc2", "\xe2\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf0\x9f\x98", "\xfe", "\xff",
}

// TestEscapeWordsMatchReference: the escaper that tests 8 bytes at a time
// writes, byte for byte, what the byte-at-a-time references write, on
// every byte value and every piece above at every offset in and across
// a word, on runs of plain bytes of every length between the bytes that
// stop it, and on random text of 0-40 bytes and of up to 100 KB.
func TestEscapeWordsMatchReference(t *testing.T) {
	pad := func(n int) []byte { return bytes.Repeat([]byte("x"), n) }
	for c := 0; c < 256; c++ {
		for pre := 0; pre <= 17; pre++ {
			for _, post := range []int{0, 1, 7, 8, 9} {
				checkEscape(t, append(append(pad(pre), byte(c)), pad(post)...))
			}
		}
	}
	for _, p := range escapePieces {
		for _, q := range escapePieces {
			for pre := 0; pre <= 17; pre++ {
				checkEscape(t, []byte(string(pad(pre))+p+q+"tail"))
				checkEscape(t, []byte(string(pad(pre))+p+string(pad(pre%9))+q))
			}
		}
	}
	// Plain runs of every length up to 20 between the bytes that stop
	// the escaper: the runs end at every offset of a word.
	for run := 0; run <= 20; run++ {
		for _, stop := range []string{`"`, `\`, "\n", "\x01", "\x7f", "é", "\u2028", "\xff"} {
			var b []byte
			for range 6 {
				b = append(append(b, pad(run)...), stop...)
			}
			checkEscape(t, b)
			checkEscape(t, b[:len(b)-1])
		}
	}
	rng := rand.New(rand.NewSource(7))
	random := func(n int) []byte {
		var b []byte
		for len(b) < n {
			switch rng.Intn(4) {
			case 0:
				b = append(b, escapePieces[rng.Intn(len(escapePieces))]...)
			case 1:
				b = append(b, byte(rng.Intn(256)))
			default:
				b = append(b, pad(rng.Intn(12))...)
			}
		}
		return b[:n]
	}
	for range 20000 {
		checkEscape(t, random(rng.Intn(41)))
	}
	for _, n := range []int{1000, 4096, 65536 + 5, 100000} {
		checkEscape(t, random(n))
		checkEscape(t, bytes.Repeat([]byte("\x01"), n)) // each byte six: the output grows as it goes
	}
}
