// Package quitask is the panel `q` opens when quitting would abandon
// running calls: it names them and asks before they are lost. Calls that
// can be rejoined later are named too: they are detached, not lost.
package quitask

import (
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/internal/termsafe"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
)

// Scope is where the panel's keys are looked up.
const Scope keys.Scope = "quit"

// Call is a running call as the panel names it.
type Call struct {
	Key, Method, Name string
	Why               string // why it cannot be detached ("" for one that will be)
}

// View asks whether to quit though Lost would end with mcpscope.
type View struct {
	Lost, Detached []Call
	quit           func() view.Action
}

// New is the panel over lost (ending with mcpscope) and detached (left
// running on the server to rejoin); quit ends the program.
func New(lost, detached []Call, quit func() view.Action) *View {
	return &View{Lost: lost, Detached: detached, quit: quit}
}

// Keys is the panel's part of the keymap: q again (or y) quits, esc or n
// stays. Enter does neither: a key pressed by habit loses nothing.
var Keys = view.Group{Scope: Scope, Bindings: bindings.Keys(), Footer: []string{"quit-anyway", "quit-stay"}}

var bindings = view.Bindings[*View]{
	{Binding: keys.Binding{Name: "quit-anyway", Scope: Scope, Keys: []string{"q", "y"}, Help: "quit anyway: the running calls named end with mcpscope", Short: "quit anyway"},
		Run: func(v *View, _ view.Context) view.Action { return view.Close().Then(v.quit()) }},
	{Binding: keys.Binding{Name: "quit-stay", Scope: Scope, Keys: []string{"esc", "n"}, Help: "stay: keep the inspector and its calls running", Short: "stay"},
		Run: func(*View, view.Context) view.Action { return view.Close() }},
}

func (v *View) Scope() keys.Scope { return Scope }

func (v *View) Key(c view.Context, name string, _ tea.KeyPressMsg) view.Action {
	a, _ := bindings.Do(v, c, name)
	return a
}

// Render names every call quitting would lose, with why, then those it
// detaches.
func (v *View) Render(c view.Context, w, h int) string {
	th := c.Theme
	var l []string
	add := func(st func(...string) string, s string) {
		body := strings.TrimLeft(s, " ")
		indent := strings.Repeat(" ", len(s)-len(body)+1) // a wrapped line keeps its indent
		for _, line := range strings.Split(ansi.Wrap(body, max(10, w-len(indent)-1), " /"), "\n") {
			l = append(l, st(indent+line))
		}
	}
	plain := func(s ...string) string { return strings.Join(s, "") }
	add(th.Title.Render, "Quit? "+count(len(v.Lost), "running call")+" would be lost: "+them(len(v.Lost))+" end with mcpscope and cannot be rejoined")
	l = append(l, "")
	for _, cl := range v.Lost {
		add(th.Error.Render, "✗ #"+name(cl))
		if cl.Why != "" {
			add(th.Faint.Render, "    "+termsafe.Line(cl.Why))
		}
	}
	if len(v.Detached) > 0 {
		l = append(l, "")
		add(plain, count(len(v.Detached), "call")+" will be detached, not lost: left running on the server, to rejoin (the commands are printed when mcpscope exits)")
		for _, cl := range v.Detached {
			add(th.Cancelled.Render, "⇥ #"+name(cl))
		}
	}
	l = append(l, "")
	add(plain, c.KeyOf("quit-anyway")+" or y: quit anyway · "+c.KeyOf("quit-stay")+" or n: stay")
	if len(l) > h && h > 0 {
		l = append(l[:h-1], th.Faint.Render(" …"))
	}
	return strings.Join(l, "\n")
}

func name(c Call) string {
	return strings.TrimRight(termsafe.Line(c.Key)+" "+termsafe.Line(c.Method)+" "+termsafe.Line(c.Name), " ")
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func them(n int) string {
	if n == 1 {
		return "it would"
	}
	return "they would"
}
