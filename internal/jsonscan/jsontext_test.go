package jsonscan

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"testing"
	"unicode/utf8"

	"mcpscope/internal/termsafe"
)

// TestAppendJSONTextCallers: the one escaper writes, for each caller, what
// its own copy wrote before they were merged: the journal's (invalid UTF-8
// copied; escapeByteLoop is its reference) and the exports' (invalid UTF-8 as \ufffd), on hostile text and
// on random bytes.
func TestAppendJSONTextCallers(t *testing.T) {
	cases := []string{
		"", "plain", `say "hi" \ bye`, "line\nnext\r\ttab\x00\x01\x1f", "del\x7f", "\x1b[2J\x1b]0;title\x07",
		"bidi \u202e\u2066\u200b\ufeff end", "sep \u2028\u2029", "c1 \u0085\u009b", "caf\xc3\xa9", "bad\xff\xfe",
		"torn \xe2\x80", "lone surrogate \xed\xa0\x80", "emoji 😀", "replacement \ufffd", string(bytes.Repeat([]byte(`\"`), 5000)),
	}
	rng := rand.New(rand.NewSource(1))
	for range 2000 {
		b := make([]byte, rng.Intn(40))
		for i := range b {
			b[i] = byte(rng.Intn(256))
			if rng.Intn(3) == 0 {
				b[i] = 'a'
			}
		}
		cases = append(cases, string(b))
	}
	for _, c := range cases {
		if got, want := AppendJSONText(nil, []byte(c), false), escapeByteLoop(nil, []byte(c)); !bytes.Equal(got, want) {
			t.Fatalf("journal text of %q = %q, was %q", c, got, want)
		}
		if got, want := AppendJSONText([]byte("x"), []byte(c), true), oldExportText([]byte("x"), []byte(c)); !bytes.Equal(got, want) {
			t.Fatalf("export text of %q = %q, was %q", c, got, want)
		}
	}
}

// oldExportText is the exports' own escaper from before the merge (its
// runs of plain bytes read a byte at a time here).
func oldExportText(buf []byte, s []byte) []byte {
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				buf = append(buf, '\\', c)
			case c == '\n':
				buf = append(buf, '\\', 'n')
			case c == '\r':
				buf = append(buf, '\\', 'r')
			case c == '\t':
				buf = append(buf, '\\', 't')
			case c < 0x20 || c == 0x7f:
				buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				buf = append(buf, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			buf = append(buf, `\ufffd`...)
		case termsafe.Hidden(r):
			buf = append(buf, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
		default:
			buf = append(buf, s[i:i+n]...)
		}
		i += n
	}
	return buf
}

// TestAppendMarshalStringMatchesMarshal: AppendMarshalString writes what
// json.Marshal writes for the same string, on every byte value and the
// hostile pieces, alone and in pairs, and on random bytes.
func TestAppendMarshalStringMatchesMarshal(t *testing.T) {
	check := func(s string) {
		t.Helper()
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendMarshalString([]byte("p:"), s); string(got) != "p:"+string(want) {
			t.Fatalf("AppendMarshalString(%q) = %q, want p:%q", s, got, want)
		}
	}
	for c := 0; c < 256; c++ {
		check("ab" + string(rune(c)) + "cd")
		check("ab" + string([]byte{byte(c)}) + "cd")
	}
	for _, p := range escapePieces {
		for _, q := range append(escapePieces, "<", ">", "&", "\b", "\f") {
			check(p + q)
		}
	}
	rng := rand.New(rand.NewSource(3))
	for range 2000 {
		b := make([]byte, rng.Intn(40))
		for i := range b {
			b[i] = byte(rng.Intn(256))
		}
		check(string(b))
	}
}
