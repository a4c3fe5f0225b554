package ui

import (
	tea "charm.land/bubbletea/v2"

	"mcpscope/ui/detail"
)

// mouseWheel scrolls whatever is under the pointer.
func (m *Model) mouseWheel(ms tea.Mouse) {
	d := 0
	switch ms.Button {
	case tea.MouseWheelUp:
		d = -3
	case tea.MouseWheelDown:
		d = 3
	default:
		return
	}
	if dt, ok := m.topDetail(); ok {
		dt.Scroll(d)
		return
	}
	if md := m.top(); md != nil {
		name := "down"
		if d < 0 {
			name = "up"
		}
		for i := 0; i < 3; i++ {
			md.key(m, name, tea.KeyPressMsg{})
		}
		return
	}
	if m.inCat {
		return
	}
	p, _ := m.paneAt(ms.Y)
	ls, n := &m.req, m.reqLen()
	if p == paneNotes {
		ls, n = &m.note, m.visibleNotes()
	}
	m.move(ls, n, d)
	m.fixScroll()
}

// mouseClick focuses the pane under the pointer and selects the row; side
// by side, a click in the list shows that row's detail.
func (m *Model) mouseClick(ms tea.Mouse) {
	d, beside := m.topDetail()
	beside = beside && m.sideBySide() && ms.X < m.listWidth() && len(m.modals) == 1
	if ms.Button != tea.MouseLeft || (m.top() != nil && !beside) || m.inCat {
		return
	}
	p, row := m.paneAt(ms.Y)
	if row < 0 {
		return
	}
	m.focus = p
	ls, n := m.focused()
	if i := ls.top + row; i < n {
		ls.sel, ls.follow = i, false
	}
	m.fixScroll()
	if beside {
		if p == paneNotes {
			d.Show(m.viewCtx(), detail.FromNotes, nil, m.selectedNote())
		} else {
			d.Show(m.viewCtx(), detail.FromRequests, m.selectedCall(), nil)
		}
	}
}

// paneAt maps a screen row to a pane and a row inside it (-1 = title or
// outside the lists).
func (m *Model) paneAt(y int) (pane, int) {
	reqH, progH, _ := m.layout()
	y-- // status bar
	switch {
	case y < 0:
		return paneRequests, -1
	case y < reqH:
		return paneRequests, y - 1
	case y < reqH+progH:
		return paneRequests, -1
	}
	return paneNotes, y - reqH - progH - 1
}
