package ui

import (
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/filter"
	"mcpscope/internal/termsafe"
	"mcpscope/ui/keys"
)

// The input line under a pane (its filter) or the catalog (its find). It
// takes the body's last line and the footer while it is open; what is
// typed applies at once when it parses.

// promptTarget is what the input line filters.
type promptTarget uint8

const (
	targetRequests promptTarget = iota
	targetNotes
	targetCatalog
)

// filterPrompt is the input line of a filter (or of the catalog's find).
// The filter applies as it is typed, once it parses; a syntax error is
// shown with a caret under its column and the filter before it stays.
type filterPrompt struct {
	target promptTarget
	in     textinput.Model
	before string // what esc goes back to
	err    *filter.SyntaxError
}

// openFilter opens the input line over the focused pane.
func (m *Model) openFilter() {
	t, expr := targetRequests, m.find.req.expr
	if m.focus == paneNotes {
		t, expr = targetNotes, m.find.note.expr
	}
	m.find.prompt = newFilterPrompt(m, t, expr)
}

func newFilterPrompt(m *Model, t promptTarget, text string) *filterPrompt {
	in := newLine(text, m.th)
	in.Placeholder = "~e · ~t echo · ~m tools/* & ~dur >1s · text"
	if t == targetCatalog {
		in.Placeholder = "a name, a title or words of a description"
	}
	return &filterPrompt{target: t, in: in, before: text}
}

// promptKey handles a key while the input line is open.
func (m *Model) promptKey(msg tea.KeyPressMsg) tea.Cmd {
	p := m.find.prompt
	switch m.km.Lookup(keys.Filter, msg.String(), false) {
	case "filter-apply":
		m.find.prompt = nil
		return nil
	case "filter-cancel":
		m.find.prompt = nil
		m.applyText(p.target, p.before)
		return nil
	case "filter-up":
		m.promptMove(p.target, -1)
		return nil
	case "filter-down":
		m.promptMove(p.target, 1)
		return nil
	}
	var cmd tea.Cmd
	old := p.in.Value()
	p.in, cmd = p.in.Update(msg)
	if v := p.in.Value(); v != old {
		m.typed(p, v)
	}
	return cmd
}

// promptPaste puts pasted text in the input line, made inert and on one line.
func (m *Model) promptPaste(msg tea.PasteMsg) tea.Cmd {
	p := m.find.prompt
	old := p.in.Value()
	var cmd tea.Cmd
	p.in, cmd = p.in.Update(tea.PasteMsg{Content: strings.ReplaceAll(termsafe.Line(msg.Content), "⏎", " ")})
	if v := p.in.Value(); v != old {
		m.typed(p, v)
	}
	return cmd
}

// typed applies the input line's text when it parses.
func (m *Model) typed(p *filterPrompt, text string) {
	p.err = nil
	if p.target != targetCatalog {
		if _, err := filter.Parse(text); err != nil {
			p.err, _ = err.(*filter.SyntaxError)
			if p.err == nil {
				p.err = &filter.SyntaxError{Col: 1, Msg: err.Error(), Input: text}
			}
			return
		}
	}
	m.applyText(p.target, text)
}

// applyText sets a pane's filter (or the catalog's find) to text, which
// must parse; "" clears it.
func (m *Model) applyText(t promptTarget, text string) {
	switch t {
	case targetCatalog:
		m.catalog.setFind(text)
	case targetRequests:
		if m.find.req.f != nil && strings.TrimSpace(text) == m.find.req.expr {
			return // a space more: the same filter, no check over again
		}
		f, _ := filter.Parse(text)
		m.setCallFilter(text, f)
	case targetNotes:
		if m.find.note.f != nil && strings.TrimSpace(text) == m.find.note.expr {
			return
		}
		f, _ := filter.Parse(text)
		m.setNoteFilter(text, f)
	}
}

func (m *Model) promptMove(t promptTarget, d int) {
	switch t {
	case targetCatalog:
		m.catalog.move(d)
	case targetRequests:
		m.move(&m.req, m.reqLen(), d)
	case targetNotes:
		m.move(&m.note, m.visibleNotes(), d)
	}
	m.fixScroll()
}

// promptLines are the input line and, under it, the caret under a syntax
// error's column or the keys and the count.
func (m *Model) promptLines(w int) (string, string) {
	p := m.find.prompt
	var label string
	switch p.target {
	case targetRequests:
		label = " filter requests › "
	case targetNotes:
		label = " filter notifications › "
	default:
		label = " find › "
	}
	p.in.SetWidth(max(10, w-ansi.StringWidth(label)-1))
	input := m.th.Accent.Render(label) + p.in.View()
	if p.err != nil {
		r := []rune(p.err.Input)
		col := ansi.StringWidth(label) + ansi.StringWidth(string(r[:clamp(p.err.Col-1, 0, len(r))]))
		msg := "column " + itoa(p.err.Col) + ": " + termsafe.Line(p.err.Msg)
		// The message goes right of the caret, or left of it when it fits
		// only there or there is more room there.
		var line string
		if right := w - col - 2; ansi.StringWidth(msg) <= right || right >= col-1 {
			line = strings.Repeat(" ", col) + "^ " + msg
		} else {
			msg = fit(msg, max(1, col-1))
			line = msg + strings.Repeat(" ", max(1, col-ansi.StringWidth(msg))) + "^"
		}
		return fit(input, w), m.th.Error.Render(fit(line, w))
	}
	var b strings.Builder
	for _, k := range [][2]string{{m.keyOf("filter-apply"), "keep"}, {m.keyOf("filter-cancel"), "cancel"},
		{m.keyOf("filter-up") + "/" + m.keyOf("filter-down"), "select"}} {
		b.WriteString(" " + m.th.HelpKey.Render(k[0]) + " " + m.th.Faint.Render(k[1]))
	}
	switch p.target {
	case targetRequests:
		if cf := &m.find.req; cf.f != nil {
			b.WriteString(m.th.Faint.Render(" · " + itoa(len(cf.hits)) + " of " + itoa(len(m.h.calls)) + " calls match"))
		}
	case targetNotes:
		if nf := &m.find.note; nf.f != nil {
			b.WriteString(m.th.Faint.Render(" · " + itoa(nf.hits.len()) + " of " + itoa(m.h.rows[nf.kind].len()) + " rows match"))
		}
	case targetCatalog:
		b.WriteString(m.th.Faint.Render(" · " + m.catalog.findCount()))
	}
	return fit(input, w), fit(b.String(), w)
}
