// Package widget holds the small drawing and formatting pieces every view
// shares: fitting styled lines to a width, clamping, durations and sizes.
// It imports nothing of the UI, so any view may use it.
package widget

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// Block splits s into exactly h lines of at most w columns.
func Block(s string, w, h int) []string {
	ls := strings.Split(s, "\n")
	if len(ls) > h {
		ls = ls[:h]
	}
	for i := range ls {
		ls[i] = Fit(ls[i], w)
	}
	for len(ls) < h {
		ls = append(ls, "")
	}
	return ls
}

// Fit truncates a (possibly styled) line to w columns.
func Fit(s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// WrapLines breaks one (possibly styled) line into at most n lines of w
// columns, at spaces where it can; the last one ends in " …" when more
// remains, after its last whole word that leaves room for it. A line that
// needs no wrapping comes back as it is.
func WrapLines(s string, w, n int) []string {
	if w < 4 || strings.TrimSpace(s) == "" {
		return nil
	}
	ls := strings.Split(ansi.Hardwrap(ansi.Wrap(s, w, ""), w, true), "\n")
	if len(ls) > n {
		ls = ls[:n]
		last := ls[n-1]
		if ansi.StringWidth(last)+2 > w {
			cut := ansi.Truncate(last, w-2, "")
			if i := strings.LastIndexByte(cut, ' '); i > 0 {
				cut = cut[:i]
			}
			last = cut
		}
		ls[n-1] = Fit(strings.TrimRight(last, " ")+" …", w)
	}
	return ls
}

// Pad fits s to exactly w columns.
func Pad(s string, w int) string {
	s = Fit(s, w)
	if n := w - ansi.StringWidth(s); n > 0 {
		s += strings.Repeat(" ", n)
	}
	return s
}

// Clamp keeps v within [lo, hi]; lo when the range is empty.
func Clamp(v, lo, hi int) int {
	if hi < lo {
		return lo
	}
	return min(max(v, lo), hi)
}

// FirstNonEmpty is the first of s that is not "".
func FirstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// Shorten cuts s to n runes, the last one an ellipsis.
func Shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Num is a number with at most one decimal: 3, 2.5.
func Num(f float64) string {
	if f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', 1, 64)
}

// Dur is a duration in the UI's short form: 120ms, 4.0s, 3m05s, 2h10m.
func Dur(d time.Duration) string {
	switch {
	case d < time.Second:
		return strconv.Itoa(int(d/time.Millisecond)) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// Bytes is a size for people: 512 B, 1.5 KiB, 3.2 MiB.
func Bytes(n int) string {
	switch {
	case n < 1<<10:
		return strconv.Itoa(n) + " B"
	case n < 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}
