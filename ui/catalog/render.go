package catalog

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"mcpscope/internal/termsafe"
	"mcpscope/ui/view"
	"mcpscope/ui/widget"
)

// Wide is the width from which the selected tool's schemas show beside
// the list rather than under it.
const Wide = 110

// minRest is what the name column leaves at least for a row's title or
// description: names come first, the rest is cut.
const minRest = 16

func (v *View) Render(c view.Context, w, h int) string {
	th := c.Theme
	var tabs []string
	for i, s := range v.secs {
		lb := fmt.Sprintf(" %s (%d) ", s.label, len(s.entries))
		if v.find != "" {
			lb = fmt.Sprintf(" %s (%d/%d) ", s.label, s.n(), len(s.entries))
		}
		if i == v.cur {
			tabs = append(tabs, th.Selected.Render(lb))
		} else {
			tabs = append(tabs, th.Faint.Render(lb))
		}
	}
	head := th.Title.Render(" Catalog ")
	if v.find != "" {
		head += th.Accent.Render(" find “" + termsafe.Line(widget.Shorten(v.find, 24)) + "” ")
	}
	l := []string{head + strings.Join(tabs, "│")}
	s := v.secs[v.cur]
	// A tool's schemas and annotations: beside the list when the terminal
	// is wide, else under the entry's description (a third of the height).
	full := w
	var side, under []string
	if s.label == "tools" && s.n() > 0 && s.pending == nil {
		e, _ := s.at(widget.Clamp(s.sel, 0, s.n()-1))
		if w >= Wide {
			w = full * 11 / 20
			side = schemaLines(c, e, full-w-2, false)
		} else {
			under = append([]string{""}, schemaLines(c, e, w-2, true)...)
			for i := range under {
				under[i] = " " + under[i]
			}
		}
	}
	switch {
	case s.pending != nil:
		l = append(l, th.Faint.Render("   loading…"))
	case s.err != "":
		l = append(l, th.Error.Render("   "+s.err))
	case len(s.entries) == 0:
		l = append(l, th.Faint.Render("   (empty)"))
	case s.n() == 0:
		l = append(l, th.Faint.Render("   nothing here matches “"+termsafe.Line(v.find)+"” — "+c.KeyOf("catalog-close")+" clears the find"))
	}
	subs := map[string]bool{}
	for _, u := range v.host.Info().Subscriptions {
		subs[u] = true
	}
	uris := s.label == "resources" || s.label == "templates"
	// The name column is as wide as the widest name, leaving minRest for
	// the title or description (issue 23: at 80 columns names were cut to
	// six cells while descriptions had the room); the selected entry is
	// spelled out whole below the list when its column cut it.
	nameW := 8
	for _, e := range s.entries {
		nameW = max(nameW, ansi.StringWidth(entryName(s.label, e)))
	}
	nameW = min(nameW, max(12, w-4-minRest))
	var about []string
	if s.n() > 0 {
		e, _ := s.at(widget.Clamp(s.sel, 0, s.n()-1))
		about = append(about, "")
		if ansi.StringWidth(entryName(s.label, e)) > nameW {
			about = append(about, indentWrap(entryName(s.label, e), 1, w, 3)...)
		}
		if e.title != "" && uris {
			about = append(about, indentWrap(termsafe.Line(e.title), 1, w, 2)...)
		}
		for _, dl := range indentWrap(termsafe.Line(e.desc), 1, w, 4) {
			about = append(about, th.Faint.Render(dl))
		}
	}
	// The list keeps a third of the height (all of a shorter list); the
	// schemas get what is left, cut with a word of where the rest is.
	if avail := h - len(l) - len(about) - min(s.n(), max(3, (h-1)/3)); len(under) > max(2, avail) {
		under = append(under[:max(1, avail-1)], th.Faint.Render(widget.Fit("  … (from "+strconv.Itoa(Wide)+" columns the schemas show beside the list)", w)))
	}
	about = append(about, under...)
	room := max(1, h-len(l)-len(about))
	top := widget.Clamp(s.sel-room+1, 0, max(0, s.n()-room))
	for i := top; i < s.n() && i < top+room; i++ {
		e, hit := s.at(i)
		mark := " "
		if subs[e.uri] && s.label == "resources" {
			mark = "●"
		}
		mark = findingMark(e, mark)
		// The find's matched letters are marked in the field they matched.
		var nameIdx, restIdx []int
		if hit != nil {
			switch {
			case hit.field == fieldName:
				nameIdx = hit.idx
			case hit.field == fieldTitle && e.title != "", hit.field == fieldDesc && e.title == "":
				restIdx = hit.idx
			}
		}
		rest := termsafe.Line(widget.FirstNonEmpty(e.title, e.desc))
		if restIdx != nil {
			rest = marked(rest, restIdx, th.Match, ansi.StringWidth(rest))
		}
		row := mark + " " + marked(entryName(s.label, e), nameIdx, th.Match, nameW) + " " + rest
		if i == s.sel {
			l = append(l, th.Selected.Render(widget.Pad("▸"+ansi.Strip(row), w)))
		} else {
			l = append(l, widget.Fit(" "+row, w))
		}
	}
	l = append(l, about...)
	if side != nil {
		rows := l[1:]
		for len(rows) < h-1 {
			rows = append(rows, "")
		}
		l = append(l[:1], besides(rows, side, w, th.Faint.Render("│")+" ")...)
		if len(l) > h {
			l = l[:h]
		}
	}
	return strings.Join(l, "\n")
}

// wrapLines is widget.WrapLines: one line of text in at most n lines of w
// columns, the last one cut.
func wrapLines(s string, w, n int) []string { return widget.WrapLines(s, w, n) }

// indentWrap is wrapLines with every line indented, the second and later
// ones too (issue 23: a description's second line lost its indent).
func indentWrap(s string, indent, w, n int) []string {
	ls := wrapLines(s, w-indent, n)
	for i := range ls {
		ls[i] = strings.Repeat(" ", indent) + ls[i]
	}
	return ls
}
