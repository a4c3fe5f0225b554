package ui

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	tea "charm.land/bubbletea/v2"

	"mcpscope/internal/render"
	"mcpscope/internal/termsafe"
	"mcpscope/internal/userfile"
	"mcpscope/session"
	"mcpscope/ui/result"
)

// resultView is the response tab's rendered view (package result): on by
// default, v switches to the raw JSON and back.
type resultView struct {
	raw    bool      // show the raw JSON
	shown  bool      // the response tab shows the rendering now
	folded bool      // its JSON was folded once, when first shown
	media  []mediaAt // what s saves
}

// mediaAt is a saveable item and the doc line its block starts on.
type mediaAt struct {
	line int
	m    *render.Media
}

// renderedResponse builds the rendered response doc of a call, when its
// last response is a result the renderer knows and not too large to hold.
func (d *detail) renderedResponse(m *Model, sn session.CallSnapshot, resp []*session.Item) (*doc, bool) {
	rv := &d.rv
	rv.shown, rv.media = false, nil
	if rv.raw || len(resp) == 0 {
		return nil, false
	}
	it := resp[len(resp)-1]
	if it.Cut || len(it.Frame.Data) > result.MaxBytes {
		return nil, false
	}
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(it.Frame.Data, &env) != nil || len(env.Result) == 0 {
		return nil, false
	}
	var schema json.RawMessage
	if sn.Method == "tools/call" {
		schema = m.catalog.outputSchema(sn.Name)
	}
	w, _ := m.detailArea()
	bs, ok := result.Blocks(env.Result, result.Options{Width: w - 1, OutputSchema: schema})
	if !ok {
		return nil, false
	}
	dc := &doc{}
	dc.addText(clFaint, "rendered result — "+m.keyOf("result-view")+" shows the raw JSON", "")
	for _, b := range bs {
		switch {
		case b.JSON != nil:
			dc.addJSON(b.JSON)
			continue
		case b.Media != nil:
			rv.media = append(rv.media, mediaAt{line: dc.n, m: b.Media})
		}
		dc.addText(map[result.Class]uint8{result.Plain: clPlain, result.Faint: clFaint, result.Heading: clKey, result.Error: clError}[b.Class], b.Lines...)
		if b.Media != nil && b.Media.Err == nil {
			dc.addText(clFaint, "  "+m.keyOf("save-media")+" saves the decoded bytes to a file")
		}
	}
	rv.shown = true
	return dc, true
}

// foldRendered folds the rendered view's JSON (structuredContent, the
// outputSchema) the first time it shows.
func (d *detail) foldRendered() {
	if d.rv.shown && !d.rv.folded && len(d.tabs) > 1 {
		d.tabs[1].p.foldAll()
		d.rv.folded = true
	}
}

// toggleResultView switches the response tab between rendered and raw.
func (d *detail) toggleResultView(m *Model) {
	if d.call == nil {
		return
	}
	d.rv.raw, d.rv.folded = !d.rv.raw, false
	d.version = ""
	d.refresh(m)
	if !d.rv.raw && !d.rv.shown {
		m.setFlash("this response has no rendered view (not a tool result or resource contents, or over " + render.Size(result.MaxBytes) + ")")
	}
	d.tab = 1
}

// saveMedia asks where to save the image, audio or blob at the cursor
// (the last one starting at or above it, else the first) and writes its
// decoded bytes there, through userfile like every user-named file.
func (d *detail) saveMedia(m *Model) tea.Cmd {
	rv := &d.rv
	if !rv.shown || d.tab != 1 || len(rv.media) == 0 {
		m.setFlash("nothing to save here: " + m.keyOf("save-media") + " saves an image, audio or blob in a rendered response")
		return nil
	}
	pick := rv.media[0]
	for _, ma := range rv.media {
		if ma.line <= d.cur().p.cur {
			pick = ma
		}
	}
	md := pick.m
	if md.Err != nil {
		m.setFlash("cannot save: " + md.Describe())
		return nil
	}
	name := md.FileName()
	if wd, err := os.Getwd(); err == nil {
		name = filepath.Join(wd, name)
	}
	f := &form{title: "Save " + md.Describe() + " — enter saves, esc cancels",
		fields: []*field{withDesc(newTextField("file", "file", name, true), "the decoded bytes are written here (an existing file is replaced)")}}
	f.onSubmit = func(m *Model, args json.RawMessage) tea.Cmd {
		var a struct {
			File string `json:"file"`
		}
		_ = json.Unmarshal(args, &a)
		err := userfile.Write(a.File, 0o644, func(w io.Writer) error {
			_, err := w.Write(md.Data)
			return err
		})
		if err != nil {
			m.setFlash("save: " + termsafe.Line(err.Error()))
			return nil
		}
		m.setFlash("saved " + render.Size(len(md.Data)) + " to " + termsafe.Line(a.File))
		return nil
	}
	m.push(f)
	return nil
}
