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
