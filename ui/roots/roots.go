// Package roots is the small panel that edits the roots, what roots/list
// is answered with. The server's roots/list opens it under --root ask: the
// server waits for the answer, so esc declines (it gets an error). R opens
// it mid-session: a change, so esc cancels and ctrl+s keeps the roots (the
// root then tells the server with notifications/roots/list_changed).
package roots

import (
	"net/url"
	"path"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"mcpscope/internal/termsafe"
	"mcpscope/session"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
	"mcpscope/ui/widget"
	"mcpscope/ui/widget/textbox"
)

// The panel's scopes: asked by the server, or opened to change the roots.
// Both are text scopes (typed characters go to the text).
const (
	AskScope  keys.Scope = "roots asked"
	EditScope keys.Scope = "roots"
)

// View is the roots being edited and what sending them does.
type View struct {
	ask     bool
	title   string
	area    textarea.Model
	err     string
	send    func([]session.Root) view.Action
	decline func() view.Action
}

// Ask is the panel for a server's roots/list (via says in which call or
// round); send answers with the roots, decline answers with an error.
func Ask(c view.Context, via string, rs []session.Root, send func([]session.Root) view.Action, decline func() view.Action) *View {
	return &View{ask: true, area: textbox.NewArea(Text(rs), c.Theme), send: send, decline: decline,
		title: "The server asks for roots (roots/list)" + via + " — " + c.KeyOf("roots-answer") + " sends, " + c.KeyOf("roots-decline") + " declines"}
}

// Edit is the panel R opens: apply keeps the roots (and tells the server).
func Edit(c view.Context, rs []session.Root, apply func([]session.Root) view.Action) *View {
	return &View{area: textbox.NewArea(Text(rs), c.Theme), send: apply,
		title: "Roots (what roots/list answers) — " + c.KeyOf("roots-apply") + " applies, " + c.KeyOf("roots-cancel") + " cancels"}
}

// AskKeys and EditKeys are the panel's parts of the keymap, one per scope:
// the footer and the title say the same of esc.
var (
	AskKeys  = view.Group{Scope: AskScope, Bindings: askBindings.Keys(), Footer: []string{"roots-answer", "roots-decline"}}
	EditKeys = view.Group{Scope: EditScope, Bindings: editBindings.Keys(), Footer: []string{"roots-apply", "roots-cancel"}}
)

var askBindings = view.Bindings[*View]{
	{Binding: keys.Binding{Name: "roots-answer", Scope: AskScope, Keys: []string{"ctrl+s"}, Help: "answer roots/list with these roots", Short: "send"},
		Run: (*View).submit},
	{Binding: keys.Binding{Name: "roots-decline", Scope: AskScope, Keys: []string{"esc", "ctrl+d"}, Help: "decline: the server gets an error, no roots", Short: "decline"},
		Run: func(v *View, _ view.Context) view.Action { return view.Close().Then(v.decline()) }},
}

var editBindings = view.Bindings[*View]{
	{Binding: keys.Binding{Name: "roots-apply", Scope: EditScope, Keys: []string{"ctrl+s"}, Help: "keep these roots and tell the server (notifications/roots/list_changed)", Short: "apply"},
		Run: (*View).submit},
	{Binding: keys.Binding{Name: "roots-cancel", Scope: EditScope, Keys: []string{"esc"}, Help: "cancel: the roots stay as they were", Short: "cancel"},
		Run: func(*View, view.Context) view.Action { return view.Close() }},
}

func (v *View) submit(view.Context) view.Action {
	rs, err := Parse(v.area.Value())
	if err != "" {
		v.err = err
		return view.Action{}
	}
	return view.Close().Then(v.send(rs))
}

// Text is roots one per line: URI, then its name.
func Text(rs []session.Root) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.URI)
		if r.Name != "" {
			b.WriteString(" " + r.Name)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Parse reads roots one per line: a file:// URI or an absolute path, then
// a name (else the last element of the path). err says which line is not
// a root.
func Parse(text string) (rs []session.Root, err string) {
	rs = []session.Root{}
	for i, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		ref, name, _ := strings.Cut(l, " ")
		name = strings.TrimSpace(name)
		var uri string
		switch {
		case strings.HasPrefix(ref, "/"):
			uri = (&url.URL{Scheme: "file", Path: ref}).String()
		case strings.HasPrefix(ref, "file://"):
			u, perr := url.Parse(ref)
			if perr != nil || u.Path == "" || (u.Host != "" && u.Host != "localhost") {
				return nil, "line " + itoa(i+1) + ": " + termsafe.Line(ref) + " is not a file:///absolute/path URI"
			}
			uri = u.String()
		default:
			return nil, "line " + itoa(i+1) + ": " + termsafe.Line(ref) + ": a root is a file:// URI or an absolute path"
		}
		if name == "" {
			if u, perr := url.Parse(uri); perr == nil && path.Base(u.Path) != "/" {
				name = path.Base(u.Path)
			}
		}
		rs = append(rs, session.Root{URI: uri, Name: name})
	}
	return rs, ""
}

func itoa(n int) string { return strconv.Itoa(n) }

// Scope is the panel's scope: asked, or opened to change the roots.
func (v *View) Scope() keys.Scope {
	if v.ask {
		return AskScope
	}
	return EditScope
}

func (v *View) Key(c view.Context, name string, msg tea.KeyPressMsg) view.Action {
	bs := editBindings
	if v.ask {
		bs = askBindings
	}
	if a, ok := bs.Do(v, c, name); ok {
		return a
	}
	var cmd tea.Cmd
	v.area, cmd = v.area.Update(msg)
	v.err = ""
	return view.Action{Cmd: cmd}
}

// Update takes pasted text.
func (v *View) Update(_ view.Context, msg tea.Msg) view.Action {
	if p, ok := msg.(tea.PasteMsg); ok {
		var cmd tea.Cmd
		v.area, cmd = v.area.Update(p)
		return view.Action{Cmd: cmd}
	}
	return view.Action{}
}

// textRows is how many rows the text gets: its lines and one to add, 3 to 8.
func (v *View) textRows() int { return widget.Clamp(v.area.LineCount()+1, 3, 8) }

// Rows is the panel's height: a rule, the title, a hint, the text and a
// line for what is wrong; the view beneath stays in sight above it.
func (v *View) Rows(_ view.Context, _, h int) int { return min(h, 4+v.textRows()) }

func (v *View) Render(c view.Context, w, h int) string {
	th := c.Theme
	l := []string{th.Faint.Render(strings.Repeat("─", w)), th.Title.Render(widget.Fit(" "+v.title, w))}
	l = append(l, th.Faint.Render(widget.Fit(" one per line: a file:// URI or an absolute path, then a name if you like", w)))
	textbox.SizeArea(&v.area, w-2, min(v.textRows(), max(1, h-4)))
	l = append(l, v.area.View())
	if v.err != "" {
		l = append(l, th.Error.Render(widget.Fit(" "+v.err, w)))
	}
	return strings.Join(l, "\n")
}
