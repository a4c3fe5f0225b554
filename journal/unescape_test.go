package journal

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"slices"
	"testing"

	"mcpscope/transport"
)

// checkUnescape: unescapeRaw reads the JSON string token tok (followed by
// tail) as encoding/json does, whichever buffer it decodes into: in place,
// into a reader's scratch, or into a buffer of its own.
func checkUnescape(t *testing.T, tok []byte) {
	t.Helper()
	var want []byte
	var s string
	werr := json.Unmarshal(tok, &s)
	want = []byte(s)
	line := append(bytes.Clone(tok), `,"x":1}`...)
	for _, mode := range []string{"copy", "scratch", "borrow", "owned", "quotes"} {
		b := bytes.Clone(line)
		var scratch *rawScratch
		if mode == "scratch" || mode == "borrow" || mode == "quotes" {
			scratch = &rawScratch{borrow: mode != "scratch", buf: make([]byte, 3)}
			scratch.quotes.want = mode == "quotes"
		}
		got, end, ok := unescapeRaw(b, 0, mode == "owned", false, scratch)
		if ok != (werr == nil) {
			if werr == nil || json.Valid(tok) {
				t.Fatalf("%s %q: ok %v, encoding/json: %v", mode, tok, ok, werr)
			}
			continue
		}
		if wend := len(bytes.TrimRight(tok, " \t\r\n")); ok && (!bytes.Equal(got, want) || end != wend) {
			t.Fatalf("%s %q: got %q (end %d), want %q (end %d)", mode, tok, got, end, want, wend)
		}
		if mode == "quotes" && ok {
			checkQuoteTable(t, tok, got, scratch.quotesOf(got))
		}
	}
}

// checkQuoteTable: a quote table, when the data has one (it is clean:
// no escape but \" and \/), is where every quote of the data is.
func checkQuoteTable(t *testing.T, tok, data []byte, table []int32) {
	t.Helper()
	if table == nil {
		return
	}
	want := []int32{}
	for i, c := range data {
		if c == '"' {
			want = append(want, int32(i))
		}
	}
	if !slices.Equal(table, want) {
		t.Fatalf("%q: quotes at %v, want %v", tok, table, want)
	}
}

var unescapeSeeds = []string{
	`""`, `"a"`, `"12345678"`, `"1234567\""`, `"\"\"\"\"\"\"\"\"\"\""`, `"{\"jsonrpc\":\"2.0\",\"id\":1}"`,
	`"\\\\\\\\\\\\\\\\\\"`, `"\b\f\n\r\t\/\\"`, `"abcdefg\u00e9hijklmnop"`, `"\ud83d\ude00\ud800 lone"`,
	"\"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\"", // each grows to three bytes
	"\"a\xffb\xfec\xfdd\xfce\xfbf\xfag\xf9h\xf8 12345678 \\\" 12345678\"",
	"\"\u2028\u202e\x7f\xc3\xa9\"", "\"ctl \x01 here\"", `"bad \x escape"`, `"\u12"`, `"unterminated`,
	`"12345678\`, `"\q12345678"`,
	// Words whose only specials are \" escapes are unescaped at once: at
	// each place in a word, two in one, one across two words, next to
	// bytes a mask with borrows would flag falsely ('#' after a quote),
	// and beside other escapes.
	`"\"a\"bcdefgh\"ijklmn"`, `"abcdefg\"hijklmnop\"qrstuvw"`, `"ab\"#cd\"#ef\"#gh\"#ij"`,
	`"\"\"\"\"abcdefgh"`, `"abcdef\\\"ghijklmn"`, `"abcd\\\\\"\"efghijkl"`, `"a\"b\nc\"d\u0022e\"f12345678"`,
	`"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"\u00e9\"}}"`, "\"a\\\"b\xffc\\\"d12345678\"",
}

func TestUnescapeRawMatchesJSON(t *testing.T) {
	for _, s := range unescapeSeeds {
		checkUnescape(t, []byte(s))
	}
	// Random mixes of the pieces a journal's raw strings are made of,
	// crossing the eight-byte words every way.
	pieces := []string{`a`, `bcdefgh`, `\"`, `\\`, `\n`, `\u0041`, `\ud83d\ude00`, `\udc00`, "é", "\xff", "😀", `\/`, " "}
	r := rand.New(rand.NewSource(1))
	for n := 0; n < 3000; n++ {
		var b bytes.Buffer
		b.WriteByte('"')
		for k := r.Intn(40); k > 0; k-- {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		b.WriteByte('"')
		checkUnescape(t, b.Bytes())
	}
}

func FuzzUnescapeRaw(f *testing.F) {
	for _, s := range unescapeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || b[0] != '"' {
			return
		}
		checkUnescape(t, b)
	})
}

// TestLongLineWithInvalidUTF8ReadsAsJSON: a line past the read buffer is
// decoded in its own buffer, in place; bytes that are not UTF-8 become
// U+FFFD (three bytes for one) and must not overwrite what is still to
// be read. encoding/json reads the same line as the same data.
func TestLongLineWithInvalidUTF8ReadsAsJSON(t *testing.T) {
	raw := bytes.Repeat([]byte("\xff\xfe\\\"x"), 20000) // past the 64 KiB buffer
	line := append([]byte(`{"seq":1,"t":"2026-01-02T03:04:05Z","dir":"in","kind":"message","raw":"`), raw...)
	line = append(line, "\"}\n"...)
	var rec Record
	if err := json.Unmarshal(line, &rec); err != nil {
		t.Fatal(err)
	}
	want, err := rec.Frame()
	if err != nil {
		t.Fatal(err)
	}
	j := append([]byte(`{"format":"mcpscope-journal/1","started":"2026-11-26T04:00:00Z","target":"stdio: x","pid":1}`+"\n"), line...)
	var got [][]byte
	_, err = Read(bytes.NewReader(j), func(_ uint64, f transport.Frame) error {
		got = append(got, f.Data)
		return nil
	})
	if err != nil || len(got) != 1 || !bytes.Equal(got[0], want.Data) {
		t.Fatalf("read %d frames (err %v); data equal to encoding/json's: %v", len(got), err, len(got) == 1 && bytes.Equal(got[0], want.Data))
	}
}
