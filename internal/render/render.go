// Package render writes MCP results for people and for programs on the
// headless paths: tool results and resource contents as text, prompts as
// messages, anything else as indented JSON. Every byte that came from a
// server is made inert first (package termsafe).
package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"mcpscope/internal/termsafe"
)

// Result writes res: as JSON when asJSON (for programs), else through human
// when it recognises the shape, else as indented JSON made safe to show.
func Result(w io.Writer, asJSON bool, res json.RawMessage, human func(io.Writer, json.RawMessage) bool) {
	if !asJSON && human != nil && human(w, res) {
		return
	}
	Indented(w, res)
}

// Indented writes raw indented, with controls and bidi characters escaped;
// text that is not JSON is shown sanitised.
func Indented(w io.Writer, raw json.RawMessage) {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		fmt.Fprintln(w, termsafe.Text(string(raw)))
		return
	}
	b.WriteByte('\n')
	w.Write(termsafe.JSON(b.Bytes()))
}

// Line writes v as one line of JSON (JSONL), made safe like Indented.
func Line(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Write(append(termsafe.JSON(b), '\n'))
	return nil
}

// Contents writes a tool result or resource contents for people; false
// means it has no readable shape (print JSON instead).
func Contents(w io.Writer, res json.RawMessage) bool {
	var r struct {
		Content           []Content       `json:"content"`
		Contents          []Content       `json:"contents"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if json.Unmarshal(res, &r) != nil || (r.Content == nil && r.Contents == nil) {
		return false
	}
	for _, c := range append(r.Content, r.Contents...) {
		fmt.Fprintln(w, c.Human())
	}
	if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		fmt.Fprintf(w, "structuredContent: %s\n", termsafe.Line(string(r.StructuredContent)))
	}
	return true
}

// Prompt writes a prompts/get result for people.
func Prompt(w io.Writer, res json.RawMessage) bool {
	var r struct {
		Description string `json:"description"`
		Messages    []struct {
			Role    string  `json:"role"`
			Content Content `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(res, &r) != nil || r.Messages == nil {
		return false
	}
	if r.Description != "" {
		fmt.Fprintln(w, termsafe.Line(r.Description))
	}
	for _, m := range r.Messages {
		fmt.Fprintf(w, "%s: %s\n", termsafe.Line(m.Role), m.Content.Human())
	}
	return true
}

// Content is one content block (text, image, audio, resource, link).
type Content struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	URI      string `json:"uri"`
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
	Blob     string `json:"blob"`
	Name     string `json:"name"`
	Resource *struct {
		URI      string `json:"uri"`
		Text     string `json:"text"`
		Blob     string `json:"blob"`
		MimeType string `json:"mimeType"`
	} `json:"resource"`
}

// Media decodes an image, audio or blob block (nil for other blocks).
func (c Content) Media() *Media {
	switch {
	case c.Data != "":
		return DecodeMedia(c.Type, c.MimeType, c.Data, c.URI)
	case c.Blob != "":
		return DecodeMedia("blob", c.MimeType, c.Blob, c.URI)
	}
	return nil
}

// Human is the block for people, sanitised: its text, or a one-line
// description of what it holds.
func (c Content) Human() string {
	switch {
	case c.Text != "":
		return termsafe.Text(c.Text)
	case c.Resource != nil && c.Resource.Blob != "":
		return "[" + DecodeMedia("blob", c.Resource.MimeType, c.Resource.Blob, c.Resource.URI).Describe() + "]"
	case c.Resource != nil:
		return termsafe.Text(fmt.Sprintf("[resource %s]\n%s", c.Resource.URI, c.Resource.Text))
	case c.Data != "" || c.Blob != "":
		return "[" + c.Media().Describe() + "]"
	case c.Type == "resource_link":
		return termsafe.Line(fmt.Sprintf("[link %s %s]", c.Name, c.URI))
	}
	return termsafe.Line(fmt.Sprintf("[%s]", c.Type))
}

// FirstText is the first content block of a tool result as one short line
// (for summaries), "" when there is none.
func FirstText(res json.RawMessage, max int) string {
	var r struct {
		Content []Content `json:"content"`
	}
	_ = json.Unmarshal(res, &r)
	if len(r.Content) == 0 {
		return ""
	}
	text := strings.ReplaceAll(r.Content[0].Human(), "\n", " ")
	if len(text) > max {
		text = text[:max-3] + "..."
	}
	return text
}
