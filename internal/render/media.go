package render

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	_ "image/gif" // DecodeConfig reads GIF, JPEG and PNG headers
	_ "image/jpeg"
	_ "image/png"
	"mime"
	"path"
	"strings"

	"mcpscope/internal/termsafe"
)

// Media is a binary content item decoded: an image, an audio clip or a
// resource blob. Its size is the decoded bytes', not the base64 text's.
type Media struct {
	Kind     string // image, audio or blob
	MimeType string
	URI      string // a resource blob's
	Data     []byte // decoded
	Err      error  // the base64 did not decode
	// Format, W and H come from an image's header (PNG, JPEG, GIF); zero
	// when unknown.
	Format string
	W, H   int
}

// DecodeMedia decodes a base64 payload (standard, or without padding, as
// some servers send) and reads an image's dimensions from its header.
func DecodeMedia(kind, mimeType, b64, uri string) *Media {
	m := &Media{Kind: kind, MimeType: mimeType, URI: uri}
	b64 = strings.TrimSpace(b64)
	m.Data, m.Err = base64.StdEncoding.DecodeString(b64)
	if m.Err != nil {
		if raw, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(b64, "=")); err == nil {
			m.Data, m.Err = raw, nil
		}
	}
	if m.Err == nil {
		if cfg, format, err := image.DecodeConfig(bytes.NewReader(m.Data)); err == nil {
			m.Format, m.W, m.H = format, cfg.Width, cfg.Height
		}
	}
	return m
}

// Describe is the item in one line, sanitised: what it is, its decoded
// size and, for an image, its dimensions.
func (m *Media) Describe() string {
	parts := []string{m.Kind}
	if m.MimeType != "" {
		parts = append(parts, m.MimeType)
	}
	if m.URI != "" {
		parts = append(parts, m.URI)
	}
	if m.Err != nil {
		parts = append(parts, "not base64 ("+m.Err.Error()+")")
	} else {
		parts = append(parts, Size(len(m.Data)))
	}
	if m.W > 0 || m.H > 0 {
		parts = append(parts, fmt.Sprintf("%d×%d %s", m.W, m.H, strings.ToUpper(m.Format)))
	}
	return termsafe.Line(strings.Join(parts, " · "))
}

// FileName suggests a name to save the item as: the last part of its URI,
// else its kind with the extension its MIME type has.
func (m *Media) FileName() string {
	if m.URI != "" {
		if b := path.Base(strings.TrimRight(m.URI, "/")); b != "." && b != "/" && !strings.Contains(b, ":") {
			return termsafe.Line(b)
		}
	}
	ext := ""
	if m.Format != "" {
		ext = "." + m.Format
	} else if exts, _ := mime.ExtensionsByType(m.MimeType); len(exts) > 0 {
		ext = exts[0]
	}
	return m.Kind + ext
}

// Size is a byte count for people: exact below a KiB, else with one
// decimal in KiB or MiB.
func Size(n int) string {
	switch {
	case n == 1:
		return "1 byte"
	case n < 1024:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
