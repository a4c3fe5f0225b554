package waterfall

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

func TestBarCells(t *testing.T) {
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	sp := func(a, b int, k wfKind) wfSpan { return wfSpan{ms(a), ms(b), k} }
	mk := func(at int, g rune, p int) wfMark { return wfMark{ms(at), g, p} }
	cases := []struct {
		name  string
		r     wfRow
		from  int
		scale time.Duration
		w     int
		want  string
	}{
		{"an instant call still gets a column", wfRow{start: ms(0), spans: []wfSpan{sp(0, 0, wfServer)}, marks: []wfMark{mk(0, '✓', prioEnd)}},
			0, 100 * time.Millisecond, 4, "✓   "},
		{"events on an edge belong to the column they end", wfRow{start: ms(0), spans: []wfSpan{sp(0, 200, wfWait), sp(200, 400, wfServer)},
			marks: []wfMark{mk(200, glyphFirstByte, prioFirstByte), mk(400, '✓', prioEnd)}}, 0, 100 * time.Millisecond, 6, "▒│█✓  "},
		{"a round starts the column after the edge", wfRow{start: ms(0), spans: []wfSpan{sp(0, 300, wfHuman), sp(300, 400, wfWait)},
			marks: []wfMark{mk(300, '2', prioRound)}}, 0, 100 * time.Millisecond, 5, "┄┄┄2 "},
		{"a column shows what covers most of it", wfRow{start: ms(0), spans: []wfSpan{sp(0, 130, wfWait), sp(130, 200, wfServer)}},
			0, 100 * time.Millisecond, 2, "▒█"},
		{"the first byte wins over a progress step", wfRow{start: ms(0), spans: []wfSpan{sp(0, 100, wfWait), sp(100, 300, wfServer)},
			marks: []wfMark{mk(150, glyphProgress, prioProgress), mk(120, glyphFirstByte, prioFirstByte), mk(250, glyphProgress, prioProgress)}},
			0, 100 * time.Millisecond, 3, "▒│•"},
		{"before the view: nothing", wfRow{start: ms(0), spans: []wfSpan{sp(0, 50, wfServer)}, marks: []wfMark{mk(50, '✓', prioEnd)}},
			100, 100 * time.Millisecond, 3, "   "},
		{"a bar through the whole view", wfRow{start: ms(0), spans: []wfSpan{sp(0, 1000, wfServer)}}, 200, 100 * time.Millisecond, 3, "███"},
	}
	for _, c := range cases {
		cells := barCells(c.r, ms(c.from), c.scale, c.w)
		var b strings.Builder
		for _, x := range cells {
			b.WriteRune(x.glyph)
		}
		if b.String() != c.want {
			t.Errorf("%s: %q, want %q", c.name, b.String(), c.want)
		}
	}
}

func TestAxis(t *testing.T) {
	cases := []struct {
		left, scale time.Duration
		w           int
		want        string
	}{
		{0, 100 * time.Millisecond, 30, "0         1.0s      2.0s      "},
		{250 * time.Millisecond, 100 * time.Millisecond, 30, "       1.0s      2.0s         "}, // 3.0s would be cut: left out,
		{0, 58 * time.Millisecond, 25, "0                1.0s     "[:25]},
		{0, time.Minute, 25, "0         10m00s         "},
	}
	for _, c := range cases {
		if got := axis(c.left, c.scale, c.w); got != c.want {
			t.Errorf("axis(%v, %v, %d) = %q, want %q", c.left, c.scale, c.w, got, c.want)
		}
	}
}

func TestFitExact(t *testing.T) {
	for _, c := range []struct {
		span time.Duration
		w    int
		want time.Duration
	}{{4 * time.Second, 69, 58 * time.Millisecond}, {0, 10, time.Millisecond}, {time.Hour, 100, 36 * time.Second}, {time.Second, 0, time.Second}} {
		if got := fitExact(c.span, c.w); got != c.want {
			t.Errorf("fitExact(%v, %d) = %v, want %v", c.span, c.w, got, c.want)
		}
	}
}

// The person's wait inside a call is not the server's time.
func TestCarve(t *testing.T) {
	s := func(a, b int, k wfKind) wfSpan { return wfSpan{at(float64(a)), at(float64(b)), k} }
	got := carve([]wfSpan{s(0, 2, wfWait), s(2, 10, wfServer)}, s(5, 7, wfHuman))
	want := []wfSpan{s(0, 2, wfWait), s(2, 5, wfServer), s(7, 10, wfServer), s(5, 7, wfHuman)}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("carve:\n got %v\nwant %v", got, want)
	}
}

// A flood of progress keeps at most maxProgressMarks marks, evenly spread
// over the whole call, and counts every step.
func TestProgressMarksThinned(t *testing.T) {
	mk := &callMarks{stride: 1}
	for i := 0; i < 1000; i++ {
		mk.addProgress(at(float64(i)))
	}
	n := len(mk.progress)
	if mk.nProgress != 1000 || n > maxProgressMarks || n < maxProgressMarks/2 {
		t.Fatalf("%d steps kept as %d marks", mk.nProgress, n)
	}
	gap := mk.progress[1].Sub(mk.progress[0])
	for i := 1; i < n; i++ {
		if mk.progress[i].Sub(mk.progress[i-1]) != gap {
			t.Fatalf("uneven marks at %d: %v", i, mk.progress[i].Sub(mk.progress[i-1]))
		}
	}
	if !mk.progress[0].Equal(at(0)) || at(999).Sub(mk.progress[n-1]) >= gap {
		t.Fatalf("marks should span the steps: first %v last %v gap %v", mk.progress[0], mk.progress[n-1], gap)
	}
}
