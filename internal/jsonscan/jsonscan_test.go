package jsonscan

import (
	"encoding/binary"
	"strings"
	"testing"
)

func TestSkipString(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{`"abc",1`, 5},
		{`""`, 2},
		{`"a\"b"x`, 6},
		{`"a\\"x`, 5},
		{`"a\\\"b"`, 8},
		{`"\u0041"`, 8},
		{`"open`, -1},
		{`"ends in \"`, -1},
		{`"ends in \`, -1},
	} {
		if got := SkipString([]byte(c.in), 0); got != c.want {
			t.Errorf("SkipString(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestSkipNumber(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{`0,`, 1}, {`-12.5e+3]`, 8}, {`10E2`, 4}, {`-`, -1}, {`01`, 1}, {`1.`, -1}, {`1e`, -1}, {`.5`, -1}, {`-x`, -1},
	} {
		if got := SkipNumber([]byte(c.in), 0); got != c.want {
			t.Errorf("SkipNumber(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

// TestPlainRun: the eight-at-a-time scan stops where a byte-by-byte loop
// does, for every byte value at every position of a word and the tail.
func TestPlainRun(t *testing.T) {
	naive := func(b []byte, i int) int {
		for ; i < len(b); i++ {
			if c := b[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
				return i
			}
		}
		return i
	}
	for n := 0; n < 20; n++ {
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				b := make([]byte, n)
				for k := range b {
					b[k] = 'a' + byte(k%26)
				}
				b[pos] = byte(c)
				for from := 0; from <= n; from++ {
					if got, want := PlainRun(b, from), naive(b, from); got != want {
						t.Fatalf("PlainRun(%q, %d) = %d, want %d", b, from, got, want)
					}
				}
			}
		}
	}
}

func FuzzPlainRun(f *testing.F) {
	f.Add([]byte("hello \"world\" \\ \x01 é"), 0)
	f.Fuzz(func(t *testing.T, b []byte, from int) {
		if from < 0 || from > len(b) {
			return
		}
		want := from
		for ; want < len(b); want++ {
			if c := b[want]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
				break
			}
		}
		if got := PlainRun(b, from); got != want {
			t.Fatalf("PlainRun(%q, %d) = %d, want %d", b, from, got, want)
		}
	})
}

// special and specialDEL are the byte-by-byte references of SpecialMask
// and SpecialDELMask.
func special(c byte) bool    { return c == '"' || c == '\\' || c < 0x20 || c >= 0x80 }
func specialDEL(c byte) bool { return special(c) || c == 0x7f }

// checkMasks: each mask flags exactly the bytes of w its reference names.
func checkMasks(t *testing.T, w [8]byte) {
	t.Helper()
	x := binary.LittleEndian.Uint64(w[:])
	var want, wantDEL uint64
	for k, c := range w {
		if special(c) {
			want |= 0x80 << (8 * k)
		}
		if specialDEL(c) {
			wantDEL |= 0x80 << (8 * k)
		}
	}
	if got := SpecialMask(x); got != want {
		t.Fatalf("SpecialMask(% x) = %#x, want %#x", w, got, want)
	}
	if got := SpecialDELMask(x); got != wantDEL {
		t.Fatalf("SpecialDELMask(% x) = %#x, want %#x", w, got, wantDEL)
	}
}

// TestSpecialMasks: every byte value at every position of a word, beside
// every byte value (the neighbour a carry or borrow would reach), among
// fillers special and not, is flagged as its reference says, and no other
// byte is.
func TestSpecialMasks(t *testing.T) {
	for pos := 0; pos < 7; pos++ {
		for a := 0; a < 256; a++ {
			for b := 0; b < 256; b++ {
				for _, fill := range []byte{'a', 0, '"', 0x7f, 0xff} {
					var w [8]byte
					for k := range w {
						w[k] = fill
					}
					w[pos], w[pos+1] = byte(a), byte(b)
					checkMasks(t, w)
				}
			}
		}
	}
}

func FuzzSpecialMasks(f *testing.F) {
	f.Add(uint64(0x2322225c5d5c7f80))
	f.Add(uint64(0x6867666564636261))
	f.Fuzz(func(t *testing.T, x uint64) {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], x)
		checkMasks(t, w)
	})
}

// TestByteMask: each byte is flagged when, and only when, it is c, whatever
// its neighbours (no borrow from one byte reaches the next).
func TestByteMask(t *testing.T) {
	for _, c := range []byte{'"', '\\', 0, 0x7f, 0x80, 0xff} {
		for _, v := range []byte{c, c ^ 1, c + 1, c - 1, c ^ 0x80, 0, 0xff, '"', '\\', '#', ']'} {
			for pos := 0; pos < 8; pos++ {
				for _, fill := range []byte{0, c, c + 1, c - 1, 0xff, 0x80} {
					var w [8]byte
					for k := range w {
						w[k] = fill
					}
					w[pos] = v
					x := binary.LittleEndian.Uint64(w[:])
					var want uint64
					for k, b := range w {
						if b == c {
							want |= 0x80 << (8 * k)
						}
					}
					if got := ByteMask(x, c); got != want {
						t.Fatalf("ByteMask(% x, %#x) = %#x, want %#x", w, c, got, want)
					}
				}
			}
		}
	}
}

// BenchmarkPlainRun: the eight-at-a-time scan over a long run of prose and
// over a JSON frame's short strings (B/s is bytes scanned).
func BenchmarkPlainRun(b *testing.B) {
	prose := []byte(strings.Repeat("Plain prose of a long resource, line after line. ", 200) + `"`)
	frame := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"flood","data":"n 123456"}}`)
	b.Run("prose", func(b *testing.B) {
		b.SetBytes(int64(len(prose)))
		for b.Loop() {
			PlainRun(prose, 0)
		}
	})
	b.Run("frame", func(b *testing.B) {
		b.SetBytes(int64(len(frame)))
		for b.Loop() {
			for i := 0; i < len(frame); i = PlainRun(frame, i) + 1 {
			}
		}
	})
}

func TestCommonPrefix(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 0},
		{"abc", "abd", 2},
		{"abcdefgh", "abcdefgh", 8},
		{"abcdefghij", "abcdefghiX", 9},
		{"abcdefgXij", "abcdefghij", 7},
		{"abcdefghijklmnopq", "abcdefghijklmnop", 16},
		{"0123456789abcdef0123456789", "0123456789abcdef0123X", 20},
	} {
		if got := CommonPrefix([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("CommonPrefix(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := CommonPrefix([]byte(c.b), []byte(c.a)); got != c.want {
			t.Errorf("CommonPrefix(%q, %q) = %d, want %d", c.b, c.a, got, c.want)
		}
	}
}

// TestWord checks every start in buffers of every length up to 20: the
// bytes left, in order, then zeros.
func TestWord(t *testing.T) {
	src := []byte("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14")
	for n := 0; n <= len(src); n++ {
		b := src[:n]
		for i := 0; i < n; i++ {
			var pad [8]byte
			copy(pad[:], b[i:])
			if got, want := Word(b, i), binary.LittleEndian.Uint64(pad[:]); got != want {
				t.Errorf("Word(%d bytes, %d) = %#x, want %#x", n, i, got, want)
			}
		}
	}
}
