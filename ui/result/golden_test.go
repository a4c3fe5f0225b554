package result

import (
	"encoding/json"
	"strings"
	"testing"

	"mcpscope/testkit/goldentest"
)

func golden(t *testing.T, name, got string) { t.Helper(); goldentest.Check(t, name, got) }

const (
	weatherResult = `{"content":[{"type":"text","text":"Sunny in Paris"}],
		"structuredContent":{"city":"Paris","sky":{"state":"sunny","cover":0.1},"note":"a long note that is wider than half of a wide terminal, so its column wraps it"}}`
	weatherSchema = `{"type":"object","properties":{"city":{"type":"string"},"sky":{"type":"object"}},"required":["city"]}`
)

// structuredContent shows beside the outputSchema it claims when the width
// allows (SideBySide), each column wrapped at half the width; narrower, the
// schema goes under it, as JSON a viewer folds.
func TestGoldenStructuredBesideSchema(t *testing.T) {
	o := Options{Width: 120, OutputSchema: json.RawMessage(weatherSchema)}
	wide := mustRender(t, weatherResult, o, Styles{})
	golden(t, "structured-120", wide)
	besides := false
	for _, l := range strings.Split(wide, "\n") {
		if len([]rune(l)) > 120 {
			t.Errorf("a line is wider than 120 columns: %q", l)
		}
		if strings.Contains(l, `"city": "Paris",`) && strings.Contains(l, " │ ") && strings.Contains(l, `"type": "object",`) {
			besides = true
		}
	}
	if !besides || !strings.Contains(wide, "✓ keeps to the tool's outputSchema") {
		t.Errorf("at 120 columns the content and its schema are not side by side, checked:\n%s", wide)
	}
	o.Width = 80
	narrow := mustRender(t, weatherResult, o, Styles{})
	golden(t, "structured-80", narrow)
	if strings.Contains(narrow, " │ ") || strings.Index(narrow, "structuredContent") > strings.Index(narrow, "outputSchema (the tool's)") {
		t.Errorf("at 80 columns the schema should go under the content:\n%s", narrow)
	}
	bs, _ := Blocks(json.RawMessage(weatherResult), o)
	folds := 0
	for _, b := range bs {
		if b.JSON != nil {
			folds++
		}
	}
	if folds != 2 {
		t.Errorf("stacked, the content and the schema are %d JSON blocks a viewer folds, want 2", folds)
	}
}

// A prompts/get result renders like a tool result: its description, each
// message under its role, text as text, Markdown rendered, an image
// described, an embedded resource with its URI; server text inert.
func TestGoldenPrompt(t *testing.T) {
	img := pngB64(t, 16, 8)
	res := `{"description":"Review code \u001b]0;pwned\u0007","messages":[
		{"role":"user","content":{"type":"text","text":"Please review:\nx := 1"}},
		{"role":"assistant","content":{"type":"text","text":"# Review\n\n- **fine** as is"}},
		{"role":"user","content":{"type":"image","mimeType":"image/png","data":"` + img + `"}},
		{"role":"user\u001b[2J","content":{"type":"resource","resource":{"uri":"file:///src/x.go","mimeType":"text/x-go","text":"package x"}}}]}`
	got := mustRender(t, res, Options{Width: 80}, Styles{})
	golden(t, "prompt-80", got)
	for _, want := range []string{"Review code ␛]0;pwned␇", "▸ user", "Please review:\nx := 1", "▸ assistant", "• fine as is",
		"image · image/png · ", "16×8 PNG", "▸ user␛[2J", "resource file:///src/x.go (text/x-go)", "package x"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, `"role"`) || strings.Contains(got, "**") || strings.Contains(got, "\x1b") {
		t.Errorf("raw JSON, Markdown marks or an escape in the prompt's rendering:\n%q", got)
	}
	if _, ok := Blocks(json.RawMessage(`{"messages":[]}`), Options{}); !ok {
		t.Error("a prompt without messages is not rendered")
	}
}
