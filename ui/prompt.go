package ui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"mcpscope/filter"
	"mcpscope/ui/filterline"
	"mcpscope/ui/view"
)

// The input line under a pane (its filter) or the catalog (its find) is
// ui/filterline; here is what it filters.

// promptTarget is what the input line filters.
type promptTarget uint8

const (
	targetRequests promptTarget = iota
	targetNotes
	targetCatalog
)

// openFilter opens the input line over the focused pane.
func (m *Model) openFilter() {
	t, expr := targetRequests, m.find.req.expr
	if m.focus == paneNotes {
		t, expr = targetNotes, m.find.note.expr
	}
	m.find.prompt = newFilterPrompt(m, t, expr)
}

func newFilterPrompt(m *Model, t promptTarget, text string) *filterline.Line {
	return filterline.New(m.viewCtx(), lineTarget{m, t}, text)
}

// promptKey handles a key while the input line is open.
func (m *Model) promptKey(msg tea.KeyPressMsg) tea.Cmd {
	return m.promptDone(m.find.prompt.Key(m.viewCtx(), msg))
}

// promptPaste puts pasted text in the input line.
func (m *Model) promptPaste(msg tea.PasteMsg) tea.Cmd { return m.promptDone(m.find.prompt.Paste(msg)) }

// promptDone applies what the line asked; Close takes it away.
func (m *Model) promptDone(a view.Action) tea.Cmd {
	if a.Close {
		m.find.prompt = nil
	}
	return a.Cmd
}

// promptLines are the input line and the line under it.
func (m *Model) promptLines(w int) (string, string) { return m.find.prompt.Lines(m.viewCtx(), w) }

// lineTarget is a pane's filter, or the catalog's find, as the input line
// sees it.
type lineTarget struct {
	m *Model
	t promptTarget
}

func (lt lineTarget) Label() string {
	switch lt.t {
	case targetRequests:
		return " filter requests › "
	case targetNotes:
		return " filter notifications › "
	}
	return " find › "
}

func (lt lineTarget) Expressions() bool { return lt.t != targetCatalog }

// Apply sets a pane's filter (or the catalog's find) to text, which
// parses; "" clears it.
func (lt lineTarget) Apply(text string) {
	m := lt.m
	switch lt.t {
	case targetCatalog:
		m.catalog.SetFind(text)
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

func (lt lineTarget) Move(d int) {
	m := lt.m
	switch lt.t {
	case targetCatalog:
		m.catalog.Move(d)
	case targetRequests:
		m.move(&m.req, m.reqLen(), d)
	case targetNotes:
		m.move(&m.note, m.visibleNotes(), d)
	}
	m.fixScroll()
}

func (lt lineTarget) Count() string {
	m := lt.m
	switch lt.t {
	case targetRequests:
		if cf := &m.find.req; cf.f != nil {
			return " · " + itoa(len(cf.hits)) + " of " + itoa(m.h.ncalls) + " calls match"
		}
	case targetNotes:
		if nf := &m.find.note; nf.f != nil {
			return " · " + itoa(nf.hits.len()) + " of " + itoa(m.h.rows[nf.kind].len()) + " rows match"
		}
	case targetCatalog:
		return " · " + m.catalog.Count()
	}
	return ""
}
