package detail

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"mcpscope/framestore"
	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/testkit/journaltest"
	"mcpscope/themes"
	"mcpscope/transport"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
	"mcpscope/ui/widget/pager"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeSession is the detail's Session over a loaded journal; it records
// the intents the detail sends.
type fakeSession struct {
	s         *session.Session
	stdio     bool
	steps     []int
	cancelled int
}

func (f *fakeSession) Store() *framestore.Store                 { return f.s.Store() }
func (f *fakeSession) Lookup(key string) *session.Call          { return f.s.Lookup(key) }
func (f *fakeSession) RoundRoot(sn session.CallSnapshot) string { return sn.Key }
func (f *fakeSession) Progress(session.CallSnapshot) string     { return "" }
func (f *fakeSession) OutputSchema(string) json.RawMessage      { return nil }
func (f *fakeSession) Area() (int, int)                         { return 80, 24 }
func (f *fakeSession) Stdio() bool                              { return f.stdio }
func (f *fakeSession) Save(string, string, []byte) view.Action  { return view.Flash("saved") }
func (f *fakeSession) Cancel(*session.Call) view.Action         { f.cancelled++; return view.Action{} }
func (f *fakeSession) Step(_ From, k int) (*session.Call, *framestore.Item) {
	f.steps = append(f.steps, k)
	return nil, nil
}

// load writes frames as a journal and loads them back, as `mcpscope
// journal` does.
func load(t *testing.T, frames ...transport.Frame) *session.Session {
	t.Helper()
	s, _, err := session.Load(journaltest.Write(t, "j.jsonl", journal.Header{Started: t0, Target: "stdio: demo"}, frames...))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func frame(sec float64, dir transport.Dir, data string) transport.Frame {
	return transport.Frame{Time: t0.Add(time.Duration(sec * float64(time.Second))), Dir: dir, Kind: transport.Message, Data: []byte(data)}
}

const hostile = `\u001b]52;c;cHduZWQ=\u0007\u001b[2J`

func ctx(w, h int) view.Context {
	th := themes.Plain()
	return view.Context{Theme: th, Keys: keys.New(append(Keys.Bindings, SearchKeys.Bindings...)), Width: w, Height: h,
		Now: func() time.Time { return t0.Add(time.Minute) }, Location: time.UTC,
		JSONRows: func(raw []byte, w int, indent string) []string { return pager.JSONRows(th, raw, w, indent) }}
}

func callDetail(t *testing.T, from From) (*View, *fakeSession) {
	t.Helper()
	s := load(t,
		frame(1, transport.Out, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi`+hostile+`"}}}`),
		frame(2, transport.In, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"pwned`+hostile+` done"}]}}`),
	)
	calls := s.Calls()
	if len(calls) != 1 {
		t.Fatalf("%d calls in the journal", len(calls))
	}
	f := &fakeSession{s: s, stdio: true}
	return New(ctx(80, 24), f, Target{Call: calls[0], Tab: 1, From: from}), f
}

func raw(s string) bool {
	return strings.Contains(s, "\x1b]") || strings.Contains(s, "\x1b[2J") || strings.Contains(s, "\x07")
}

// The response tab draws the result's text inert, every tab fits the
// width, at every size, and a stdio call has no http tab.
func TestRenderInertAndFits(t *testing.T) {
	v, _ := callDetail(t, FromRequests)
	if v.TabName() != "response" {
		t.Errorf("tab %q, want the response", v.TabName())
	}
	var names []string
	for range 10 {
		names = append(names, v.TabName())
		v.Key(ctx(80, 24), "tab-next", keys.Parse("tab"))
	}
	if strings.Contains(strings.Join(names, " "), "http") {
		t.Errorf("a stdio call has an http tab: %v", names)
	}
	for _, w := range []int{4, 20, 60, 80, 200} {
		for _, h := range []int{3, 6, 24} {
			for range len(v.tabs) {
				v.Key(ctx(w, h), "tab-next", keys.Parse("tab"))
				r := v.Render(ctx(w, h), w, h)
				if raw(r) {
					t.Fatalf("tab %s at %dx%d: a raw escape: %q", v.TabName(), w, h, r)
				}
				if w < 20 {
					continue
				}
				for _, l := range strings.Split(r, "\n") {
					if lw := ansi.StringWidth(l); lw > w {
						t.Errorf("tab %s at %dx%d: a line %d wide: %q", v.TabName(), w, h, lw, l)
					}
				}
			}
		}
	}
	for v.TabName() != "response" {
		v.Key(ctx(80, 24), "tab-next", keys.Parse("tab"))
	}
	out := ansi.Strip(v.Render(ctx(80, 24), 80, 24))
	if !strings.Contains(out, "pwned␛]52;c;cHduZWQ=␇␛[2J done") {
		t.Errorf("the result's text is not drawn inert:\n%s", out)
	}
}

// The bindings that cannot run say why; pressed, they flash it and do
// nothing; ] and [ ask the list the detail came from.
func TestDisabledAndKeys(t *testing.T) {
	v, f := callDetail(t, FromNone)
	c := ctx(80, 24)
	if why := v.Disabled(c, "search-next"); !strings.HasPrefix(why, "nothing searched yet") {
		t.Errorf("search-next: %q", why)
	}
	if why := v.Disabled(c, "scroll-left"); !strings.HasPrefix(why, "lines wrap") {
		t.Errorf("scroll-left while wrapping: %q", why)
	}
	v.Key(c, "wrap", keys.Parse("w"))
	if why := v.Disabled(c, "scroll-left"); why != "" {
		t.Errorf("scroll-left without wrap: %q", why)
	}
	if why := v.Disabled(c, "next-item"); !strings.Contains(why, "move in the requests and notifications panes") {
		t.Errorf("next-item opened from no list: %q", why)
	}
	if a := v.Key(c, "next-item", keys.Parse("]")); !strings.Contains(a.Flash, "move in the requests") || len(f.steps) != 0 {
		t.Errorf("next-item disabled: %+v, steps %v", a, f.steps)
	}
	v.from = FromRequests
	v.Key(c, "next-item", keys.Parse("]"))
	v.Key(c, "prev-item", keys.Parse("["))
	if len(f.steps) != 2 || f.steps[0] != 1 || f.steps[1] != -1 {
		t.Errorf("steps %v, want [1 -1]", f.steps)
	}
	if why := v.Disabled(c, "result-view"); why != "" {
		t.Errorf("a tool result has a rendered view: %q", why)
	}
	if a := v.Key(c, "copy", keys.Parse("c")); a.Copy == nil || !strings.Contains(a.Copy.Text, "pwned") {
		t.Errorf("copy on the response: %+v", a)
	}
	if a := v.Key(c, "detail-close", keys.Parse("esc")); !a.Close {
		t.Errorf("esc: %+v", a)
	}
}

// A search is typed into the detail's own line, drawn inert, and run
// with enter; n then moves between matches.
func TestSearch(t *testing.T) {
	v, _ := callDetail(t, FromRequests)
	c := ctx(80, 24)
	v.Key(c, "search", keys.Parse("/"))
	if v.Scope() != keys.Search {
		t.Fatalf("scope %q while searching", v.Scope())
	}
	for _, r := range "pwned\x1b" {
		v.Key(c, "", keys.Parse(string(r)))
	}
	if out := v.Render(c, 80, 24); strings.Contains(out, "\x1b]") {
		t.Errorf("the search line draws a raw escape: %q", out)
	}
	v.Key(c, "search-backspace", keys.Parse("backspace"))
	v.Key(c, "search-run", keys.Parse("enter"))
	if v.Scope() != Scope {
		t.Fatalf("scope %q after enter", v.Scope())
	}
	if why := v.Disabled(c, "search-next"); why != "" {
		t.Errorf("search-next after a search: %q", why)
	}
	if out := ansi.Strip(v.Render(c, 80, 24)); !strings.Contains(out, "/pwned: ") {
		t.Errorf("the status line does not name the search:\n%s", out)
	}
}
