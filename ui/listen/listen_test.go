package listen

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/testkit/journaltest"
	"mcpscope/themes"
	"mcpscope/transport"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeSession is the view's Session over the listen calls of a loaded
// journal; it records the intents the view sends.
type fakeSession struct {
	streams []*session.Call
	notes   map[string]int
	last    string
	whyNo   string
	sent    []string
}

func (f *fakeSession) Streams() []*session.Call       { return f.streams }
func (f *fakeSession) Notes(key string) (int, string) { return f.notes[key], f.last }
func (f *fakeSession) WhyNoNew() string               { return f.whyNo }
func (f *fakeSession) New() view.Action               { f.sent = append(f.sent, "new"); return view.Action{} }
func (f *fakeSession) Open(c *session.Call) view.Action {
	f.sent = append(f.sent, "open "+c.Key)
	return view.Action{}
}
func (f *fakeSession) Close(c *session.Call) view.Action {
	f.sent = append(f.sent, "close "+c.Key)
	return view.Action{}
}

const hostile = `\u001b]52;c;cHduZWQ=\u0007\u001b[2J`

func raw(s string) bool {
	return strings.Contains(s, "\x1b]") || strings.Contains(s, "\x1b[2J") || strings.Contains(s, "\x07")
}

func ctx() view.Context { return view.Context{Theme: themes.Plain(), Keys: keys.New(Keys.Bindings)} }

// streams loads two listen calls: one acknowledged in part, one the
// server refused.
func streams(t *testing.T) *fakeSession {
	t.Helper()
	msg := func(sec float64, dir transport.Dir, data string) transport.Frame {
		return transport.Frame{Time: t0.Add(time.Duration(sec * float64(time.Second))), Dir: dir, Kind: transport.Message, Data: []byte(data)}
	}
	frames := []transport.Frame{
		msg(1, transport.Out, `{"jsonrpc":"2.0","id":5,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["file:///x`+hostile+`"]}}}`),
		msg(2, transport.In, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":5},"notifications":{"toolsListChanged":true}}}`),
		msg(3, transport.Out, `{"jsonrpc":"2.0","id":6,"method":"subscriptions/listen","params":{"notifications":{"taskIds":["t`+hostile+`"]}}}`),
		msg(4, transport.In, `{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"no`+hostile+`"}}`),
	}
	s, _, err := session.Load(journaltest.Write(t, "j.jsonl", journal.Header{Started: t0, Target: "http: http://127.0.0.1:9/mcp"}, frames...))
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSession{notes: map[string]int{}, last: "notifications/tools/list_changed" + "\x1b]0;x\x07"}
	for _, c := range s.Calls() {
		if c.Method == Method {
			f.streams = append(f.streams, c)
		}
	}
	if len(f.streams) != 2 {
		t.Fatalf("%d listen calls in the journal", len(f.streams))
	}
	f.notes[f.streams[0].Key] = 3
	return f
}

// What a stream asked for, what was acknowledged and what was not, the
// refusal and the last notification are drawn inert.
func TestRender(t *testing.T) {
	f := streams(t)
	v := New(f)
	for _, w := range []int{0, 10, 80, 200} {
		for _, h := range []int{0, 1, 24} {
			if out := v.Render(ctx(), w, h); raw(out) {
				t.Fatalf("at %dx%d: a raw escape: %q", w, h, out)
			}
		}
	}
	out := ansi.Strip(v.Render(ctx(), 120, 24))
	for _, want := range []string{"1 open, 2 in all", "▸ #6     error", "task t␛]52;c;cHduZWQ=␇␛[2J", "ended", "no␛]52;c;cHduZWQ=␇␛[2J"} {
		if !strings.Contains(out, want) {
			t.Errorf("selected the refused one: no %q in:\n%s", want, out)
		}
	}
	v.Key(ctx(), "up", keys.Parse("up"))
	out = ansi.Strip(v.Render(ctx(), 120, 24))
	for _, want := range []string{" partial ", "3 notification(s), last notifications/tools/list_changed␛]0;x␇",
		" acknowledged  tools", " not acked     uri file:///x␛]52;c;cHduZWQ=␇␛[2J — the server will not send these"} {
		if !strings.Contains(out, want) {
			t.Errorf("selected the first: no %q in:\n%s", want, out)
		}
	}
	for _, l := range strings.Split(v.Render(ctx(), 60, 24), "\n")[2:4] {
		if lw := ansi.StringWidth(l); lw > 60 {
			t.Errorf("a row %d wide at 60: %q", lw, l)
		}
	}
	if out := ansi.Strip(New(&fakeSession{}).Render(ctx(), 80, 24)); !strings.Contains(out, "no listen streams yet") {
		t.Errorf("no streams:\n%s", out)
	}
}

// New is disabled when the session says so and then asks nothing; close
// and open act on the selected stream.
func TestKeys(t *testing.T) {
	f := streams(t)
	v := New(f)
	c := ctx()
	f.whyNo = "a recording cannot open streams"
	if why := v.Disabled(c, "listen-new"); why != f.whyNo {
		t.Errorf("listen-new: %q", why)
	}
	if a := v.Key(c, "listen-new", keys.Parse("n")); a.Flash != "listen: "+f.whyNo || len(f.sent) != 0 {
		t.Errorf("listen-new disabled: %+v, sent %v", a, f.sent)
	}
	f.whyNo = ""
	v.Key(c, "listen-new", keys.Parse("n"))
	v.Key(c, "listen-close", keys.Parse("c"))
	v.Key(c, "top", keys.Parse("g"))
	v.Key(c, "open", keys.Parse("enter"))
	want := "new|close " + f.streams[1].Key + "|open " + f.streams[0].Key
	if got := strings.Join(f.sent, "|"); got != want {
		t.Errorf("sent %q, want %q", got, want)
	}
	if a := v.Key(c, "listen-back", keys.Parse("esc")); !a.Close {
		t.Errorf("esc: %+v", a)
	}
	if a := v.Key(c, "help", keys.Parse("?")); !a.Help {
		t.Errorf("help: %+v", a)
	}
}

// Items names a filter's parts, inert; FilterOf reads a request's or an
// acknowledgement's params.
func TestItemsAndFilterOf(t *testing.T) {
	f, ok := FilterOf(json.RawMessage(`{"notifications":{"promptsListChanged":true,"resourcesListChanged":true,"taskIds":["a` + hostile + `"]}}`))
	if !ok {
		t.Fatal("a filter not read")
	}
	got := strings.Join(Items(f), ", ")
	if got != "prompts, resources, task a␛]52;c;cHduZWQ=␇␛[2J" {
		t.Errorf("Items %q", got)
	}
	if _, ok := FilterOf(json.RawMessage(`{"other":1}`)); ok {
		t.Error("params without notifications read as a filter")
	}
	if got := Items(session.ListenFilter{}); len(got) != 1 || got[0] != "nothing" {
		t.Errorf("an empty filter: %v", got)
	}
}
