package detail

import (
	"encoding/json"

	"mcpscope/framestore"
	"mcpscope/internal/render"
	"mcpscope/session"
	"mcpscope/ui/result"
	"mcpscope/ui/view"
	"mcpscope/ui/widget/pager"
)

// resultView is the response tab's rendered view (package result): on by
// default, v switches to the raw JSON and back.
type resultView struct {
	raw    bool      // show the raw JSON
	can    bool      // the response has a rendered view (v has something to switch)
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
func (v *View) renderedResponse(c view.Context, sn session.CallSnapshot, resp []*framestore.Item) (*pager.Doc, bool) {
	rv := &v.rv
	rv.shown, rv.media, rv.can = false, nil, false
	if len(resp) == 0 {
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
		schema = v.s.OutputSchema(sn.Name)
	}
	w, _ := v.s.Area()
	bs, ok := result.Blocks(env.Result, result.Options{Width: w - 1, OutputSchema: schema})
	if rv.can = ok; !ok || rv.raw {
		return nil, false
	}
	dc := &pager.Doc{}
	dc.AddText(pager.Faint, "rendered result — "+c.KeyOf("result-view")+" shows the raw JSON", "")
	for _, b := range bs {
		switch {
		case b.JSON != nil:
			dc.AddJSON(b.JSON)
			continue
		case b.Media != nil:
			rv.media = append(rv.media, mediaAt{line: dc.Lines(), m: b.Media})
		}
		dc.AddText(classes[b.Class], b.Lines...)
		if b.Media != nil && b.Media.Err == nil {
			dc.AddText(pager.Faint, "  "+c.KeyOf("save-media")+" saves the decoded bytes to a file")
		}
	}
	rv.shown = true
	return dc, true
}

// classes are the pager's styles of the renderer's classes.
var classes = map[result.Class]pager.Class{result.Plain: pager.Plain, result.Faint: pager.Faint, result.Heading: pager.Heading, result.Error: pager.Error}

// foldRendered folds the rendered view's JSON (structuredContent, the
// outputSchema) the first time it shows.
func (v *View) foldRendered() {
	if v.rv.shown && !v.rv.folded && len(v.tabs) > 1 {
		v.tabs[1].p.FoldAll()
		v.rv.folded = true
	}
}

// toggleResultView switches the response tab between rendered and raw,
// and shows it.
func (v *View) toggleResultView(c view.Context) view.Action {
	v.rv.raw, v.rv.folded = !v.rv.raw, false
	v.version = ""
	v.refresh(c)
	v.tab = 1
	if !v.rv.raw && !v.rv.shown {
		return view.Flash("this response has no rendered view (not a tool result or resource contents, or over " + render.Size(result.MaxBytes) + ")")
	}
	return view.Action{}
}

// whyNoSave is why s has nothing to save: only a rendered response's
// media can be saved.
func (v *View) whyNoSave(c view.Context) string {
	if !v.rv.shown || v.tab != 1 || len(v.rv.media) == 0 {
		return "nothing to save here: " + c.KeyOf("save-media") + " saves an image, audio or blob in a rendered response"
	}
	return ""
}

// saveMedia saves the image, audio or blob at the cursor (the last one
// starting at or above it, else the first): the root asks where and writes
// its decoded bytes there.
func (v *View) saveMedia(view.Context) view.Action {
	pick := v.rv.media[0]
	for _, ma := range v.rv.media {
		if ma.line <= v.cur().p.Cursor() {
			pick = ma
		}
	}
	md := pick.m
	if md.Err != nil {
		return view.Flash("cannot save: " + md.Describe())
	}
	return v.s.Save(md.Describe(), md.FileName(), md.Data)
}
