package detail

import (
	"strings"

	"mcpscope/internal/termsafe"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
	"mcpscope/ui/widget/pager"
)

// Scope is where the detail's keys are looked up; while a search is typed
// they are looked up in keys.Search (a text scope).
const Scope keys.Scope = "detail"

// Keys is the detail's part of the keymap; its footer is a call's (a
// notification's leaves out what only a call's response has: View.Footer).
var Keys = view.Group{Scope: Scope, Bindings: bindings.Keys(),
	Footer: []string{"tab-next", "wrap", "fold", "search", "copy", "detail-close", "result-view", "save-media"}}

// SearchKeys are the keys of the search line the detail's / opens.
var SearchKeys = view.Group{Scope: keys.Search, Bindings: searchBindings.Keys(),
	Footer: []string{"search-run", "search-cancel"}}

// itemFooter is a notification's footer: it has no response to render or
// save from.
var itemFooter = []string{"tab-next", "wrap", "fold", "search", "copy", "detail-close"}

// onPager runs f on the current tab's pager.
func onPager(f func(p *pager.Pager)) func(*View, view.Context) view.Action {
	return func(v *View, _ view.Context) view.Action { f(v.cur().p); return view.Action{} }
}

var bindings = view.Bindings[*View]{
	{Binding: keys.Binding{Name: "detail-close", Scope: Scope, Keys: []string{"esc", "q"}, Help: "close"},
		Run: func(*View, view.Context) view.Action { return view.Close() }},
	{Binding: keys.Binding{Name: "tab-next", Scope: Scope, Keys: []string{"tab"}, Help: "next tab"},
		Run: func(v *View, _ view.Context) view.Action { v.stepTab(1); return view.Action{} }},
	{Binding: keys.Binding{Name: "tab-prev", Scope: Scope, Keys: []string{"shift+tab"}, Help: "previous tab"},
		Run: func(v *View, _ view.Context) view.Action { v.stepTab(len(v.tabs) - 1); return view.Action{} }},
	{Binding: keys.Binding{Name: "search", Scope: Scope, Keys: []string{"/"}, Help: "search"},
		Run: func(v *View, _ view.Context) view.Action { v.searching, v.input = true, ""; return view.Action{} }},
	{Binding: keys.Binding{Name: "search-next", Scope: Scope, Keys: []string{"n"}, Help: "next match", Short: "next"},
		Run: onPager(func(p *pager.Pager) { p.Jump(1) }), Disabled: noSearch},
	{Binding: keys.Binding{Name: "search-prev", Scope: Scope, Keys: []string{"N"}, Help: "previous match"},
		Run: onPager(func(p *pager.Pager) { p.Jump(-1) }), Disabled: noSearch},
	{Binding: keys.Binding{Name: "wrap", Scope: Scope, Keys: []string{"w"}, Help: "soft-wrap long lines on / off", Short: "wrap"},
		Run: (*View).toggleWrap},
	{Binding: keys.Binding{Name: "scroll-left", Scope: Scope, Keys: []string{"left", "h"}, Help: "scroll left (wrap off)"},
		Run: sideways(-1), Disabled: wrapping},
	{Binding: keys.Binding{Name: "scroll-right", Scope: Scope, Keys: []string{"right", "l"}, Help: "scroll right (wrap off)"},
		Run: sideways(1), Disabled: wrapping},
	{Binding: keys.Binding{Name: "fold", Scope: Scope, Keys: []string{"space"}, Help: "fold / unfold the JSON object or array at the cursor (▌)", Short: "fold"},
		Run: func(v *View, _ view.Context) view.Action {
			if !v.cur().p.ToggleFold() {
				return view.Flash("nothing to fold here: folds work on JSON objects and arrays")
			}
			return view.Action{}
		}},
	{Binding: keys.Binding{Name: "fold-all", Scope: Scope, Keys: []string{"-"}, Help: "fold every object and array below the top level"},
		Run: onPager(func(p *pager.Pager) { p.FoldAll() })},
	{Binding: keys.Binding{Name: "unfold-all", Scope: Scope, Keys: []string{"+", "="}, Help: "unfold everything"},
		Run: onPager(func(p *pager.Pager) { p.UnfoldAll() })},
	{Binding: keys.Binding{Name: "next-item", Scope: Scope, Keys: []string{"]"}, Help: "show the next row of the list (same tab)", Short: "next row"},
		Run: stepItem(1), Disabled: noList},
	{Binding: keys.Binding{Name: "prev-item", Scope: Scope, Keys: []string{"["}, Help: "show the previous row of the list (same tab)", Short: "previous row"},
		Run: stepItem(-1), Disabled: noList},
	{Binding: keys.Binding{Name: "result-view", Scope: Scope, Keys: []string{"v"}, Help: "response tab: the result rendered (text, Markdown, media, links) or its raw JSON", Short: "rendered/raw"},
		Run: (*View).toggleResultView,
		Disabled: func(v *View, _ view.Context) string {
			if v.call == nil {
				return "a notification has no response to render"
			}
			if !v.rv.can {
				return "this response has no rendered view (not a tool result or resource contents, or too large): the response tab shows its JSON"
			}
			return ""
		}},
	{Binding: keys.Binding{Name: "save-media", Scope: Scope, Keys: []string{"s"}, Help: "save the image, audio or blob at the cursor of a rendered response to a file", Short: "save"},
		Run: (*View).saveMedia, Disabled: (*View).whyNoSave},

	// The global keys, given the detail's meaning.
	{Binding: keys.Binding{Name: "quit"}, Run: func(*View, view.Context) view.Action { return view.Action{Quit: true} }},
	{Binding: keys.Binding{Name: "help"}, Run: func(*View, view.Context) view.Action { return view.Action{Help: true} }},
	{Binding: keys.Binding{Name: "up"}, Run: onPager(func(p *pager.Pager) { p.LineUp() })},
	{Binding: keys.Binding{Name: "down"}, Run: onPager(func(p *pager.Pager) { p.LineDown() })},
	{Binding: keys.Binding{Name: "page-up"}, Run: onPager(func(p *pager.Pager) { _, h := p.Size(); p.Scroll(-h) })},
	{Binding: keys.Binding{Name: "page-down"}, Run: onPager(func(p *pager.Pager) { _, h := p.Size(); p.Scroll(h) })},
	{Binding: keys.Binding{Name: "top"}, Run: onPager(func(p *pager.Pager) { p.Home() })},
	{Binding: keys.Binding{Name: "follow"}, Run: onPager(func(p *pager.Pager) { p.End() })},
	{Binding: keys.Binding{Name: "copy"}, Run: (*View).copyTab},
	// The requests pane's verb that works on the call shown too: cancel
	// a call you landed on (looked up in keys.Requests, see Key).
	{Binding: keys.Binding{Name: "cancel-call"},
		Run: func(v *View, _ view.Context) view.Action {
			if v.call == nil {
				return view.Action{}
			}
			return v.s.Cancel(v.call)
		}},
}

var searchBindings = view.Bindings[*View]{
	{Binding: keys.Binding{Name: "search-run", Scope: keys.Search, Keys: []string{"enter"}, Help: "search"},
		Run: func(v *View, _ view.Context) view.Action {
			v.searching = false
			p := v.cur().p
			p.Search(v.input)
			p.Jump(0)
			if v.input != "" && p.Hits() == 0 {
				return view.Flash("no match for " + termsafe.Line(v.input))
			}
			return view.Action{}
		}},
	{Binding: keys.Binding{Name: "search-cancel", Scope: keys.Search, Keys: []string{"esc"}, Help: "stop searching", Short: "stop"},
		Run: func(v *View, _ view.Context) view.Action { v.searching = false; return view.Action{} }},
	{Binding: keys.Binding{Name: "search-backspace", Scope: keys.Search, Keys: []string{"backspace"}, Help: "delete a character"},
		Run: func(v *View, _ view.Context) view.Action {
			if r := []rune(v.input); len(r) > 0 {
				v.input = string(r[:len(r)-1])
			}
			return view.Action{}
		}},
}

func noSearch(v *View, c view.Context) string {
	if v.cur().p.Query() == "" {
		return "nothing searched yet: " + c.KeyOf("search") + " searches"
	}
	return ""
}

func wrapping(v *View, c view.Context) string {
	if v.cur().p.Wrap() {
		return "lines wrap: " + c.KeyOf("wrap") + " turns wrapping off to scroll sideways"
	}
	return ""
}

func noList(v *View, c view.Context) string {
	if v.from == FromNone {
		return c.KeyOf("next-item") + " and " + c.KeyOf("prev-item") + " move in the requests and notifications panes"
	}
	return ""
}

// sideways scrolls half a view to the side (dir -1 left, 1 right).
func sideways(dir int) func(*View, view.Context) view.Action {
	return onPager(func(p *pager.Pager) {
		w, _ := p.Size()
		p.HScroll(dir * max(8, w/2))
	})
}

func stepItem(k int) func(*View, view.Context) view.Action {
	return func(v *View, c view.Context) view.Action {
		call, item := v.s.Step(v.from, k)
		v.retarget(c, call, item)
		return view.Action{}
	}
}

func (v *View) toggleWrap(c view.Context) view.Action {
	v.nowrap = !v.nowrap
	for _, t := range v.tabs {
		t.p.SetWrap(!v.nowrap)
	}
	if v.nowrap {
		return view.Flash("wrap off: " + c.KeyOf("scroll-left") + "/" + c.KeyOf("scroll-right") + " scroll sideways")
	}
	return view.Flash("wrap on: long lines fold onto the next rows")
}

// stepTab moves step tabs on (mod the tabs); the search goes with the
// reader.
func (v *View) stepTab(step int) {
	q := v.cur().p.Query()
	v.tab = (v.tab + step) % len(v.tabs)
	if np := v.cur().p; np.Query() != q {
		np.Search(q)
	}
}

// copyTab copies what the tab holds: its frames' exact bytes, or its text.
func (v *View) copyTab(view.Context) view.Action {
	t := v.cur()
	var data []byte
	var err error
	if t.copy != nil {
		data, err = t.copy()
	} else {
		data = []byte(strings.Join(t.p.Doc().Text(), "\n"))
	}
	if err != nil {
		return view.Flash("copy: " + err.Error())
	}
	return view.Action{Copy: &view.Copy{Text: string(data), What: t.name}}
}
