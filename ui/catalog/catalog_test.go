package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"mcpscope/session"
	"mcpscope/themes"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
)

// fakeHost is the catalog's Host: it records what the catalog asks.
type fakeHost struct {
	info         session.Info
	whyNoChange  string
	subscribed   []string
	unsubscribed []string
	lists, finds []string
	sends        int
}

func (f *fakeHost) Info() session.Info { return f.info }
func (f *fakeHost) Connected() bool    { return true }
func (f *fakeHost) List(method, _ string) *session.Listing {
	f.lists = append(f.lists, method)
	return nil
}
func (f *fakeHost) WhyNoChange() string    { return f.whyNoChange }
func (f *fakeHost) Subscribe(uri string)   { f.subscribed = append(f.subscribed, uri) }
func (f *fakeHost) Unsubscribe(uri string) { f.unsubscribed = append(f.unsubscribed, uri) }
func (f *fakeHost) Find(last string) view.Action {
	f.finds = append(f.finds, last)
	return view.Flash("find")
}
func (f *fakeHost) Send(func(s *session.Session) *session.Call) view.Action {
	f.sends++
	return view.Flash("sent")
}

func ctx(w, h int) view.Context {
	return view.Context{Theme: themes.Plain(), Keys: keys.New(Keys.Bindings), Width: w, Height: h}
}

func raws(items ...string) []json.RawMessage {
	var out []json.RawMessage
	for _, s := range items {
		out = append(out, json.RawMessage(s))
	}
	return out
}

const hostile = `\u001b]52;c;cHduZWQ=\u0007\u001b[2J`

// raw reports whether s holds a hostile escape as bytes (an OSC, a clear
// screen, a bell) rather than made inert.
func raw(s string) bool {
	return strings.Contains(s, "\x1b]") || strings.Contains(s, "\x1b[2J") || strings.Contains(s, "\x07")
}

func loaded() (*View, *fakeHost) {
	h := &fakeHost{}
	v := New(h)
	v.Load(Tools, raws(
		`{"name":"search`+hostile+`","description":"finds things`+hostile+`","inputSchema":{"type":"object","properties":{"q":{"type":"string","description":"the query"}},"required":["q"]}}`,
		`{"name":"read","title":"Read a file","inputSchema":{"type":"object"}}`,
	))
	v.Load(Resources, raws(`{"uri":"file:///a`+hostile+`","name":"a"}`, `{"uri":"file:///b","name":"b"}`))
	v.Load(Templates, nil)
	v.Absent(Prompts, "the server did not declare prompts")
	return v, h
}

// What a server names and describes is drawn inert, at every width, and
// no line is wider than the view.
func TestRenderInertAndFits(t *testing.T) {
	v, _ := loaded()
	for _, sec := range []int{Tools, Resources, Templates, Prompts} {
		for _, w := range []int{1, 10, 40, 80, 109, 110, 200} {
			for _, h := range []int{1, 5, 24} {
				v.cur = sec
				out := v.Render(ctx(w, h), w, h)
				if raw(out) {
					t.Fatalf("section %d at %dx%d: a raw escape drawn: %q", sec, w, h, out)
				}
				if w < 40 {
					continue // the tabs alone are wider: cut by the frame
				}
				for _, l := range strings.Split(out, "\n")[1:] {
					if lw := ansi.StringWidth(l); lw > w {
						t.Errorf("section %d at %dx%d: a line %d wide: %q", sec, w, h, lw, l)
					}
				}
			}
		}
	}
	v.cur = Tools
	out := ansi.Strip(v.Render(ctx(80, 24), 80, 24))
	for _, want := range []string{"tools (2)", "resources (2)", "templates (0)", "prompts (0)", "▸", "search␛]52;c;cHduZWQ=␇␛[2J", "q", "the query"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	v.cur = Templates
	if out := ansi.Strip(v.Render(ctx(80, 24), 80, 24)); !strings.Contains(out, "(empty)") {
		t.Errorf("an empty section does not say so:\n%s", out)
	}
	v.cur = Prompts
	if out := ansi.Strip(v.Render(ctx(80, 24), 80, 24)); !strings.Contains(out, "the server did not declare prompts") {
		t.Errorf("an absent section does not say why:\n%s", out)
	}
}

// Subscribe works on resources only, and not when the session cannot be
// changed; pressed disabled it flashes why and asks nothing.
func TestSubscribeDisabled(t *testing.T) {
	v, h := loaded()
	c := ctx(80, 24)
	if why := v.Disabled(c, "subscribe"); why != "works on resources" {
		t.Errorf("over tools: disabled %q", why)
	}
	if a := v.Key(c, "subscribe", keys.Parse("s")); !strings.Contains(a.Flash, "works on resources") || len(h.subscribed) > 0 {
		t.Errorf("pressed disabled: %+v, subscribed %v", a, h.subscribed)
	}
	v.Key(c, "section-next", keys.Parse("right"))
	if why := v.Disabled(c, "subscribe"); why != "" {
		t.Errorf("over resources: disabled %q", why)
	}
	h.whyNoChange = "a recording cannot be changed"
	if why := v.Disabled(c, "subscribe"); why != h.whyNoChange {
		t.Errorf("read-only session: disabled %q", why)
	}
	h.whyNoChange = ""
	a := v.Key(c, "subscribe", keys.Parse("s"))
	if len(h.subscribed) != 1 || h.subscribed[0] != "file:///a\x1b]52;c;cHduZWQ=\x07\x1b[2J" {
		t.Fatalf("subscribed %q", h.subscribed)
	}
	if strings.ContainsAny(a.Flash, "\x1b\x07") {
		t.Errorf("the flash holds a raw escape: %q", a.Flash)
	}
	h.info.Subscriptions = h.subscribed
	v.Key(c, "subscribe", keys.Parse("s"))
	if len(h.unsubscribed) != 1 {
		t.Errorf("a subscribed resource is not unsubscribed: %v", h.unsubscribed)
	}
}

// Keys move within a section and between sections; open sends a
// resource read and opens a form for a tool; esc clears the find first.
func TestKeys(t *testing.T) {
	v, h := loaded()
	c := ctx(80, 24)
	v.Key(c, "down", keys.Parse("down"))
	v.Key(c, "down", keys.Parse("down"))
	if v.secs[Tools].sel != 1 {
		t.Errorf("sel %d after two downs over two tools", v.secs[Tools].sel)
	}
	if a := v.Key(c, "open", keys.Parse("enter")); a.Open == nil {
		t.Errorf("open on a tool: %+v, want a form", a)
	}
	v.Key(c, "section-prev", keys.Parse("left"))
	if v.cur != Prompts {
		t.Errorf("left from tools: section %d", v.cur)
	}
	if a := v.Key(c, "open", keys.Parse("enter")); a.Open != nil || h.sends != 0 {
		t.Errorf("open on an empty section: %+v", a)
	}
	v.Key(c, "focus-next", keys.Parse("tab"))
	v.Key(c, "focus-next", keys.Parse("tab"))
	if a := v.Key(c, "open", keys.Parse("enter")); a.Flash != "sent" || h.sends != 1 {
		t.Errorf("open on a resource: %+v, %d sends", a, h.sends)
	}
	v.Key(c, "catalog-find", keys.Parse("/"))
	v.SetFind("zzzz-nothing")
	if got := v.Names(Resources); len(got) != 0 {
		t.Errorf("find matched %v", got)
	}
	if out := ansi.Strip(v.Render(c, 80, 24)); !strings.Contains(out, "nothing here matches") {
		t.Errorf("an empty find does not say so:\n%s", out)
	}
	if a := v.Key(c, "catalog-close", keys.Parse("esc")); a.Close || v.Query() != "" {
		t.Errorf("esc with a find: %+v, query %q", a, v.Query())
	}
	if a := v.Key(c, "catalog-close", keys.Parse("esc")); !a.Close {
		t.Errorf("esc without a find: %+v", a)
	}
	if a := v.Key(c, "refresh", keys.Parse("R")); a.Flash == "" || len(h.lists) != 4 {
		t.Errorf("refresh: %+v, listed %v", a, h.lists)
	}
	if a := v.Key(c, "quit", keys.Parse("ctrl+c")); !a.Quit {
		t.Errorf("quit: %+v", a)
	}
}
