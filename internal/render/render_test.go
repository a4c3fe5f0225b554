package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// A blob's size is its decoded bytes', not its base64 text's (issue 23):
// "AAECAwQF" is 8 characters of base64 for 6 bytes.
func TestContentsBlobSizeDecoded(t *testing.T) {
	var b bytes.Buffer
	ok := Contents(&b, json.RawMessage(`{"contents":[{"uri":"file:///x.bin","mimeType":"application/octet-stream","blob":"AAECAwQF"}],
		"content":[{"type":"image","mimeType":"image/png","data":"AAECAwQF"},{"type":"resource","resource":{"uri":"file:///y","blob":"AAE="}}]}`))
	got := b.String()
	for _, want := range []string{"[image · image/png · 6 bytes]", "[blob · file:///y · 2 bytes]", "[blob · application/octet-stream · file:///x.bin · 6 bytes]"} {
		if !ok || !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "base64") {
		t.Errorf("sizes in base64 characters:\n%s", got)
	}
}

// Sizes read the way people say them.
func TestSize(t *testing.T) {
	for n, want := range map[int]string{1: "1 byte", 6: "6 bytes", 2048: "2.0 KiB", 3 << 20: "3.0 MiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
