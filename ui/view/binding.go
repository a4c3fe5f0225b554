package view

import "mcpscope/ui/keys"

// Binding is a key binding with its behaviour, on a component of type T
// (a view, or the root for the main panes): its keys, scope, help and
// footer label (keys.Binding), what it does, and why it cannot do it now.
type Binding[T any] struct {
	keys.Binding
	Run func(t T, c Context) Action
	// Disabled says why the binding cannot run now ("" or nil: it can).
	// The footer dims it, `?` gives the reason, and pressing it flashes
	// "label: reason" instead of running it.
	Disabled func(t T, c Context) string
}

// Bindings is a component's bindings, in the order help lists them.
type Bindings[T any] []Binding[T]

// Keys is the data part of the bindings, for the keymap. A binding with
// no keys of its own is a global one (up, help, copy…) the component gives
// its own meaning: the root registers it, not the component.
func (bs Bindings[T]) Keys() []keys.Binding {
	var out []keys.Binding
	for _, b := range bs {
		if len(b.Keys) > 0 {
			out = append(out, b.Binding)
		}
	}
	return out
}

// Why is why the binding called name cannot run on t now ("" when it
// can, or when t has no such binding).
func (bs Bindings[T]) Why(t T, c Context, name string) string {
	for _, b := range bs {
		if b.Name == name && b.Disabled != nil {
			return b.Disabled(t, c)
		}
	}
	return ""
}

// Do runs the binding called name on t; ok is false when t has no such
// binding. A disabled binding does not run: it flashes why.
func (bs Bindings[T]) Do(t T, c Context, name string) (a Action, ok bool) {
	for _, b := range bs {
		if b.Name != name || b.Run == nil {
			continue
		}
		if b.Disabled != nil {
			if why := b.Disabled(t, c); why != "" {
				return Flash(b.Label() + ": " + why), true
			}
		}
		return b.Run(t, c), true
	}
	return Action{}, false
}

// Group is what a component registers in the keymap: its bindings and
// the names its footer shows, in order (global ones included).
type Group struct {
	Scope    keys.Scope
	Bindings []keys.Binding
	Footer   []string
}
