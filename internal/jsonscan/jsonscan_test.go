package jsonscan

import "testing"

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
