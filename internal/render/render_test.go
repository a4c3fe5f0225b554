package render

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
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

// An image's dimensions come from its header, for PNG, JPEG and GIF.
func TestMediaDimensions(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 7, 5))
	enc := map[string]func(*bytes.Buffer) error{
		"png":  func(b *bytes.Buffer) error { return png.Encode(b, img) },
		"jpeg": func(b *bytes.Buffer) error { return jpeg.Encode(b, img, nil) },
		"gif":  func(b *bytes.Buffer) error { return gif.Encode(b, img, nil) },
	}
	for format, f := range enc {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			t.Fatal(err)
		}
		m := DecodeMedia("image", "image/"+format, base64.StdEncoding.EncodeToString(b.Bytes()), "")
		if m.Err != nil || m.W != 7 || m.H != 5 || m.Format != format || len(m.Data) != b.Len() {
			t.Errorf("%s: %+v", format, m)
		}
		if want := "7×5 " + strings.ToUpper(format); !strings.HasSuffix(m.Describe(), want) {
			t.Errorf("%s: %q does not end with %q", format, m.Describe(), want)
		}
	}
	if m := DecodeMedia("image", "image/png", "not base64!", ""); m.Err == nil || !strings.Contains(m.Describe(), "not base64") {
		t.Errorf("bad base64: %+v", m)
	}
}
