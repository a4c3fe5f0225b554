// Package keys holds key bindings as data: each binding has a name, the
// keys that trigger it, a description and the scope it works in. The same
// registry drives dispatch, the help overlay, and tests that press keys by
// name.
package keys

import (
	"fmt"
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
)

// Scope is where a binding applies. Global bindings work in every scope
// that does not take text input. The scopes here are the root's and the
// ones that take text (the root asks which, textScope); a view in its own
// package declares its scope there.
type Scope string

const (
	Global   Scope = "global"
	Requests Scope = "requests"
	Notes    Scope = "notifications"
	Catalog  Scope = "catalog"
	Form     Scope = "form"
	Editor   Scope = "editor"
	Search   Scope = "search"
	// Panes holds what both main panes do alike (their filter); it is
	// looked up after the focused pane's own scope, before Global.
	Panes Scope = "panes"
	// Filter is the filter's input line, a text scope.
	Filter Scope = "filter"
)

// Binding is one action's data: the component that registers it gives it
// its behaviour (ui/view.Binding).
type Binding struct {
	Name  string
	Scope Scope
	Keys  []string // as tea.KeyPressMsg.String() spells them
	Help  string   // the help overlay's and the README's description
	// Short is the footer's word for it ("" = Help up to its first
	// parenthesis or comma); also what a refusal names ("cancel: …").
	Short string
}

// Label is the binding's short word, for the footer and refusals.
func (b Binding) Label() string {
	if b.Short != "" {
		return b.Short
	}
	s := b.Help
	if i := strings.Index(s, " ("); i > 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ", "); i > 0 {
		s = s[:i]
	}
	return s
}

// Map is an ordered registry of bindings.
type Map struct {
	list    []Binding
	index   map[Scope]map[string]string // scope → key → name
	names   map[string]Binding
	footers map[Scope][]string
}

// New builds a map; a key bound twice in one scope is a programming error.
func New(bs []Binding) *Map {
	m := &Map{index: map[Scope]map[string]string{}, names: map[string]Binding{}, footers: map[Scope][]string{}}
	for _, b := range bs {
		if _, dup := m.names[b.Name]; dup {
			panic("keys: duplicate binding name " + b.Name)
		}
		if m.index[b.Scope] == nil {
			m.index[b.Scope] = map[string]string{}
		}
		for _, k := range b.Keys {
			if other, dup := m.index[b.Scope][k]; dup {
				panic(fmt.Sprintf("keys: %q bound to both %s and %s", k, other, b.Name))
			}
			m.index[b.Scope][k] = b.Name
		}
		m.names[b.Name] = b
		m.list = append(m.list, b)
	}
	return m
}

// Lookup returns the binding name for key in scope, then in Global when
// global is true; "" when unbound.
func (m *Map) Lookup(scope Scope, key string, global bool) string {
	if n, ok := m.index[scope][key]; ok {
		return n
	}
	if global {
		return m.index[Global][key]
	}
	return ""
}

// Get returns a binding by name.
func (m *Map) Get(name string) (Binding, bool) {
	b, ok := m.names[name]
	return b, ok
}

// SetFooter names the bindings the footer shows in scope, in order; a
// name that is not bound is a programming error.
func (m *Map) SetFooter(s Scope, names ...string) {
	for _, n := range names {
		if _, ok := m.names[n]; !ok {
			panic("keys: footer of " + string(s) + " names no binding " + n)
		}
	}
	m.footers[s] = names
}

// Footer is the names of the bindings the footer shows in scope.
func (m *Map) Footer(s Scope) []string { return m.footers[s] }

// Bindings returns every binding in registration order.
func (m *Map) Bindings() []Binding { return append([]Binding(nil), m.list...) }

// Press builds the key message of a binding's first key, so tests drive
// the UI by binding name rather than by key spelling.
func (m *Map) Press(name string) tea.KeyPressMsg {
	b, ok := m.names[name]
	if !ok || len(b.Keys) == 0 {
		panic("keys: no binding named " + name)
	}
	return Parse(b.Keys[0])
}

var special = map[string]rune{
	"enter": tea.KeyEnter, "esc": tea.KeyEscape, "tab": tea.KeyTab, "space": tea.KeySpace,
	"backspace": tea.KeyBackspace, "delete": tea.KeyDelete, "up": tea.KeyUp, "down": tea.KeyDown,
	"left": tea.KeyLeft, "right": tea.KeyRight, "home": tea.KeyHome, "end": tea.KeyEnd,
	"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown,
}

// Parse turns a key spelling ("ctrl+c", "shift+tab", "G", "enter") into
// the message a terminal would produce for it.
func Parse(s string) tea.KeyPressMsg {
	var k tea.Key
	rest := s
	for {
		switch {
		case strings.HasPrefix(rest, "ctrl+") && len(rest) > 5:
			k.Mod |= tea.ModCtrl
			rest = rest[5:]
			continue
		case strings.HasPrefix(rest, "alt+") && len(rest) > 4:
			k.Mod |= tea.ModAlt
			rest = rest[4:]
			continue
		case strings.HasPrefix(rest, "shift+") && len(rest) > 6:
			k.Mod |= tea.ModShift
			rest = rest[6:]
			continue
		}
		break
	}
	if r, ok := special[rest]; ok {
		k.Code = r
		if r == tea.KeySpace && k.Mod == 0 {
			k.Text = " "
		}
		return tea.KeyPressMsg(k)
	}
	r, _ := utf8.DecodeRuneInString(rest)
	k.Code = r
	if k.Mod == 0 {
		k.Text = rest
	}
	return tea.KeyPressMsg(k)
}

// Text returns the printable text a key message carries ("" for keys that
// do not type anything), for the UI's own text fields.
func Text(msg tea.KeyPressMsg) string {
	if msg.Mod&(tea.ModCtrl|tea.ModAlt) != 0 {
		return ""
	}
	return msg.Text
}

// Markdown is the keymap as the README's key section: one table per
// scope, in registration order, every binding's keys and description.
func (m *Map) Markdown() string {
	var b strings.Builder
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	var last Scope
	for _, bd := range m.list {
		if bd.Scope != last {
			if last != "" {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "**%s**\n\n| keys | what |\n|---|---|\n", bd.Scope)
			last = bd.Scope
		}
		ks := make([]string, len(bd.Keys))
		for i, k := range bd.Keys {
			ks[i] = "`" + cell(k) + "`"
		}
		fmt.Fprintf(&b, "| %s | %s |\n", strings.Join(ks, " "), cell(bd.Help))
	}
	return b.String()
}
