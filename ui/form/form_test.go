package form

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"mcpscope/themes"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
)

func ctx() view.Context {
	return view.Context{Theme: themes.Plain(), Keys: keys.New(Keys.Bindings), Width: 80, Height: 24}
}

// A binding that cannot run says why: in the footer (left out), in help
// (Disabled) and as the flash when pressed; it does not run.
func TestFormDisabledBindings(t *testing.T) {
	c := ctx()
	var got json.RawMessage
	f := New("t", "", []*Field{Text("a", "", "", false)}, func(args json.RawMessage, _ Call) view.Action {
		got = args
		return view.Flash("sent")
	})
	if slices.Contains(f.Footer(c), "form-decline") {
		t.Errorf("a form with nothing to decline offers decline: %v", f.Footer(c))
	}
	a := f.Key(c, "form-decline", keys.Parse("ctrl+d"))
	if a.Close || !strings.Contains(a.Flash, "nothing to decline") {
		t.Errorf("ctrl+d on a form with nothing to decline: %+v", a)
	}
	for _, name := range []string{"form-task", "form-timeout"} {
		if why := f.Disabled(c, name); why == "" {
			t.Errorf("%s is offered on a form that is not a tool call", name)
		}
	}
	declined := false
	f.Declinable(func() view.Action { declined = true; return view.Action{} })
	if !slices.Contains(f.Footer(c), "form-decline") || f.Disabled(c, "form-decline") != "" {
		t.Errorf("a declinable form does not offer decline: %v", f.Footer(c))
	}
	if a := f.Key(c, "form-decline", keys.Parse("ctrl+d")); !a.Close || !declined {
		t.Errorf("ctrl+d did not decline: %+v", a)
	}
	f.Key(c, "", keys.Parse("x"))
	if a := f.Key(c, "form-submit", keys.Parse("enter")); !a.Close || a.Flash != "sent" || string(got) != `{"a":"x"}` {
		t.Errorf("submit: %+v, sent %s", a, got)
	}
}
