package filter

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// canonicalTests: inputs and their canonical form.
var canonicalTests = []struct{ in, want string }{
	{"", ""},
	{"   \t ", ""},
	{"~e", "~e"},
	{"~m tools/call ~e", "~m tools/call & ~e"},
	{"~m tools/call&~e", "~m tools/call & ~e"},
	{"a b | c", "a & b | c"},
	{"a | b c", "a | b & c"},
	{"(a | b) c", "(a | b) & c"},
	{"a & (b & c)", "a & b & c"},
	{"(a | b) | (c | d)", "a | b | c | d"},
	{"((a))", "a"},
	{"!a", "!a"},
	{"! a", "!a"},
	{"!!a", "!!a"},
	{"!(a b)", "!(a & b)"},
	{"!(a | b) | c", "!(a | b) | c"},
	{"!~m x", "!~m x"},
	// values: quoting, escapes, regexes
	{"~t 'get weather'", `~t "get weather"`},
	{`~t "say \"hi\""`, `~t "say \"hi\""`},
	{`~t 'it\'s'`, `~t "it's"`},
	{`~c "a\nb\tc"`, `~c "a\nb\tc"`},
	{`~m "\*"`, `~m \*`},
	{`~m a\*b`, `~m a\*b`},
	{`~c "\u00e9"`, `~c \u00e9`},
	{`~c "back\\slash"`, `~c back\slash`},
	{`"~m"`, `"~m"`},
	{`"!x"`, `"!x"`},
	{`"/x/"`, `"/x/"`},
	{`"a|b"`, `"a|b"`},
	{`""`, `""`},
	{"don't", `"don't"`},
	{"a!b", "a!b"},
	{"x~y", "x~y"},
	{"/a b/", "/a b/"},
	{`/a\/b/`, `/a\/b/`},
	{`/a\\/`, `/a\\/`},
	{`/\d+/`, `/\d+/`},
	{"~m /^tools\\//", `~m /^tools\//`},
	{"~dur>1s", "~dur >1s"},
	{"~m\"x y\"", `~m "x y"`},
	// keywords are case-insensitive and written lower-case
	{"~k Request", "~k request"},
	{"~s CANCELLED", "~s cancelled"},
	{"~d Out", "~d out"},
	// quantities: operator optional (>=), apart or attached, units normalised
	{"~dur 2s", "~dur >=2s"},
	{"~dur > 500ms", "~dur >500ms"},
	{"~dur <=1.5s", "~dur <=1500ms"},
	{"~dur =90s", "~dur =90s"},
	{"~dur >120s", "~dur >2m"},
	{"~dur <1h", "~dur <1h"},
	{"~dur >250us", "~dur >250us"},
	{"~dur >250µs", "~dur >250us"},
	{"~dur >7ns", "~dur >7ns"},
	{"~dur >0.5MS", "~dur >500us"},
	{"~size >1MB", "~size >1MB"},
	{"~size >1mb", "~size >1MB"},
	{"~size >1024", "~size >1KiB"},
	{"~size >1.5KB", "~size >1500B"},
	{"~size >1.5MiB", "~size >1536KiB"},
	{"~size <2GiB", "~size <2GiB"},
	{"~size =0", "~size =0B"},
	{"~size >9223372036854775807", "~size >9223372036854775807B"},
	// headers
	{"~h mcp-session-id", "~h mcp-session-id"},
	{"~h Mcp-Session-Id=abc*", "~h Mcp-Session-Id=abc*"},
	{"~h 'x-note=a b'", `~h "x-note=a b"`},
	{"~h x=", "~h x="},
	{"~h x=a=b", "~h x=a=b"},
}

func TestParseCanonical(t *testing.T) {
	for _, tt := range canonicalTests {
		f, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		got := f.String()
		if got != tt.want {
			t.Errorf("Parse(%q).String() = %s, want %s", tt.in, got, tt.want)
			continue
		}
		g, err := Parse(got)
		if err != nil || g.String() != got {
			t.Errorf("canonical %s does not read back: %v %v", got, g, err)
		}
	}
}

// errorTests: bad inputs, the column and the message.
var errorTests = []struct {
	in  string
	col int
	msg string
}{
	{"~m", 3, "expected a method after ~m"},
	{"~m ", 4, "expected a method after ~m"},
	{"~m tools/call & ~t", 19, "expected a tool, prompt or resource name after ~t"},
	{"~m ~e", 4, "expected a method after ~m"},
	{"~m (x)", 4, "expected a method after ~m"},
	{"~m !x", 4, "expected a method after ~m"},
	{"~q x", 1, "unknown filter ~q (there are ~m ~t ~k ~e ~s ~d ~id ~dur ~size ~c ~h)"},
	{"a & ~mtools/call", 5, "unknown filter ~mtools (there are ~m ~t ~k ~e ~s ~d ~id ~dur ~size ~c ~h)"},
	{"~", 1, "expected a filter name after ~"},
	{"a ~ b", 3, "expected a filter name after ~"},
	{"~1", 1, "expected a filter name after ~"},
	{"&", 1, "expected a filter before &"},
	{"| a", 1, "expected a filter before |"},
	{"a &", 4, "expected a filter after &"},
	{"a && b", 4, "expected a filter after &"},
	{"a | | b", 5, "expected a filter after |"},
	{"a |", 4, "expected a filter after |"},
	{"a & | b", 5, "expected a filter after &"},
	{"!", 2, "expected a filter after !"},
	{"a !", 4, "expected a filter after !"},
	{"!)", 2, "expected a filter after !"},
	{"()", 2, "expected a filter after ("},
	{"( ", 3, "expected a filter after ("},
	{"(a", 1, "unclosed (: no ) matches it"},
	{"a & (b | (c)", 5, "unclosed (: no ) matches it"},
	{")", 1, "unexpected ): there is no ( to close"},
	{"a)", 2, "unexpected ): there is no ( to close"},
	{"(a))", 4, "unexpected ): there is no ( to close"},
	{`"abc`, 1, `unclosed " quote`},
	{`a 'b\'`, 3, `unclosed ' quote`},
	{`"a\"`, 1, `unclosed " quote`},
	{"/abc", 1, "unclosed /regex/: no closing /"},
	{`/a\/`, 1, "unclosed /regex/: no closing /"},
	{"~c /a(/", 4, "bad regex /a(/: missing closing )"},
	{`~m /\q/`, 4, `bad regex /\q/: invalid escape sequence`},
	{"x /*/", 3, "bad regex /*/: missing argument to repetition operator"},
	{"~k foo", 4, `~k takes one of request, response, notification, progress, log, stderr, garbage, event, not "foo"`},
	{"~k /req/", 4, `~k takes one of request, response, notification, progress, log, stderr, garbage, event, not /req/`},
	{"~s canceled", 4, `~s takes one of ok, error, cancelled, late, lost, detached, pending, streaming, input, not "canceled"`},
	{"~d up", 4, `~d takes one of in, out, local, not "up"`},
	{"~dur 5", 6, `bad duration "5": needs a unit (h, m, s, ms, us, ns)`},
	{"~dur >5x", 6, `bad duration ">5x": unknown unit "x" (use h, m, s, ms, us, ns)`},
	{"~dur fast", 6, `bad duration "fast": expected a number, as in >500ms or <1MB`},
	{"~dur -1s", 6, `bad duration "-1s": expected a number, as in >500ms or <1MB`},
	{"~dur .5s", 6, `bad duration ".5s": expected a number, as in >500ms or <1MB`},
	{"~dur 1.s", 6, `bad duration "1.s": expected a number, as in >500ms or <1MB`},
	{"~dur 0.5ns", 6, `bad duration "0.5ns": not a whole number of ns`},
	{"~dur >", 6, `bad duration ">": expected a number, as in >500ms or <1MB`},
	{"~dur > (", 6, `bad duration ">": expected a number, as in >500ms or <1MB`},
	{"~dur /1s/", 6, "~dur takes a duration such as >500ms, not a /regex/"},
	{"~size >1TB", 7, `bad size ">1TB": unknown unit "TB" (use GiB, GB, MiB, MB, KiB, KB, B)`},
	{"~size 0.5", 7, `bad size "0.5": not a whole number of B`},
	{"~size 9223372036854775808", 7, `bad size "9223372036854775808": too large`},
	{"~size 10000000000GB", 7, `bad size "10000000000GB": too large`},
	{"~h =x", 4, "expected a header name before ="},
	{"~h /x/", 4, "~h takes a header name glob, not a /regex/"},
	// columns count characters, not bytes
	{"~c é & ~q", 8, "unknown filter ~q (there are ~m ~t ~k ~e ~s ~d ~id ~dur ~size ~c ~h)"},
	{"héllo &", 8, "expected a filter after &"},
}

func TestParseErrors(t *testing.T) {
	for _, tt := range errorTests {
		_, err := Parse(tt.in)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v, want a *SyntaxError", tt.in, err)
			continue
		}
		if se.Col != tt.col || se.Msg != tt.msg {
			t.Errorf("Parse(%q):\n got column %d: %s\nwant column %d: %s", tt.in, se.Col, se.Msg, tt.col, tt.msg)
		}
	}
}

// TestNestingLimit: maxDepth levels of ( and ! parse; one more is an error
// at the token that goes too deep, not a stack overflow.
func TestNestingLimit(t *testing.T) {
	open, closed := strings.Repeat("(", maxDepth), strings.Repeat(")", maxDepth)
	if _, err := Parse(open + "a" + closed); err != nil {
		t.Errorf("%d levels: %v", maxDepth, err)
	}
	_, err := Parse("!" + open + "a" + closed)
	want := fmt.Sprintf("column %d: nested too deeply (more than %d levels of ( and !)", maxDepth+1, maxDepth)
	if err == nil || err.Error() != want {
		t.Errorf("%d levels: %v, want %s", maxDepth+1, err, want)
	}
	if _, err := Parse(strings.Repeat("!", 1_000_000) + "a"); err == nil {
		t.Error("a million ! parsed")
	}
}

func TestSyntaxErrorText(t *testing.T) {
	_, err := Parse("~m tools/call & (~e\t| ~x)")
	if err.Error() != "column 23: unknown filter ~x (there are ~m ~t ~k ~e ~s ~d ~id ~dur ~size ~c ~h)" {
		t.Errorf("Error() = %q", err.Error())
	}
	want := "~m tools/call & (~e | ~x)\n" +
		"                      ^"
	if got := err.(*SyntaxError).Caret(); got != want {
		t.Errorf("Caret() =\n%s\nwant\n%s", got, want)
	}
}
