package filter

import (
	"fmt"
	"testing"
)

// benchFilters are one of each kind of term, field terms first.
var benchFilters = []string{
	"~e",
	"~m tools/call & ~dur >500ms",
	"~k notification & !~m notifications/progress",
	"~t 'get weather' | ~t get_* | ~id q?",
	"~h mcp-session-id=abc*",
	"~m /^resources\\//",
	"~k request & ~c paris",
	"paris",
	"~c Paris",
	"~c /Pa.is/",
	"~c café",
}

// BenchmarkMatch: ns/op is one Match over the small test frames (about
// 100 bytes each), in turn.
func BenchmarkMatch(b *testing.B) {
	calls := 0
	var small []subject
	for _, s := range subjects() {
		if s.name != "big" {
			small = append(small, s)
		}
	}
	subs := materialise(small, &calls)
	for _, expr := range benchFilters {
		f := mustParse(b, expr)
		b.Run(fmt.Sprintf("%q", expr), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				f.Match(subs[i%len(subs)])
			}
		})
	}
}

// BenchmarkMatch2MB: content search through a 2 MB frame with no match,
// the worst case; MB/s is the search speed.
func BenchmarkMatch2MB(b *testing.B) {
	calls := 0
	var big []subject
	for _, s := range subjects() {
		if s.name == "big" {
			big = append(big, s)
		}
	}
	s := materialise(big, &calls)[0]
	for _, expr := range []string{"paris", "~c Paris", "~c /Pa.is/", "~c café"} {
		f := mustParse(b, expr)
		b.Run(fmt.Sprintf("%q", expr), func(b *testing.B) {
			b.SetBytes(int64(s.Size))
			for b.Loop() {
				f.Match(s)
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		mustParse(b, `~m tools/call & (~e | ~s cancelled) & ~dur >500ms & !"needle"`)
	}
}

func mustParse(b *testing.B, expr string) *Filter {
	f, err := Parse(expr)
	if err != nil {
		b.Fatal(err)
	}
	return f
}
