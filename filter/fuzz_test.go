package filter

import (
	"errors"
	"testing"
	"unicode/utf8"
)

// FuzzParse: any input either parses or fails with a *SyntaxError whose
// column lies within the input (or just past it); a parsed filter's String
// parses again, to itself, and to a filter that matches the same subjects.
// Nothing panics.
func FuzzParse(f *testing.F) {
	for _, tt := range matchTests {
		f.Add(tt.expr, "tools/call", []byte(`{"id":7}`))
	}
	for _, tt := range canonicalTests {
		f.Add(tt.in, "", []byte(nil))
	}
	for _, tt := range errorTests {
		f.Add(tt.in, "x", []byte("x"))
	}
	calls := 0
	var fixed []subject
	for _, s := range subjects() {
		if s.name != "big" { // 2 MB per exec would starve the fuzzer
			fixed = append(fixed, s)
		}
	}
	subs := materialise(fixed, &calls)
	f.Fuzz(func(t *testing.T, src, name string, content []byte) {
		fl, err := Parse(src)
		if err != nil {
			checkError(t, src, err)
			return
		}
		canon := fl.String()
		g, err := Parse(canon)
		if err != nil {
			t.Fatalf("%q: canonical %q does not parse: %v", src, canon, err)
		}
		if again := g.String(); again != canon {
			t.Fatalf("%q: canonical %q reads back as %q", src, canon, again)
		}
		if fl.NeedsContent() != g.NeedsContent() || fl.Volatile() != g.Volatile() {
			t.Fatalf("%q and %q differ in NeedsContent or Volatile", src, canon)
		}
		// One subject made of the fuzzer's own strings, so odd bytes meet odd filters.
		own := &Subject{Kind: name, Dir: name, Method: name, Tool: name, ID: name, State: name,
			Headers: map[string]string{name: string(content)}, Size: len(content),
			Content: func() []byte { return content }}
		for i, s := range append(subs, own) {
			if a, b := fl.Match(s), g.Match(s); a != b {
				t.Fatalf("%q matches subject %d: %v; its canonical %q: %v", src, i, a, canon, b)
			}
		}
	})
}

func checkError(t *testing.T, src string, err error) {
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("%q: %T is not a *SyntaxError", src, err)
	}
	if n := utf8.RuneCountInString(src); se.Col < 1 || se.Col > n+1 {
		t.Fatalf("%q: column %d outside [1, %d]", src, se.Col, n+1)
	}
	if se.Msg == "" || se.Input != src {
		t.Fatalf("%q: empty message or wrong input in %#v", src, se)
	}
	_ = se.Caret()
}
