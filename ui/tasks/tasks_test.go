package tasks

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"mcpscope/protocol"
	"mcpscope/themes"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
)

// fakeSession is the view's Session: it holds tasks and records the
// intents the view sends.
type fakeSession struct {
	tasks      []protocol.Task
	era        string
	cannotSend string
	whyNot     map[string]string
	sent       []string // "method id"
}

func (f *fakeSession) Tasks() []protocol.Task { return f.tasks }
func (f *fakeSession) Era() string            { return f.era }
func (f *fakeSession) CannotSend() string     { return f.cannotSend }
func (f *fakeSession) Ask(method string, t protocol.Task) view.Action {
	f.sent = append(f.sent, method+" "+t.TaskID)
	return view.Flash(method)
}
func (f *fakeSession) Result(t protocol.Task) view.Action {
	f.sent = append(f.sent, "result "+t.TaskID)
	return view.Action{}
}
func (f *fakeSession) Follow(t protocol.Task) view.Action {
	f.sent = append(f.sent, "follow "+t.TaskID)
	return view.Action{}
}
func (f *fakeSession) Open(t protocol.Task) view.Action {
	f.sent = append(f.sent, "open "+t.TaskID)
	return view.Action{}
}
func (f *fakeSession) Global(name string) view.Action {
	f.sent = append(f.sent, "global "+name)
	return view.Action{}
}
func (f *fakeSession) WhyNotGlobal(name string) string { return f.whyNot[name] }

func ctx() view.Context { return view.Context{Theme: themes.Plain(), Keys: keys.New(Keys.Bindings)} }

const hostile = "\x1b]52;c;cHduZWQ=\x07\x1b[2J"

func raw(s string) bool {
	return strings.Contains(s, "\x1b]") || strings.Contains(s, "\x1b[2J") || strings.Contains(s, "\x07")
}

func twoTasks() *fakeSession {
	return &fakeSession{tasks: []protocol.Task{
		{TaskID: "t-1" + hostile, Status: "working" + hostile, StatusMessage: "busy " + hostile, CreatedAt: "2026-03-01T12:00:00Z", PollInterval: 1500, CallKey: "3"},
		{TaskID: "t-2", Status: "input_required", InputRequests: map[string]protocol.InputRequest{"q" + hostile: {Method: "elicitation/create"}}},
	}}
}

// Every string of a task the server sent is drawn inert; the poll is in
// seconds; what an input_required task asks is named.
func TestRenderInert(t *testing.T) {
	v := New(twoTasks())
	for _, w := range []int{0, 10, 40, 80, 200} {
		for _, h := range []int{0, 1, 3, 24} {
			if out := v.Render(ctx(), w, h); raw(out) {
				t.Fatalf("at %dx%d: a raw escape: %q", w, h, out)
			}
		}
	}
	out := ansi.Strip(v.Render(ctx(), 120, 24))
	for _, want := range []string{" Tasks 2", "t-1␛]52;c;cH", "1.5s", "#3", "busy ␛]52;c;cHduZWQ=␇␛[2J", "— asks q␛]52;c;cHduZWQ=␇␛[2J (elicita", "▸ t-2"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	// Narrow, the creation time gives way to the poll interval.
	if out := ansi.Strip(v.Render(ctx(), 60, 24)); strings.Contains(out, "created") || !strings.Contains(out, "1.5s") {
		t.Errorf("at 60 columns:\n%s", out)
	}
	if out := ansi.Strip(New(&fakeSession{}).Render(ctx(), 80, 24)); !strings.Contains(out, "no tasks yet") {
		t.Errorf("no tasks:\n%s", out)
	}
}

// The selection starts on the newest task; keys act on the selected one;
// the result is followed in the 2026 era and fetched before it.
func TestKeys(t *testing.T) {
	f := twoTasks()
	v := New(f)
	c := ctx()
	v.Key(c, "task-get", keys.Parse("s"))
	v.Key(c, "up", keys.Parse("up"))
	v.Key(c, "task-cancel", keys.Parse("c"))
	v.Key(c, "task-result", keys.Parse("r"))
	f.era = protocol.EraModern
	v.Key(c, "task-result", keys.Parse("r"))
	v.Key(c, "task-open", keys.Parse("enter"))
	want := []string{"tasks/get t-2", "tasks/cancel t-1" + hostile, "result t-1" + hostile, "follow t-1" + hostile, "open t-1" + hostile}
	if strings.Join(f.sent, "|") != strings.Join(want, "|") {
		t.Errorf("sent %q, want %q", f.sent, want)
	}
	if a := v.Key(c, "copy", keys.Parse("y")); a.Copy == nil || a.Copy.Text != "t-1"+hostile {
		t.Errorf("copy: %+v", a)
	}
	for _, n := range []string{"tasks-close", "tasks"} {
		if a := v.Key(c, n, keys.Parse("esc")); !a.Close {
			t.Errorf("%s: %+v", n, a)
		}
	}
	if a := v.Key(c, "quit", keys.Parse("ctrl+c")); !a.Quit {
		t.Errorf("quit: %+v", a)
	}
}

// With nothing connected, what asks the server is disabled and pressing
// it sends nothing; a global binding passed on has the panes' reason.
func TestDisabled(t *testing.T) {
	f := twoTasks()
	f.cannotSend = "a recording sends nothing"
	f.whyNot = map[string]string{"catalog": "no catalog in a recording"}
	v := New(f)
	c := ctx()
	for _, n := range []string{"task-get", "task-cancel", "task-result"} {
		if why := v.Disabled(c, n); why != f.cannotSend {
			t.Errorf("%s: disabled %q", n, why)
		}
		if a := v.Key(c, n, keys.Parse("s")); a.Flash != "task: "+f.cannotSend {
			t.Errorf("%s pressed: %+v", n, a)
		}
	}
	if len(f.sent) != 0 {
		t.Errorf("sent %v while disabled", f.sent)
	}
	for _, n := range []string{"task-open", "copy", "tasks-close"} {
		if why := v.Disabled(c, n); why != "" {
			t.Errorf("%s: disabled %q", n, why)
		}
	}
	if why := v.Disabled(c, "catalog"); why != "no catalog in a recording" {
		t.Errorf("catalog: %q", why)
	}
	v.Key(c, "catalog", keys.Parse("C"))
	if len(f.sent) != 1 || f.sent[0] != "global catalog" {
		t.Errorf("a passed binding: %v", f.sent)
	}
	// With no task, nothing is disabled and nothing is sent.
	e := &fakeSession{cannotSend: "offline"}
	ve := New(e)
	if why := ve.Disabled(c, "task-get"); why != "" {
		t.Errorf("no task: disabled %q", why)
	}
	if a := ve.Key(c, "task-get", keys.Parse("s")); a.Flash != "" || len(e.sent) != 0 {
		t.Errorf("no task: %+v, sent %v", a, e.sent)
	}
}
