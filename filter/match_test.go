package filter

import (
	"strings"
	"testing"
	"time"
)

// subject is one named test subject; content becomes a lazy Content.
type subject struct {
	name    string
	s       Subject
	content string
}

func subjects() []subject {
	ms := time.Millisecond
	return []subject{
		{"init", Subject{Kind: "request", Dir: "out", Method: "initialize", ID: "0", State: "ok", Duration: 40 * ms,
			Headers: map[string]string{"Content-Type": "application/json", "MCP-Protocol-Version": "2025-06-18"}},
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientInfo":{"name":"mcpscope"}}}`},
		{"call", Subject{Kind: "request", Dir: "out", Method: "tools/call", Tool: "get_weather", ID: "7", State: "ok", Duration: 800 * ms},
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Paris"}}}`},
		{"result", Subject{Kind: "response", Dir: "in", Method: "tools/call", Tool: "get_weather", ID: "7", State: "ok", Duration: 800 * ms,
			Headers: map[string]string{"mcp-session-id": "abc123", "content-type": "text/event-stream"}},
			`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Sunny, 21°C"}]}}`},
		{"toolerr", Subject{Kind: "response", Dir: "in", Method: "tools/call", Tool: "get weather", ID: `"q1"`, State: "ok", IsError: true, Duration: 2 * time.Second},
			`{"jsonrpc":"2.0","id":"q1","result":{"isError":true,"content":[{"type":"text","text":"City not found"}]}}`},
		{"rpcerr", Subject{Kind: "response", Dir: "in", Method: "resources/read", Tool: "file:///tmp/a.txt", ID: "9", State: "error", IsError: true, Duration: 30 * ms},
			`{"jsonrpc":"2.0","id":9,"error":{"code":-32002,"message":"Resource not found"}}`},
		{"progress", Subject{Kind: "progress", Dir: "in", Method: "notifications/progress", Tool: "get_weather", State: "ok", Duration: 800 * ms},
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":50}}`},
		{"log", Subject{Kind: "log", Dir: "in", Method: "notifications/message"},
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","data":"slow disk"}}`},
		{"changed", Subject{Kind: "notification", Dir: "in", Method: "notifications/tools/list_changed"},
			`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`},
		{"slow", Subject{Kind: "request", Dir: "out", Method: "tools/call", Tool: "slow_task", ID: "12", State: "cancelled", Duration: 5 * time.Second},
			`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"slow_task"}}`},
		{"cancel", Subject{Kind: "notification", Dir: "out", Method: "notifications/cancelled", State: "cancelled"},
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12}}`},
		{"stderr", Subject{Kind: "stderr", Dir: "in"}, "Server listening on stdio"},
		{"garbage", Subject{Kind: "garbage", Dir: "in"}, "DEBUG: hello * world"},
		{"event", Subject{Kind: "event", Dir: "local", Method: "stream-dropped"}, ""},
		{"big", Subject{Kind: "response", Dir: "in", Method: "resources/read", Tool: "file:///big.bin", ID: "11", State: "late", Duration: 1500 * ms},
			`{"jsonrpc":"2.0","id":11,"result":{"contents":[{"blob":"` + strings.Repeat("QUJD", 500_000) + `"}]}}`},
		{"search", Subject{Kind: "request", Dir: "out", Method: "tools/call", Tool: "Search", ID: "13", State: "pending"},
			`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"Search","arguments":{"q":"café"}}}`},
	}
}

// materialise fills Size and Content; calls counts Content calls.
func materialise(in []subject, calls *int) []*Subject {
	out := make([]*Subject, len(in))
	for i, x := range in {
		s := x.s
		s.Size = len(x.content)
		if x.content != "" {
			b := []byte(x.content)
			s.Content = func() []byte { *calls++; return b }
		}
		out[i] = &s
	}
	return out
}

// matchTests: each expression and the subjects it matches, in order.
var matchTests = []struct{ expr, want string }{
	{"", "init call result toolerr rpcerr progress log changed slow cancel stderr garbage event big search"},
	// ~m: whole-name globs, smart case
	{"~m tools/call", "call result toolerr slow search"},
	{"~m tools", ""},
	{"~m notifications/*", "progress log changed cancel"},
	{"~m notifications/?????", ""},
	{"~m notifications/???????", "log"},
	{"~m Tools/call", ""},
	{"~m TOOLS/*", ""},
	{"~m /^resources\\//", "rpcerr big"},
	{"~m /CALL/", ""},
	{"~m /(?i)CALL/", "call result toolerr slow search"},
	{"~m stream-*", "event"},
	// ~t
	{"~t get_weather", "call result progress"},
	{"~t 'get weather'", "toolerr"},
	{"~t get?weather", "call result toolerr progress"},
	{"~t search", "search"},
	{"~t Search", "search"},
	{"~t SEARCH", ""},
	{"~t file:///*", "rpcerr big"},
	{"~t *.txt", "rpcerr"},
	// ~k, notifications include progress and log
	{"~k request", "init call slow search"},
	{"~k response", "result toolerr rpcerr big"},
	{"~k notification", "progress log changed cancel"},
	{"~k notification & !~m notifications/progress", "log changed cancel"},
	{"~k progress", "progress"},
	{"~k LOG", "log"},
	{"~k stderr | ~k garbage", "stderr garbage"},
	{"~k event", "event"},
	// ~e, ~s
	{"~e", "toolerr rpcerr"},
	{"~e | ~s cancelled", "toolerr rpcerr slow cancel"},
	{"~s late", "big"},
	{"~s pending", "search"},
	{"~s ok & ~k request", "init call"},
	// ~d
	{"~d out", "init call slow cancel search"},
	{"~d local", "event"},
	{"!~d in", "init call slow cancel event search"},
	// ~id: canonical text, or a string id without its quotes
	{"~id 7", "call result"},
	{"~id q1", "toolerr"},
	{`~id '"q1"'`, "toolerr"},
	{"~id 1?", "slow big search"},
	{"~id 1*", "slow big search"},
	// ~dur, ~size
	{"~dur >500ms", "call result toolerr progress slow big"},
	{"~dur > 500ms", "call result toolerr progress slow big"},
	{"~dur 2s", "toolerr slow"},
	{"~dur <100ms", "init rpcerr"},
	{"~dur <=30ms", "rpcerr"},
	{"~dur =1.5s", "big"},
	{"~dur >1m", ""},
	{"~size >1MB", "big"},
	{"~size <30", "stderr garbage event"},
	{"~size =0", "event"},
	{"~size >=25B & ~size <=26b", "stderr"},
	{"~m tools/call & ~dur >500ms", "call result toolerr slow"},
	// ~c and bare text: substrings with smart case, or regexes
	{"~c paris", "call"},
	{"~c Paris", "call"},
	{"~c PARIS", ""},
	{"~c '\"isError\":true'", "toolerr"},
	{`~c "DEBUG: hello \* world"`, ""},
	{`~c "hello * world"`, "garbage"},
	{"~c café", "search"},
	{"~c CAFÉ", ""},
	{"~c /\"code\":-32\\d{3}/", "rpcerr"},
	{"~c ''", "init call result toolerr rpcerr progress log changed slow cancel stderr garbage event big search"},
	{"weather", "call result toolerr progress"},
	{"\"needle\"", ""},
	{"warning", "log"},
	{"stdio", "stderr"},
	{"/^Server/", "stderr"},
	{"dropped", "event"},
	{"QUJDQUJD", "big"},
	{"ABC", ""},
	// ~h: names always case-insensitive, values smart case
	{"~h mcp-session-id", "result"},
	{"~h MCP-SESSION-ID", "result"},
	{"~h mcp-*", "init result"},
	{"~h mcp-session-id=abc*", "result"},
	{"~h mcp-session-id=ABC*", ""},
	{"~h content-type=application/json", "init"},
	{"~h content-type=*stream", "result"},
	{"~h x-none", ""},
	// operators and precedence: ! > & > |
	{"~k request ~e", ""},
	{"~k response ~e", "toolerr rpcerr"},
	{"~k response & ~e | ~s cancelled", "toolerr rpcerr slow cancel"},
	{"~k response & (~e | ~s late)", "toolerr rpcerr big"},
	{"!~k request & !~k response & ~d out", "cancel"},
	{"!(~k request | ~k response) & ~d out", "cancel"},
	{"!!~e", "toolerr rpcerr"},
	{"~t get_weather | ~t Search ~s pending", "call result progress search"},
}

func TestMatch(t *testing.T) {
	subs := subjects()
	calls := 0
	all := materialise(subs, &calls)
	for _, tt := range matchTests {
		f, err := Parse(tt.expr)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.expr, err)
			continue
		}
		var got []string
		for i, s := range all {
			if f.Match(s) {
				got = append(got, subs[i].name)
			}
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("%q matches %q, want %q", tt.expr, g, tt.want)
		}
	}
}

// TestContentLoads: content is read only when needed, and once per Match.
func TestContentLoads(t *testing.T) {
	tests := []struct {
		expr  string
		needs bool
		max   int // Content calls over all subjects
	}{
		{"~m tools/call & ~e", false, 0},
		{"~c ''", false, 0},
		{"~c paris", true, 14},
		{"~c a & ~c b | ~c c | d", true, 14},
		{"~c paris & ~k stderr", true, 1},     // the cheap term runs first
		{"~k stderr & ~c paris", true, 1},     // whichever order it is written in
		{"~m tools/call | weather", true, 10}, // bare text tries names before content
	}
	for _, tt := range tests {
		f, err := Parse(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		if f.NeedsContent() != tt.needs {
			t.Errorf("%q: NeedsContent = %v", tt.expr, !tt.needs)
		}
		calls := 0
		for _, s := range materialise(subjects(), &calls) {
			f.Match(s)
		}
		if calls > tt.max {
			t.Errorf("%q: Content called %d times, want at most %d", tt.expr, calls, tt.max)
		}
	}
}

func TestVolatile(t *testing.T) {
	for expr, want := range map[string]bool{
		"":                     false,
		"~m tools/call":        false,
		"~m tools/call ~e":     true,
		"!(~c x | ~s pending)": true,
		"~dur >1s":             true,
		"~size >1s":            false,
	} {
		f, err := Parse(expr)
		if err != nil {
			if expr == "~size >1s" {
				continue
			}
			t.Fatal(err)
		}
		if f.Volatile() != want {
			t.Errorf("%q: Volatile = %v", expr, !want)
		}
	}
}

func TestNilFilterAndSubject(t *testing.T) {
	var f *Filter
	if !f.Match(&Subject{}) || f.NeedsContent() || f.Volatile() || f.String() != "" {
		t.Error("a nil filter should match everything and need nothing")
	}
	g, _ := Parse("!~e & !x")
	if !g.Match(nil) {
		t.Error("a nil subject should be the zero subject")
	}
}

// TestMatchAllocs: field terms, globs and content search allocate nothing.
func TestMatchAllocs(t *testing.T) {
	calls := 0
	subs := materialise(subjects(), &calls)
	for _, expr := range []string{
		"~m tools/call & ~dur >500ms",
		"~k notification & !~m notifications/progress",
		"~e | ~s cancelled",
		"~t 'get weather' | ~t get_* | ~id q?",
		"~h mcp-session-id=abc*",
		"weather | ~c PARIS | ~c café | ~c ſ",
	} {
		f, err := Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(20, func() {
			for _, s := range subs {
				f.Match(s)
			}
		})
		if allocs != 0 {
			t.Errorf("%q: %v allocations per run", expr, allocs)
		}
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		glob, name string
		want       bool
	}{
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"*", "tools/call", true},
		{"tools/*", "tools/call", true},
		{"tools/*", "tools/", true},
		{"tools/*", "tools", false},
		{"*/call", "tools/call", true},
		{"*o*o*", "tools/call", true},
		{"*o*o*o*", "tools/call", false},
		{"t?ols/call", "tools/call", true},
		{"t?ols/call", "tols/call", false},
		{"?", "é", true},
		{"caf?", "café", true},
		{`a\*`, "a*", true},
		{`a\*`, "ab", false},
		{`a\?`, "a?", true},
		{`a\?`, "ab", false},
		{`a\\`, `a\`, true},
		{`a\`, `a\`, true},
		{`a\b`, "ab", true},
		{"search", "SEARCH", true},
		{"Search", "search", false},
		{"s*h", "SEARCH", true},
		{"S*h", "SEARCH", false},
		{"CAFÉ", "café", false},
		{"café", "CAFÉ", true},
		{"caf*", "CAFÉ", true},
		{"ſ", "S", true},
		{"k", "\u212a", true}, // the Kelvin sign
		{"*a*a*a*a*a*a*b", strings.Repeat("a", 200), false},
	}
	for _, tt := range tests {
		if got := newGlob(tt.glob, false).name(tt.name); got != tt.want {
			t.Errorf("glob %q on %q = %v", tt.glob, tt.name, got)
		}
	}
}

func TestText(t *testing.T) {
	tests := []struct {
		text, in string
		want     bool
	}{
		{"", "", true},
		{"needle", "haystack with a Needle in it", true},
		{"Needle", "haystack with a needle in it", false},
		{"needle", "needl", false},
		{"ne", "n", false},
		{"straße", "STRASSE", false}, // simple folding: ß is not ss
		{"straße", "Straße", true},
		{"ſun", "SUN", true},
		{"kelvin", "\u212aELVIN", true},
		{"\u212a", "k", false}, // the Kelvin sign is upper-case: exact
		{"é", "CAFÉ", true},
		{"\xff", "a\xffb", true}, // broken UTF-8 matches its bytes
		{"\xff", "a\xfeb", false},
		{"a*b", "a*b", true},
		{"a*b", "axb", false},
	}
	for _, tt := range tests {
		p := newText(tt.text)
		if got := p.inString(tt.in); got != tt.want {
			t.Errorf("text %q in %q = %v", tt.text, tt.in, got)
		}
		if got := p.inBytes([]byte(tt.in)); got != tt.want {
			t.Errorf("text %q in []byte %q = %v", tt.text, tt.in, got)
		}
	}
}
