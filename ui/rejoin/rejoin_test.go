package rejoin

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"mcpscope/statestore"
	"mcpscope/themes"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
)

// fakeSession is the view's Session over a file store in a scratch
// folder; it records the rejoins asked.
type fakeSession struct {
	st      statestore.Store
	why     string // why a record cannot be rejoined here ("" when it can)
	err     error  // what Rejoin fails with
	rejoins []string
}

func (f *fakeSession) Store() statestore.Store { return f.st }
func (f *fakeSession) CanRejoin(statestore.Detached) (bool, string) {
	return f.why == "", f.why
}
func (f *fakeSession) Rejoin(d statestore.Detached) (string, error) {
	f.rejoins = append(f.rejoins, d.Handle)
	return "7", f.err
}

const hostile = "\x1b]52;c;cHduZWQ=\x07\x1b[2J"

func raw(s string) bool {
	return strings.Contains(s, "\x1b]") || strings.Contains(s, "\x1b[2J") || strings.Contains(s, "\x07")
}

func ctx() view.Context {
	return view.Context{Theme: themes.Plain(), Keys: keys.New(Keys.Bindings), Location: time.UTC}
}

func withRecords(t *testing.T, handles ...string) *fakeSession {
	t.Helper()
	f := &fakeSession{st: &statestore.FileStore{Dir: t.TempDir()}}
	for i, h := range handles {
		d := statestore.Detached{Handle: h, Target: "https://ada:pw@example.com/mcp?token=s3cret", Transport: "http",
			SessionID: "sid" + hostile, ProtocolVersion: "2025-06-18" + hostile, Method: "tools/call" + hostile, Name: "slow" + hostile,
			Started: time.Date(2026, 3, 1, 12, i, 0, 0, time.UTC), Progress: statestore.Progress{Updates: 1, Value: 3, Total: 10}}
		if err := f.st.Put(d); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// A record's server-given strings are drawn inert, its target redacted,
// its rejoin command shown; why it cannot be rejoined here is said.
func TestRender(t *testing.T) {
	f := withRecords(t, "h1", "h2")
	f.why = "another server" + hostile
	v := New(f)
	for _, w := range []int{0, 10, 80, 200} {
		for _, h := range []int{0, 1, 24} {
			if out := v.Render(ctx(), w, h); raw(out) {
				t.Fatalf("at %dx%d: a raw escape: %q", w, h, out)
			}
		}
	}
	out := ansi.Strip(v.Render(ctx(), 120, 24))
	for _, want := range []string{" Detached calls 2", "03-01 12:00 tools/call␛]52;c;cHduZWQ=␇␛[2J slow␛]52", " 3/10",
		"[redacted]@example.com", "sid␛]52;c;cHduZWQ=␇␛[2J", " rejoin   ", "h1", "not here: another server␛]52"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s3cret") || strings.Contains(out, "ada:pw") {
		t.Errorf("a secret of the target is drawn:\n%s", out)
	}
	f.why = ""
	if out := ansi.Strip(v.Render(ctx(), 120, 24)); !strings.Contains(out, "r rejoins it in this session") {
		t.Errorf("a rejoinable record does not say so:\n%s", out)
	}
	if out := ansi.Strip(New(withRecords(t)).Render(ctx(), 80, 24)); !strings.Contains(out, "no calls are left running") {
		t.Errorf("no records:\n%s", out)
	}
}

// Rejoin asks the session only when the record can be rejoined here;
// a refusal and an error are flashed inert; forget deletes the record.
func TestKeys(t *testing.T) {
	f := withRecords(t, "h1", "h2")
	v := New(f)
	c := ctx()
	f.why = "another server" + hostile
	a := v.Key(c, "rejoin-here", keys.Parse("r"))
	if len(f.rejoins) != 0 || !strings.HasPrefix(a.Flash, "cannot rejoin here: another server") || raw(a.Flash) {
		t.Errorf("refused: %+v, rejoins %v", a, f.rejoins)
	}
	f.why, f.err = "", errors.New("held by 42@elsewhere"+hostile)
	if a := v.Key(c, "rejoin-here", keys.Parse("r")); a.Close || !strings.HasPrefix(a.Flash, "rejoin: held by 42") || raw(a.Flash) {
		t.Errorf("failed: %+v", a)
	}
	f.err = nil
	v.Key(c, "down", keys.Parse("down"))
	if a := v.Key(c, "rejoin-here", keys.Parse("r")); !a.Close || a.Flash != "rejoined h2 as call 7" {
		t.Errorf("rejoined: %+v", a)
	}
	if a := v.Key(c, "copy", keys.Parse("y")); a.Copy == nil || !strings.HasSuffix(a.Copy.Text, " h2") {
		t.Errorf("copy: %+v", a)
	}
	if a := v.Key(c, "rejoin-forget", keys.Parse("x")); !strings.HasPrefix(a.Flash, "forgot h2") {
		t.Errorf("forget: %+v", a)
	}
	if list, _ := f.st.List(); len(list) != 1 || list[0].Handle != "h1" {
		t.Errorf("after forget: %v", list)
	}
	if out := ansi.Strip(v.Render(c, 80, 24)); !strings.Contains(out, " Detached calls 1") {
		t.Errorf("the view is not reloaded:\n%s", out)
	}
	if a := v.Key(c, "rejoin-close", keys.Parse("esc")); !a.Close {
		t.Errorf("esc: %+v", a)
	}
	// With no record, the record keys do nothing.
	e := New(withRecords(t))
	for _, n := range []string{"rejoin-here", "rejoin-forget", "copy"} {
		if a := e.Key(c, n, keys.Parse("r")); a.Flash != "" || a.Copy != nil || a.Close || a.Cmd != nil {
			t.Errorf("%s on no record: %+v", n, a)
		}
	}
}
