package termsafe

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestInert(t *testing.T) {
	cases := []struct{ name, in string }{
		{"csi clear", "a\x1b[2Jb"},
		{"osc52 clipboard", "x\x1b]52;c;ZXZpbA==\x07y"},
		{"8-bit csi", "a\u009b2Jb"},
		{"bidi override", "abc\u202Edcba"},
		{"bidi isolate", "\u2066x\u2069"},
		{"bell and backspace", "a\x07\x08b"},
		{"invalid utf8", "a\xff\xfeb"},
		{"line separators", "a\u2028b\u2029c"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, out := range []string{Text(c.in), Line(c.in)} {
				for _, r := range out {
					if (r < 0x20 && r != '\n' && r != '\t') || Hidden(r) {
						t.Fatalf("%q kept control %U in %q", c.in, r, out)
					}
				}
			}
		})
	}
}

func TestVisiblePlaceholders(t *testing.T) {
	if got := Line("a\x1b[31mb"); got != "a␛[31mb" {
		t.Fatalf("ESC should show as ␛, got %q", got)
	}
	if got := Line("one\ntwo"); got != "one⏎two" {
		t.Fatalf("Line keeps newlines out, got %q", got)
	}
	if got := Text("one\ntwo\tx"); got != "one\ntwo\tx" {
		t.Fatalf("Text keeps newlines and tabs, got %q", got)
	}
	if got := Text("héllo wörld ✓"); got != "héllo wörld ✓" {
		t.Fatalf("printable unicode must survive, got %q", got)
	}
}

func FuzzText(f *testing.F) {
	f.Add("a\x1b]52;c;AAAA\x07")
	f.Add("\u202e\xff")
	f.Fuzz(func(t *testing.T, s string) {
		out := Text(s)
		if strings.ContainsAny(out, "\x1b\x07\u009b\u009d\u202e") {
			t.Fatalf("escape survived: %q → %q", s, out)
		}
	})
}

func TestJSON(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"a":"plain"}`, `{"a":"plain"}`},
		{"{\"a\":\"x\u202Ey\"}", `{"a":"x\u202ey"}`},
		{"{\"a\":\"\u0085\u2028\"}", `{"a":"\u0085\u2028"}`},
		{"{\"a\":\"\x1b]52;c;aGk=\x07\"}", `{"a":"\u001b]52;c;aGk=\u0007"}`},
		{`{"a":"kept \" \\u001b escape"}`, `{"a":"kept \" \\u001b escape"}`},
		{"{\n\t\"a\": \"é\"\r\n}", "{\n\t\"a\": \"é\"\n}"},
		{"{\"a\":\"\xff\"}", `{"a":"\ufffd"}`},
	}
	for _, c := range cases {
		got := string(JSON([]byte(c.in)))
		if got != c.want {
			t.Errorf("JSON(%q) = %q, want %q", c.in, got, c.want)
			continue
		}
		var a, b any
		if json.Unmarshal([]byte(c.in), &a) == nil && json.Unmarshal([]byte(got), &b) == nil && !reflect.DeepEqual(a, b) {
			t.Errorf("JSON(%q) changed the value: %v became %v", c.in, a, b)
		}
	}
}

// TestIsPlainWords: the eight-at-a-time test says what a byte-by-byte loop
// says, for every byte value at every place of a word and of the tail, each
// side of plain text, tabs and newlines.
func TestIsPlainWords(t *testing.T) {
	for _, multiline := range []bool{false, true} {
		for _, fill := range []byte{'a', '\t', '\n', ' ', '~'} {
			for n := 0; n <= 19; n++ {
				for at := 0; at < n; at++ {
					for c := 0; c < 256; c++ {
						b := bytes.Repeat([]byte{fill}, n)
						b[at] = byte(c)
						if got, want := isPlain(string(b), multiline), plainBytes(string(b), multiline); got != want {
							t.Fatalf("isPlain(%q, %v) = %v, byte by byte %v", b, multiline, got, want)
						}
					}
				}
			}
		}
	}
}
