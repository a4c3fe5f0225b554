package ui

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/framestore"
	"mcpscope/internal/render"
	"mcpscope/internal/termsafe"
	"mcpscope/internal/userfile"
	"mcpscope/session"
	"mcpscope/ui/detail"
	"mcpscope/ui/view"
)

// The detail view (ui/detail) over the root: how it is opened, and the
// part of the session and the root it is given (detailOf).

// openDetail shows the focused pane's selected row.
func (m *Model) openDetail() {
	t := detail.Target{Call: m.selectedCall(), From: detail.FromRequests}
	if m.focus == paneNotes {
		t = detail.Target{Item: m.selectedNote(), From: detail.FromNotes}
	}
	if t.Call == nil && t.Item == nil {
		return
	}
	m.showDetail(t)
}

// landOn opens a call just sent on its response tab, where the answer
// appears when it comes; the requests pane selects it underneath.
func (m *Model) landOn(c *session.Call) {
	m.req.follow = true
	m.fixScroll()
	m.showDetail(detail.Target{Call: c, Tab: 1, From: detail.FromRequests, Follow: true})
}

// showCall opens c's detail on tab.
func (m *Model) showCall(c *session.Call, tab int) { m.showDetail(detail.Target{Call: c, Tab: tab}) }

func (m *Model) showDetail(t detail.Target) { m.open(detail.New(m.viewCtx(), detailOf{m}, t)) }

// topDetail is the detail on top, if it is.
func (m *Model) topDetail() (*detail.View, bool) {
	c, ok := m.top().(*component)
	if !ok {
		return nil, false
	}
	d, ok := c.v.(*detail.View)
	return d, ok
}

// detailOf is what the detail is given of the session and the root.
type detailOf struct{ m *Model }

func (o detailOf) Store() *framestore.Store                 { return o.m.s.Store() }
func (o detailOf) Lookup(key string) *session.Call          { return o.m.s.Lookup(key) }
func (o detailOf) RoundRoot(sn session.CallSnapshot) string { return o.m.roundRoot(sn) }
func (o detailOf) OutputSchema(tool string) json.RawMessage { return o.m.catalog.outputSchema(tool) }
func (o detailOf) Area() (w, h int)                         { return o.m.detailArea() }
func (o detailOf) Cancel(c *session.Call) view.Action       { return view.Action{Cmd: o.m.cancelCall(c)} }
func (o detailOf) Progress(sn session.CallSnapshot) string {
	return ansi.Strip(o.m.progressText(sn, 200, true))
}
func (o detailOf) Stdio() bool { return strings.HasPrefix(o.m.info.Target, "stdio:") }

func (o detailOf) Save(what, name string, data []byte) view.Action {
	o.m.saveBlob(what, name, data)
	return view.Action{}
}

// Step moves the selection of the pane the detail came from.
func (o detailOf) Step(from detail.From, k int) (*session.Call, *framestore.Item) {
	m := o.m
	m.focus = paneRequests
	if from == detail.FromNotes {
		m.focus = paneNotes
	}
	ls, n := m.focused()
	m.move(ls, n, k)
	m.fixScroll()
	if from == detail.FromNotes {
		return nil, m.selectedNote()
	}
	return m.selectedCall(), nil
}

// saveBlob asks where to save data (an image, audio or blob of a rendered
// result) and writes it there, through userfile like every user-named
// file.
func (m *Model) saveBlob(what, name string, data []byte) {
	if wd, err := os.Getwd(); err == nil {
		name = filepath.Join(wd, name)
	}
	f := &form{title: "Save " + what + " — enter saves, esc cancels",
		fields: []*field{withDesc(newTextField("file", "file", name, true), "the decoded bytes are written here (an existing file is replaced)")}}
	f.onSubmit = func(m *Model, args json.RawMessage) tea.Cmd {
		var a struct {
			File string `json:"file"`
		}
		_ = json.Unmarshal(args, &a)
		err := userfile.Write(a.File, 0o644, func(w io.Writer) error {
			_, err := w.Write(data)
			return err
		})
		if err != nil {
			m.setFlash("save: " + termsafe.Line(err.Error()))
			return nil
		}
		m.setFlash("saved " + render.Size(len(data)) + " to " + termsafe.Line(a.File))
		return nil
	}
	m.push(f)
}
