package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"mcpscope/session"
)

// A boolean becomes true with → or l and false with ← or h, as well as
// with space; a confirm form sends what was chosen (issue 21: → sent
// false).
func TestFormBooleanArrows(t *testing.T) {
	r := NewResponder(nil, true)
	m, _, _ := newLive(t, r)
	m.resp = r
	schema := `{"message":"Deploy?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean","title":"Confirm"}},"required":["confirm"]}}`
	for _, c := range []struct {
		keys []string
		want string
	}{
		{[]string{"right"}, `{"confirm":true}`},
		{[]string{"l"}, `{"confirm":true}`},
		{[]string{"right", "left"}, `{"confirm":false}`},
		{[]string{"l", "h"}, `{"confirm":false}`},
		{[]string{"space"}, `{"confirm":true}`},
		{[]string{"space", "space"}, `{"confirm":false}`},
	} {
		got := answerPrompt(t, m, r, "elicitation/create", schema)
		for _, k := range c.keys {
			key(m, k)
		}
		press(m, "form-submit")
		a := <-got
		if a.err != nil || !strings.Contains(string(a.result), `"content":`+c.want) {
			t.Errorf("%v sent %s (%v), want content %s", c.keys, a.result, a.err, c.want)
		}
	}
}

// esc on an elicitation asked in an MRTR round ends the call instead of
// answering "cancel" into a retry the server may answer by asking again.
func TestFormEscEndsMRTRRound(t *testing.T) {
	r := NewResponder(nil, true)
	m, _, _ := newLive(t, r)
	m.resp = r
	out := make(chan answer, 1)
	go func() {
		res, err := r.Respond(t.Context(), session.ServerRequest{Method: "elicitation/create", MRTR: true, Related: "7",
			Params: []byte(`{"message":"Deploy?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}}}}`)})
		out <- answer{res, err}
	}()
	m.Update(waitPrompt(r)())
	press(m, "form-cancel")
	a := <-out
	if a.err == nil || a.result != nil || !strings.Contains(a.err.Message, "no retry sent") {
		t.Fatalf("esc in an MRTR round answered %s %v; want an error that ends the chain", a.result, a.err)
	}
}

// String formats and bounds are checked before anything is sent, with
// the problem beside its field; the mark sits next to the field, not at
// the far edge (issue 23).
func TestFormFormatErrors(t *testing.T) {
	r := NewResponder(nil, true)
	m, _, _ := newLive(t, r)
	m.resp = r
	schema := `{"message":"Details","requestedSchema":{"type":"object","properties":{
		"email":{"type":"string","format":"email"},
		"site":{"type":"string","format":"uri"},
		"day":{"type":"string","format":"date"},
		"code":{"type":"string","maxLength":3,"pattern":"^[a-z]+$"},
		"n":{"type":"integer","maximum":5}},"required":["email"]}}`
	got := answerPrompt(t, m, r, "elicitation/create", schema)
	press(m, "form-submit")
	if line := lineWith(screen(m), "email*"); !strings.Contains(line, "← required") || ansi.StringWidth(strings.TrimRight(line, " ")) > 40 {
		t.Fatalf("the required mark is not next to its field: %q", line)
	}
	typeText(m, "notanemail")
	press(m, "form-next")
	typeText(m, "example.com")
	press(m, "form-next")
	typeText(m, "2026-02-30")
	press(m, "form-next")
	typeText(m, "ABCD")
	press(m, "form-next")
	typeText(m, "9")
	press(m, "form-submit")
	sc := screen(m)
	for _, want := range []string{"← not an email address", "← not an absolute URI", "← not a date (YYYY-MM-DD)", "← at most 3 characters", "← at most 5"} {
		if !strings.Contains(sc, want) {
			t.Errorf("no %q on the form:\n%s", want, sc)
		}
	}
	if line := lineWith(sc, "email*"); ansi.StringWidth(strings.TrimRight(line, " ")) > 80 {
		t.Errorf("the mark is far from its field: %q", line)
	}
	select {
	case a := <-got:
		t.Fatalf("a form with errors was sent: %s", a.result)
	default:
	}
	fix := func(text string) {
		press(m, "form-clear")
		typeText(m, text)
		press(m, "form-next")
	}
	press(m, "form-next") // back to the first field
	fix("ada@example.com")
	fix("https://example.com")
	fix("2026-07-28")
	fix("abc")
	fix("4")
	press(m, "form-submit")
	a := <-got
	if want := `"content":{"email":"ada@example.com","site":"https://example.com","day":"2026-07-28","code":"abc","n":4}`; !strings.Contains(string(a.result), want) {
		t.Fatalf("sent %s, want %s", a.result, want)
	}
}

// Typing into a prefilled value replaces it (issue 21: deploy + deploy
// was deploydeploy); a key that moves keeps it to edit.
func TestFormPrefillReplaced(t *testing.T) {
	r := NewResponder(nil, true)
	m, _, _ := newLive(t, r)
	m.resp = r
	schema := `{"message":"Go?","requestedSchema":{"type":"object","properties":{"action":{"type":"string","default":"deploy"},"env":{"type":"string","default":"prod"}}}}`
	got := answerPrompt(t, m, r, "elicitation/create", schema)
	if !strings.Contains(screen(m), "typing replaces it") {
		t.Fatalf("the prefill is not marked:\n%s", screen(m))
	}
	typeText(m, "deploy")
	press(m, "form-next")
	key(m, "end")
	typeText(m, "-eu")
	press(m, "form-submit")
	a := <-got
	if want := `"content":{"action":"deploy","env":"prod-eu"}`; !strings.Contains(string(a.result), want) {
		t.Fatalf("sent %s, want %s", a.result, want)
	}
}

func lineWith(screen, s string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// A problem that quotes the server's schema (its pattern) is made inert.
func TestFormErrorFromSchemaInert(t *testing.T) {
	r := NewResponder(nil, true)
	m, _, _ := newLive(t, r)
	m.resp = r
	got := answerPrompt(t, m, r, "elicitation/create", `{"message":"x","requestedSchema":{"type":"object","properties":{"code":{"type":"string","pattern":"^a\u001b]0;pwned\u0007$"}}}}`)
	typeText(m, "b")
	press(m, "form-submit")
	if raw := m.Render(); strings.Contains(raw, "\x1b]0;") || !strings.Contains(screen(m), "must match ^a␛]0;pwned␇$") {
		t.Fatalf("the pattern reached the screen raw:\n%q", raw)
	}
	press(m, "form-cancel")
	<-got
}
