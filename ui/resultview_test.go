package ui

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcpscope/transport"
)

// renderedFrames is a session of one tool call whose result has a bit of
// everything: Markdown, an image, a resource link, a blob, structured
// content; and one isError call.
func renderedFrames(t testing.TB) ([]transport.Frame, []byte) {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 64, 48))); err != nil {
		t.Fatal(err)
	}
	img := b.Bytes()
	res, _ := json.Marshal(map[string]any{"content": []any{
		map[string]any{"type": "text", "text": "# Forecast\n\n- **Sunny** in \x1b]8;;https://evil.example\x07Paris\x1b]8;;\x07\n- see [the map](https://example.com/map)"},
		map[string]any{"type": "image", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(img)},
		map[string]any{"type": "resource_link", "uri": "file:///srv/forecast.csv", "name": "forecast.csv", "mimeType": "text/csv"},
	}, "structuredContent": map[string]any{"city": "Paris", "sky": map[string]any{"cover": 0.1, "kind": "sunny"}}})
	out, in := transport.Out, transport.In
	return []transport.Frame{
		msg(1, out, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"weather","arguments":{"city":"Paris"}}}`),
		msg(1.2, in, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"result":%s}`, res)),
		msg(2, out, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fail","arguments":{}}}`),
		msg(2.1, in, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"disk full \u001b[2J"}],"isError":true}}`),
	}, img
}

const weatherTools = `{"tools":[{"name":"weather","description":"The weather","inputSchema":{"type":"object"},
	"outputSchema":{"type":"object","properties":{"city":{"type":"string"},"sky":{"type":"object"}},"required":["city"]}}]}`

// Goldens of the rendered response: text, Markdown, an image, a link,
// structured content beside its outputSchema; and an isError result.
func TestGoldenResultRendered(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{80, 24}, {120, 40}} {
		for _, c := range []struct {
			name string
			keys []string
		}{
			{"result-rendered", []string{"top", "open", "tab-next"}},
			{"result-error", []string{"top", "down", "open", "tab-next"}},
			{"result-raw", []string{"top", "open", "tab-next", "result-view"}},
		} {
			name := fmt.Sprintf("%s-%dx%d", c.name, sz.w, sz.h)
			t.Run(name, func(t *testing.T) {
				frames, _ := renderedFrames(t)
				m := newTestModel(t, loadFrames(t, frames), sz.w, sz.h)
				loadPage(m, 0, weatherTools)
				press(m, c.keys...)
				got := screen(m)
				checkSize(t, got, sz.w, sz.h)
				golden(t, name, got)
			})
		}
	}
}

// v switches the response between rendered and raw JSON; the rendering
// carries no escape from the server.
func TestResultViewToggle(t *testing.T) {
	frames, _ := renderedFrames(t)
	m := newTestModel(t, loadFrames(t, frames), 120, 40)
	loadPage(m, 0, weatherTools)
	press(m, "top", "open", "tab-next")
	sc := screen(m)
	for _, want := range []string{"rendered result — v shows the raw JSON", "Forecast", "• Sunny in ␛]8;;https://evil.example␇Paris", "the map (https://example.com/map)",
		"image · image/png · ", "· 64×48 PNG", "s saves the decoded bytes", "link → file:///srv/forecast.csv (text/csv)", "structuredContent",
		"outputSchema (the tool's)", "✓ keeps to the tool's outputSchema"} {
		if !strings.Contains(sc, want) {
			t.Errorf("no %q in the rendered view:\n%s", want, sc)
		}
	}
	if raw := m.Render(); strings.Contains(raw, "\x1b]8") || strings.Contains(raw, "https://evil.example\x07") {
		t.Fatalf("an OSC 8 reached the screen:\n%q", raw)
	}
	press(m, "result-view")
	if sc := screen(m); !strings.Contains(sc, `"jsonrpc": "2.0"`) || strings.Contains(sc, "rendered result") {
		t.Fatalf("v should show the raw JSON:\n%s", sc)
	}
	press(m, "next-item") // the choice holds for the next call
	if sc := screen(m); !strings.Contains(sc, `"isError": true`) {
		t.Fatalf("the next call's raw JSON:\n%s", sc)
	}
	press(m, "result-view")
	if sc := screen(m); !strings.Contains(sc, "✗ ERROR — the tool reported a failure (isError: true)") || !strings.Contains(sc, "disk full ␛[2J") {
		t.Fatalf("an isError result, rendered:\n%s", sc)
	}
}

// s saves the decoded bytes of the image to the file named in its form,
// through userfile.
func TestResultSaveMedia(t *testing.T) {
	frames, img := renderedFrames(t)
	m := newTestModel(t, loadFrames(t, frames), 120, 40)
	press(m, "top", "open", "tab-next", "save-media")
	f, ok := m.top().(*form)
	if !ok || !strings.Contains(f.title, "Save image · image/png") || !strings.HasSuffix(f.fields[0].Value(), "image.png") {
		t.Fatalf("s should ask where to save the image:\n%s", screen(m))
	}
	path := filepath.Join(t.TempDir(), "out.png")
	typeText(m, path) // typing replaces the suggested name
	press(m, "form-submit")
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, img) {
		t.Fatalf("saved %d bytes (%v), want the %d decoded bytes", len(got), err, len(img))
	}
	if !strings.Contains(screen(m), "saved ") {
		t.Fatalf("no word of the save:\n%s", screen(m))
	}
	press(m, "tab-next", "save-media") // not on the response tab
	if _, ok := m.top().(*form); ok || !strings.Contains(screen(m), "save: nothing to save here") {
		t.Fatalf("s on the raw tab should not offer a save, and say why:\n%s", screen(m))
	}
}
