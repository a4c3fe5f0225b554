package result

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"strings"
	"testing"
)

func mustRender(t *testing.T, res string, o Options, st Styles) string {
	t.Helper()
	ls, ok := Render(json.RawMessage(res), o, st)
	if !ok {
		t.Fatalf("not rendered: %s", res)
	}
	return strings.Join(ls, "\n")
}

// Text is shown as text, not as a JSON string with \n in it.
func TestResultText(t *testing.T) {
	got := mustRender(t, `{"content":[{"type":"text","text":"line one\nline two"}]}`, Options{}, Styles{})
	if got != "line one\nline two" {
		t.Fatalf("got %q", got)
	}
}

// Markdown is rendered: headings, lists and emphasis lose their marks, a
// link shows its text and its URL.
func TestResultMarkdown(t *testing.T) {
	got := mustRender(t, `{"content":[{"type":"text","text":"# Weather\n\n- **Sunny** today\n- see [the forecast](https://example.com/f)"}]}`,
		Options{Width: 60}, Styles{})
	for _, want := range []string{"Weather", "• Sunny today", "the forecast (https://example.com/f)"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "**") || strings.Contains(got, "\x1b") {
		t.Errorf("marks or escapes left in the notty rendering:\n%q", got)
	}
}

// Hostile server text stays inert on every path: ESC, OSC 8 and OSC 52,
// C1 controls and bidi overrides in plain text, in Markdown (with and
// without colour) and in a link; the only escapes in a colour rendering
// are SGR.
func TestResultHostileTextInert(t *testing.T) {
	hostile := "# Title \x1b]8;;https://evil.example\x07click\x1b]8;;\x07\n\n\x1b]52;c;cm0gLXJmIC8=\x07 \x1b[2J\u202eevil\u202c \u009b31m [x](https://a.example/\x1b[31m)"
	res, _ := json.Marshal(map[string]any{"content": []any{
		map[string]any{"type": "text", "text": hostile},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///\x1b]0;pwned\x07", "mimeType": "text/markdown", "text": hostile}},
		map[string]any{"type": "resource_link", "uri": "https://x.example/\x1b[6n", "name": "\u202ename"},
	}})
	for _, o := range []Options{{}, {Markdown: "dark"}} {
		got := mustRender(t, string(res), o, ANSI())
		for i := 0; i < len(got); i++ {
			if got[i] != 0x1b {
				continue
			}
			j := i + 1
			if j >= len(got) || got[j] != '[' {
				t.Fatalf("%s: a non-CSI escape at %d: %q", o.Markdown, i, got[i:min(len(got), i+20)])
			}
			j++
			for j < len(got) && (got[j] < 0x40 || got[j] > 0x7e) {
				j++
			}
			if j >= len(got) || got[j] != 'm' {
				t.Fatalf("%s: a CSI that is not SGR at %d: %q", o.Markdown, i, got[i:min(len(got), j+1)])
			}
		}
		for _, bad := range []string{"\u202e", "\u009b", "\x07", "\x1b]"} {
			if strings.Contains(got, bad) {
				t.Errorf("%s: %q reached the output:\n%q", o.Markdown, bad, got)
			}
		}
		if !strings.Contains(got, "␛") {
			t.Errorf("%s: the server's ESC is not shown as ␛:\n%q", o.Markdown, got)
		}
	}
}

func pngB64(t *testing.T, w, h int) string {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// Images, audio and blobs show their type, decoded size and an image's
// dimensions, and carry the decoded bytes to save (issue 23: the size is
// the decoded bytes', not the base64 text's).
func TestResultMedia(t *testing.T) {
	img := pngB64(t, 64, 48)
	raw, _ := base64.StdEncoding.DecodeString(img)
	res := `{"content":[{"type":"image","mimeType":"image/png","data":"` + img + `"},{"type":"audio","mimeType":"audio/wav","data":"AAAAAAAA"},
		{"type":"resource","resource":{"uri":"file:///tmp/report.pdf","mimeType":"application/pdf","blob":"JVBERi0="}}]}`
	bs, ok := Blocks(json.RawMessage(res), Options{})
	if !ok {
		t.Fatal("not rendered")
	}
	var media []string
	for _, b := range bs {
		if b.Media != nil {
			media = append(media, b.Lines[0])
			if b.Media.Kind == "image" && !bytes.Equal(b.Media.Data, raw) {
				t.Error("the image's decoded bytes differ")
			}
		}
	}
	want := []string{
		"image · image/png · " + sizeOf(len(raw)) + " · 64×48 PNG",
		"audio · audio/wav · 6 bytes",
		"blob · application/pdf · file:///tmp/report.pdf · 5 bytes",
	}
	if strings.Join(media, "\n") != strings.Join(want, "\n") {
		t.Fatalf("media:\n%s\nwant:\n%s", strings.Join(media, "\n"), strings.Join(want, "\n"))
	}
}

func sizeOf(n int) string {
	if n < 1024 {
		return itoa(n) + " bytes"
	}
	return "?"
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// An isError result is unmistakable; a link shows as a link; structured
// content shows beside the outputSchema it claims, checked against it.
func TestResultErrorLinkStructured(t *testing.T) {
	got := mustRender(t, `{"isError":true,"content":[{"type":"text","text":"disk full"},{"type":"resource_link","uri":"file:///var/log/x.log","name":"x.log","mimeType":"text/plain"}],
		"structuredContent":{"free":0}}`, Options{OutputSchema: json.RawMessage(`{"type":"object","properties":{"free":{"type":"integer","minimum":1}}}`)}, Styles{})
	for _, want := range []string{"✗ ERROR — the tool reported a failure (isError: true)", "disk full", "link → file:///var/log/x.log (text/plain)", "  x.log",
		"structuredContent", "\"free\": 0", "outputSchema (the tool's)", "✗ does not keep to the tool's outputSchema", "\"minimum\": 1"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if strings.Index(got, "✗ ERROR") != 0 {
		t.Errorf("the error banner is not first:\n%s", got)
	}
	ok := mustRender(t, `{"content":[],"structuredContent":{"free":3}}`, Options{OutputSchema: json.RawMessage(`{"type":"object","properties":{"free":{"type":"integer","minimum":1}}}`)}, Styles{})
	if !strings.Contains(ok, "✓ keeps to the tool's outputSchema") {
		t.Errorf("a valid structuredContent:\n%s", ok)
	}
}

// Not a content result: nothing to render (the raw JSON shows).
func TestResultNotContent(t *testing.T) {
	if _, ok := Blocks(json.RawMessage(`{"tools":[]}`), Options{}); ok {
		t.Fatal("a tools/list result was rendered")
	}
}

// A text too long to render as Markdown while a person waits shows as
// plain text.
func TestResultLongMarkdownPlain(t *testing.T) {
	text := "# Big\n\n" + strings.Repeat("**x** ", 12<<10)
	res, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
	got := mustRender(t, string(res), Options{}, Styles{})
	if !strings.HasPrefix(got, "# Big") || !strings.Contains(got, "**x**") {
		t.Fatalf("a long text should show as it is, got %.60q", got)
	}
}

// Content annotations show as a faint line on their item: after its
// heading, or before its text; a field of a wrong type shows as its JSON
// without hiding the item; server strings in them are inert.
func TestResultAnnotations(t *testing.T) {
	res := `{"content":[
		{"type":"text","text":"for you","annotations":{"audience":["user"],"priority":0.8}},
		{"type":"resource_link","uri":"file:///a.txt","name":"a","annotations":{"audience":["user","assistant"],"lastModified":"2025-01-12T15:00:58Z"}},
		{"type":"text","text":"odd","annotations":{"audience":"user\u001b[2J","priority":"high"}},
		{"type":"text","text":"none","annotations":{}},
		{"type":"text","text":"plain"}]}`
	bs, ok := Blocks(json.RawMessage(res), Options{Width: 80})
	if !ok {
		t.Fatal("not rendered")
	}
	var got []string
	for _, b := range bs {
		for _, l := range b.Lines {
			if b.Class == Faint {
				l = "(faint) " + l
			}
			got = append(got, l)
		}
	}
	want := []string{
		"(faint) for: user · priority 0.8", "for you", "",
		"link → file:///a.txt", "(faint) for: user, assistant · modified 2025-01-12T15:00:58Z", "  a", "",
		"(faint) for: user␛[2J · priority high", "odd", "",
		"none", "",
		"plain"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
