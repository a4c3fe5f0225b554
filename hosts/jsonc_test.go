package hosts

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// JSONC reads as the JSON it means, at the same offsets; comment markers
// inside strings are text.
func TestBlank(t *testing.T) {
	src := "\xef\xbb\xbf// head\n{\n  \"a\": \"x // not a comment /* nor this */\", /* gone */\n  \"b\": [1, 2, /* two */ ],\n  \"c\": \"q\\\"//\", // tail\n}\n"
	b, err := blank([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != len(src) || strings.Count(string(b), "\n") != strings.Count(src, "\n") {
		t.Fatalf("blank changed offsets or lines:\n%q\n%q", src, b)
	}
	var got any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("not JSON after blank: %v\n%s", err, b)
	}
	want := map[string]any{"a": "x // not a comment /* nor this */", "b": []any{1.0, 2.0}, "c": `q"//`}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
}

func TestParseJSONCErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"{\n  \"a\": 1\n  \"b\": 2\n}", "line 3 column 3"},
		{"{\"a\": 1} /* open", "line 1 column 10: a /* comment never ends"},
		{"{\"a\": }", "line 1 column 7"},
		{"", "line 1 column 1"},
	} {
		_, err := parseJSONC([]byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one with %q", c.src, err, c.want)
		}
	}
}

// The tree's spans are the values as written, comments inside included.
func TestTreeSpans(t *testing.T) {
	src := `{"s": {"x": {"command": "a", /* c */ "args": ["b", "c",]}}, "n": -1.5e3, "t": true}`
	p, err := parseJSONC([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	x := p.root.at([]string{"s", "x"})
	if got := src[x.start:x.end]; got != `{"command": "a", /* c */ "args": ["b", "c",]}` {
		t.Fatalf("entry span %q", got)
	}
	args := x.get("args")
	if len(args.elems) != 2 || src[args.elems[1].start:args.elems[1].end] != `"c"` {
		t.Fatalf("args %+v", args)
	}
	if n := p.root.get("n"); src[n.start:n.end] != "-1.5e3" {
		t.Fatalf("number span %q", src[n.start:n.end])
	}
	if p.root.at([]string{"s", "missing", "x"}) != nil {
		t.Fatal("a missing key found something")
	}
}
