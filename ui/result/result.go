// Package result renders an MCP result (a tool call's, a resource read's,
// a prompt's messages) for people: each content item as what it is — text
// as text, Markdown rendered (markdown.go, on goldmark's parser),
// structuredContent as JSON beside the outputSchema it claims (side by
// side when wide enough), images, audio and blobs as their type, decoded
// size and dimensions, resource links as links, and an isError result
// unmistakable. The detail view shows the blocks in its pager; headless
// call prints the same blocks as lines (Render).
//
// Server text stays inert on every path: it is sanitised (termsafe) before
// Markdown sees it, so the only escape sequences in the output are the
// SGR colours the renderer adds, and even those only with a colour style;
// a link shows as its text and its URL, never as an OSC 8 hyperlink.
package result

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/jsonschema-go/jsonschema"

	"mcpscope/internal/render"
	"mcpscope/internal/termsafe"
)

// Class is how a block's lines are styled.
type Class uint8

const (
	Plain   Class = iota
	Faint         // descriptions, hints
	Heading       // what an item is
	Error         // an isError result's banner and its text
)

// Block is one piece of the rendering: lines of text, or a JSON value to
// show pretty-printed (and folded, where the viewer folds).
type Block struct {
	Class Class
	Lines []string      // inert; SGR colours only when Options.Markdown names a style
	JSON  []byte        // a JSON value (structuredContent, an outputSchema)
	Media *render.Media // an image, audio or blob the viewer can save
}

// Options say how to render.
type Options struct {
	Width int // columns for Markdown to wrap at (0: 80)
	// Markdown, when set ("dark"), renders Markdown with SGR colours for
	// a terminal; "" renders without colour, for a viewer that styles
	// lines itself (and for NO_COLOR).
	Markdown string
	// OutputSchema is the tool's, when known: structuredContent is shown
	// beside it and checked against it.
	OutputSchema json.RawMessage
}

// maxMarkdown is the longest text rendered as Markdown (the UI waits for
// it); a longer one shows as plain text.
const maxMarkdown = 64 << 10

// MaxBytes is the largest result rendered; a larger one is left to the
// raw JSON view, which is built for it.
const MaxBytes = 1 << 20

// content is one content item (or one resources/read contents entry).
type content struct {
	Type        string          `json:"type"`
	Text        *string         `json:"text"`
	Data        string          `json:"data"`
	Blob        string          `json:"blob"`
	MimeType    string          `json:"mimeType"`
	URI         string          `json:"uri"`
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Resource    *content        `json:"resource"`
	Annotations json.RawMessage `json:"annotations"` // read leniently: see annotations
	Raw         json.RawMessage `json:"-"`
}

// Blocks renders res; false when it is not a result this package knows
// (no content or contents), or too large.
func Blocks(res json.RawMessage, o Options) ([]Block, bool) {
	if len(res) > MaxBytes {
		return nil, false
	}
	var r struct {
		Content           []json.RawMessage `json:"content"`
		Contents          []json.RawMessage `json:"contents"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
		IsError           bool              `json:"isError"`
		Messages          []json.RawMessage `json:"messages"`
		Description       string            `json:"description"`
	}
	if json.Unmarshal(res, &r) != nil {
		return nil, false
	}
	if r.Content == nil && r.Contents == nil && len(r.StructuredContent) == 0 {
		if r.Messages != nil {
			return prompt(r.Description, r.Messages, o), true
		}
		return nil, false
	}
	var out []Block
	body := Plain
	if r.IsError {
		body = Error
		out = append(out, Block{Class: Error, Lines: []string{"✗ ERROR — the tool reported a failure (isError: true)", ""}})
	}
	items := append(r.Content, r.Contents...)
	if len(items) == 0 && len(r.StructuredContent) == 0 {
		out = append(out, Block{Class: Faint, Lines: []string{"(no content)"}})
	}
	for i, raw := range items {
		if i > 0 {
			out = append(out, Block{Lines: []string{""}})
		}
		var c content
		if json.Unmarshal(raw, &c) != nil {
			out = append(out, Block{Class: Faint, Lines: []string{"(an item that is not an object)"}}, Block{JSON: raw})
			continue
		}
		c.Raw = raw
		out = append(out, item(c, body, o)...)
	}
	if sc := bytes.TrimSpace(r.StructuredContent); len(sc) > 0 && string(sc) != "null" {
		out = append(out, structured(sc, o)...)
	}
	return out, true
}

// prompt renders a prompts/get result: its description, then each message
// under its role, its content items as a tool result's are.
func prompt(description string, messages []json.RawMessage, o Options) []Block {
	var out []Block
	if description != "" {
		out = append(out, Block{Class: Faint, Lines: []string{termsafe.Line(description)}})
	}
	if len(messages) == 0 {
		out = append(out, Block{Class: Faint, Lines: []string{"(no messages)"}})
	}
	for _, raw := range messages {
		if len(out) > 0 {
			out = append(out, Block{Lines: []string{""}})
		}
		var m struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw, &m) != nil {
			out = append(out, Block{Class: Faint, Lines: []string{"(a message that is not an object)"}}, Block{JSON: raw})
			continue
		}
		out = append(out, Block{Class: Heading, Lines: []string{"▸ " + termsafe.Line(firstNonEmpty(m.Role, "(no role)"))}})
		// One content block per message (the spec's); a list is read too.
		items := []json.RawMessage{m.Content}
		if c := bytes.TrimSpace(m.Content); len(c) > 0 && c[0] == '[' {
			items = nil
			_ = json.Unmarshal(c, &items)
		}
		for i, it := range items {
			if i > 0 {
				out = append(out, Block{Lines: []string{""}})
			}
			var c content
			if json.Unmarshal(it, &c) != nil {
				out = append(out, Block{Class: Faint, Lines: []string{"(content that is not an object)"}}, Block{JSON: it})
				continue
			}
			c.Raw = it
			out = append(out, item(c, Plain, o)...)
		}
	}
	return out
}

// SideBySide is the narrowest width at which structuredContent shows
// beside its outputSchema; narrower, the schema goes under it.
const SideBySide = 100

// structured shows structuredContent and the outputSchema it claims:
// side by side when Options.Width allows, as lines laid out here (neither
// folds); else one under the other, as JSON a viewer folds.
func structured(sc json.RawMessage, o Options) []Block {
	schema := bytes.TrimSpace(o.OutputSchema)
	if len(schema) == 0 || o.Width < SideBySide {
		out := []Block{{Lines: []string{""}}, {Class: Heading, Lines: []string{"structuredContent"}}, {JSON: sc}}
		if len(schema) > 0 {
			out = append(out, Block{Lines: []string{""}}, Block{Class: Heading, Lines: []string{"outputSchema (the tool's)"}}, verdict(sc, schema), Block{JSON: schema})
		}
		return out
	}
	col := (o.Width - len(gutter)) / 2
	return []Block{{Lines: []string{""}},
		{Class: Heading, Lines: []string{pad("structuredContent", col) + gutter + "outputSchema (the tool's)"}},
		verdict(sc, schema),
		{Lines: columns(jsonLines(sc), jsonLines(schema), col)}}
}

// gutter parts the two columns.
const gutter = " │ "

// columns lays left and right out side by side, each wrapped at width
// cells.
func columns(left, right []string, width int) []string {
	l, r := wrapAll(left, width), wrapAll(right, width)
	out := make([]string, max(len(l), len(r)))
	for i := range out {
		var a, b string
		if i < len(l) {
			a = l[i]
		}
		if i < len(r) {
			b = r[i]
		}
		out[i] = strings.TrimRight(pad(a, width)+gutter+b, " ")
	}
	return out
}

func wrapAll(lines []string, width int) []string {
	var out []string
	for _, l := range lines {
		out = append(out, strings.Split(ansi.Hardwrap(l, width, true), "\n")...)
	}
	return out
}

func pad(s string, width int) string {
	if n := ansi.StringWidth(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

// jsonLines is a JSON value indented and made inert, as lines.
func jsonLines(v json.RawMessage) []string {
	var ind bytes.Buffer
	if json.Indent(&ind, v, "", "  ") != nil {
		return strings.Split(termsafe.Text(string(v)), "\n")
	}
	return strings.Split(string(termsafe.JSON(ind.Bytes())), "\n")
}

// Prose is a server's free text for a view of its own (the session's
// instructions), read as a result reads a text item without a MIME type:
// rendered when it looks like Markdown, else its lines as they are.
// Either way it is inert, tabs show as four spaces, and its lines are at
// most o.Width wide: plain lines wrap at spaces, a rendered line still
// wider (code) is cut.
func Prose(s string, o Options) []string {
	w := o.Width
	if w <= 0 {
		w = 80
	}
	var ls []string
	md := false
	if rendersMarkdown(s, "") {
		ls, md = markdown(s, o)
	}
	if !md {
		ls = strings.Split(strings.TrimRight(termsafe.Text(s), "\n"), "\n")
	}
	var out []string
	for _, l := range ls {
		l = strings.ReplaceAll(l, "\t", "    ")
		if md {
			l = ansi.Hardwrap(l, w, true)
		} else {
			l = ansi.Wrap(l, w, "")
		}
		out = append(out, strings.Split(l, "\n")...)
	}
	return out
}

// item renders one content item, its annotations (a faint line) after
// its heading, or first when it has none.
func item(c content, body Class, o Options) []Block {
	bs := item1(c, body, o)
	a := annotations(c.Annotations)
	if a == "" {
		return bs
	}
	at := 0
	if len(bs) > 0 && bs[0].Class == Heading && bs[0].JSON == nil {
		at = 1
	}
	return append(bs[:at], append([]Block{{Class: Faint, Lines: []string{a}}}, bs[at:]...)...)
}

// annotations is a content item's annotations in one line ("for: user ·
// priority 0.8 · modified 2025-01-12T15:00:58Z"), "" when it has none. A
// field of an unexpected type shows as it is (a string as itself, else its
// JSON), so that a wrong one neither hides the item nor passes unseen.
func annotations(raw json.RawMessage) string {
	var a struct {
		Audience, Priority, LastModified json.RawMessage
	}
	if json.Unmarshal(raw, &a) != nil {
		return ""
	}
	var parts []string
	add := func(label string, v json.RawMessage, list bool) {
		v = bytes.TrimSpace(v)
		if len(v) == 0 || string(v) == "null" {
			return
		}
		var s string
		var ss []string
		switch {
		case json.Unmarshal(v, &s) == nil:
		case list && json.Unmarshal(v, &ss) == nil:
			s = strings.Join(ss, ", ")
		default:
			var c bytes.Buffer
			if json.Compact(&c, v) != nil {
				return
			}
			s = c.String()
		}
		parts = append(parts, label+s)
	}
	add("for: ", a.Audience, true)
	add("priority ", a.Priority, false)
	add("modified ", a.LastModified, false)
	return termsafe.Line(strings.Join(parts, " · "))
}

func item1(c content, body Class, o Options) []Block {
	head := func(s string) Block { return Block{Class: Heading, Lines: []string{termsafe.Line(s)}} }
	switch {
	case c.Type == "resource" && c.Resource != nil:
		r := *c.Resource
		return append([]Block{head("resource " + r.URI + mimeNote(r.MimeType))}, body1(r, body, o)...)
	case c.Type == "resource_link":
		l := []Block{head("link → " + c.URI + mimeNote(c.MimeType))}
		if n := firstNonEmpty(c.Title, c.Name); n != "" {
			l = append(l, Block{Lines: []string{"  " + termsafe.Line(n)}})
		}
		if c.Description != "" {
			l = append(l, Block{Class: Faint, Lines: []string{"  " + termsafe.Line(c.Description)}})
		}
		return l
	case c.Type == "image" || c.Type == "audio":
		m := render.DecodeMedia(c.Type, c.MimeType, c.Data, "")
		return []Block{{Class: Heading, Lines: []string{m.Describe()}, Media: m}}
	case c.Type == "text" || c.Type == "" && c.Text != nil || c.URI != "":
		if c.URI != "" && c.Type == "" { // a resources/read entry
			return append([]Block{head("resource " + c.URI + mimeNote(c.MimeType))}, body1(c, body, o)...)
		}
		return body1(c, body, o)
	}
	return []Block{head("[" + firstNonEmpty(c.Type, "no type") + "]"), {JSON: c.Raw}}
}

// body1 is a text or blob payload: Markdown rendered, JSON pretty-printed,
// other text as it is, a blob described.
func body1(c content, body Class, o Options) []Block {
	switch {
	case c.Blob != "":
		m := render.DecodeMedia("blob", c.MimeType, c.Blob, c.URI)
		return []Block{{Class: Heading, Lines: []string{m.Describe()}, Media: m}}
	case c.Text == nil:
		return []Block{{Class: Faint, Lines: []string{"(no text)"}}}
	}
	text := *c.Text
	mt := strings.ToLower(c.MimeType)
	switch {
	case strings.Contains(mt, "json") && json.Valid([]byte(text)):
		return []Block{{JSON: []byte(text)}}
	case rendersMarkdown(text, mt):
		if ls, ok := markdown(text, o); ok {
			return []Block{{Class: body, Lines: ls}}
		}
	}
	return []Block{{Class: body, Lines: strings.Split(strings.TrimRight(termsafe.Text(text), "\n"), "\n")}}
}

// rendersMarkdown says whether text is drawn as Markdown: its MIME type
// (lower-cased) says so, or it has none and looks like it; past
// maxMarkdown bytes it is shown as it is, whatever it claims.
func rendersMarkdown(text, mime string) bool {
	if len(text) > maxMarkdown {
		return false
	}
	return strings.Contains(mime, "markdown") || (mime == "" && looksMarkdown(text))
}

// verdict says whether a structuredContent keeps to the outputSchema it
// claims.
func verdict(sc, schema json.RawMessage) Block {
	var s jsonschema.Schema
	var v any
	if json.Unmarshal(schema, &s) != nil || json.Unmarshal(sc, &v) != nil {
		return Block{Class: Faint, Lines: []string{"(the outputSchema is unreadable)"}}
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return Block{Class: Faint, Lines: []string{"(the outputSchema cannot be resolved: " + termsafe.Line(err.Error()) + ")"}}
	}
	if err := rs.Validate(v); err != nil {
		return Block{Class: Error, Lines: []string{"✗ does not keep to the tool's outputSchema: " + termsafe.Line(err.Error())}}
	}
	return Block{Class: Faint, Lines: []string{"✓ keeps to the tool's outputSchema"}}
}

func mimeNote(mt string) string {
	if mt == "" {
		return ""
	}
	return " (" + mt + ")"
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// mdSigns are what makes text without a MIME type read as Markdown: a
// heading, a fence, a list, a quote, a link, emphasis, strikethrough, a
// table row or a table's delimiter row without its outer pipes ("--|--").
// Compiled on first use, not in the package's init.
var mdSigns = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("(?m)^(#{1,6} |```|[-*+] |\\d+\\. |> |\\|.*\\|\\s*$| {0,3}:?-+:?[ \\t]*\\|)|\\[[^\\]\\n]+\\]\\([^)\\s]+\\)|\\*\\*[^*\\n]+\\*\\*|~~[^~\\n]+~~")
})

func looksMarkdown(s string) bool { return mdSigns().MatchString(s) }
