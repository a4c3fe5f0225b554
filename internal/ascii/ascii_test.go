package ascii

import (
	"testing"
	"unicode"
)

// TestLower: ASCII letters go to lower case as unicode.ToLower takes them;
// every other byte, a UTF-8 one included, stays as it is.
func TestLower(t *testing.T) {
	for c := 0; c < 256; c++ {
		want := byte(c)
		if c < 0x80 {
			want = byte(unicode.ToLower(rune(c)))
		}
		if got := Lower(byte(c)); got != want {
			t.Errorf("Lower(%#x) = %#x, want %#x", c, got, want)
		}
	}
}
