// Package view is the contract between the UI's root model and its views
// (info, help, chooser, editor…, each in its own package under ui/).
//
// A view owns its state. It is given a Context — the theme, the keymap, the
// screen's size, the clock — and whatever narrow interface of the session
// its package declares (never the root model), and it answers a key with an
// Action: what it wants done (close, open another view, flash a message,
// copy, run a command). The root applies the Action; a view never changes
// anything outside itself.
//
// Imports run one way: the root (ui) imports the views, views import
// widgets (ui/widget) and this package, never the root.
package view

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"mcpscope/themes"
	"mcpscope/ui/keys"
)

// Context is what every view may read.
type Context struct {
	Theme themes.Theme
	Keys  *keys.Map
	// Width and Height are the terminal's; a view is drawn in the area
	// Render is given.
	Width, Height int
	Now           func() time.Time
	Location      *time.Location
	// JSONRows draws a JSON value as the detail's pager does (folding
	// marks, colours), w columns wide, each line prefixed by indent.
	JSONRows func(raw []byte, w int, indent string) []string
}

// KeyOf is the first key of a binding, for hints in titles.
func (c Context) KeyOf(name string) string {
	if b, ok := c.Keys.Get(name); ok && len(b.Keys) > 0 {
		return b.Keys[0]
	}
	return "?"
}

// View is one part of the UI drawn over the panes that takes the keys.
type View interface {
	// Scope is where the view's keys are looked up (keys.Map.Lookup).
	Scope() keys.Scope
	// Key handles one bound key (name, "" when unbound) or typed text.
	Key(c Context, name string, msg tea.KeyPressMsg) Action
	// Render draws the view in w×h cells.
	Render(c Context, w, h int) string
}

// Refresher is a view that takes in what the session gained; the root
// calls Refresh when the store wakes it and the view is on top.
type Refresher interface {
	Refresh(c Context)
}

// Updater is a view that takes messages other than keys: pasted text,
// what $EDITOR gave back.
type Updater interface {
	Update(c Context, msg tea.Msg) Action
}

// Footerer is a view whose footer depends on its state (a binding that
// makes no sense there is not offered).
type Footerer interface {
	Footer(c Context) []string
}

// Paneler is a view drawn as a small panel at the bottom of the body, what
// lies beneath it still in sight above: Rows is how many rows it needs.
type Paneler interface {
	Rows(c Context, w, h int) int
}

// Disabler is a view some of whose bindings cannot run now.
type Disabler interface {
	// Disabled is why the binding called name cannot run ("" when it can).
	Disabled(c Context, name string) string
}

// Action is what a view asks the root to do. The zero Action does nothing.
type Action struct {
	Close bool   // the view is done: take it off the stack
	Open  View   // put this view on top (after Close, when both)
	Flash string // a line in the footer
	Copy  *Copy  // put text on the clipboard
	Help  bool   // open the key help
	Quit  bool   // end the program
	Cmd   tea.Cmd
}

// Copy is text for the clipboard and what it is, for the flash.
type Copy struct{ Text, What string }

// Then is a followed by b: flags add up, b's view, flash and copy win,
// both commands run.
func (a Action) Then(b Action) Action {
	a.Close = a.Close || b.Close
	a.Help = a.Help || b.Help
	a.Quit = a.Quit || b.Quit
	if b.Open != nil {
		a.Open = b.Open
	}
	if b.Flash != "" {
		a.Flash = b.Flash
	}
	if b.Copy != nil {
		a.Copy = b.Copy
	}
	a.Cmd = tea.Batch(a.Cmd, b.Cmd)
	return a
}

// Close is the Action of a view that is done.
func Close() Action { return Action{Close: true} }

// Flash is the Action that says s in the footer.
func Flash(s string) Action { return Action{Flash: s} }

// ListKey is what every list view does with the global keys it does not
// give a meaning of its own: quit, help, and moving the selection over n
// rows.
func ListKey(name string, sel *int, n int) Action {
	switch name {
	case "quit":
		return Action{Quit: true}
	case "help":
		return Action{Help: true}
	case "up":
		*sel = min(max(*sel-1, 0), n-1)
	case "down":
		*sel = min(max(*sel+1, 0), n-1)
	case "top":
		*sel = 0
	case "follow":
		*sel = max(0, n-1)
	}
	*sel = max(*sel, 0)
	return Action{}
}
