// Package rejoin is the detached-calls view (D): the calls left running on
// servers (by this or another mcpscope) with the command that rejoins each;
// the ones that belong to this session are rejoined here.
package rejoin

import (
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"mcpscope/internal/termsafe"
	"mcpscope/statestore"
	"mcpscope/transport"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
	"mcpscope/ui/widget"
)

// Scope is where the view's keys are looked up.
const Scope keys.Scope = "rejoin"

// Session is what the view reads and the intent it sends.
type Session interface {
	// Store holds the records of calls left running.
	Store() statestore.Store
	// CanRejoin says whether d can be rejoined in this session, and if
	// not, why.
	CanRejoin(d statestore.Detached) (bool, string)
	// Rejoin takes the call back into this session.
	Rejoin(d statestore.Detached) (callKey string, err error)
}

// View is the records, how each is held, and the selection.
type View struct {
	s      Session
	list   []statestore.Detached
	leases map[string]string // handle → how its call is held (leaseLabel)
	sel    int
	err    string
}

// New lists the records.
func New(s Session) *View {
	v := &View{s: s}
	v.load()
	return v
}

// Keys is the view's part of the keymap.
var Keys = view.Group{Scope: Scope, Bindings: bindings.Keys(),
	Footer: []string{"copy", "rejoin-here", "rejoin-forget", "rejoin-refresh", "rejoin-close", "help"}}

var bindings = view.Bindings[*View]{
	{Binding: keys.Binding{Name: "rejoin-here", Scope: Scope, Keys: []string{"r"}, Help: "rejoin the call in this session (same server and MCP session only)", Short: "rejoin here"},
		Run: withRecord((*View).rejoin)},
	{Binding: keys.Binding{Name: "rejoin-forget", Scope: Scope, Keys: []string{"x"}, Help: "forget the record (the server keeps running the call)", Short: "forget"},
		Run: withRecord((*View).forget)},
	{Binding: keys.Binding{Name: "rejoin-refresh", Scope: Scope, Keys: []string{"R"}, Help: "list the records again", Short: "refresh"},
		Run: func(v *View, _ view.Context) view.Action { v.load(); return view.Action{} }},
	{Binding: keys.Binding{Name: "rejoin-close", Scope: Scope, Keys: []string{"esc"}, Help: "back to the session", Short: "back"},
		Run: func(*View, view.Context) view.Action { return view.Close() }},
	{Binding: keys.Binding{Name: "copy"},
		Run: withRecord(func(v *View, d statestore.Detached) view.Action {
			return view.Action{Copy: &view.Copy{Text: statestore.RejoinCommandIn(v.s.Store(), d.Handle), What: "rejoin command"}}
		})},
}

// withRecord runs f on the selected record; nothing when there is none.
func withRecord(f func(v *View, d statestore.Detached) view.Action) func(*View, view.Context) view.Action {
	return func(v *View, _ view.Context) view.Action {
		if d, ok := v.selected(); ok {
			return f(v, d)
		}
		return view.Action{}
	}
}

func (v *View) load() {
	st := v.s.Store()
	list, err := st.List()
	v.list, v.err, v.leases = list, "", map[string]string{}
	if err != nil {
		v.err = err.Error()
	}
	for _, d := range list {
		v.leases[d.Handle] = leaseLabel(statestore.CallState(st, d))
	}
	v.sel = widget.Clamp(v.sel, 0, len(v.list)-1)
}

func (v *View) forget(d statestore.Detached) view.Action {
	st := v.s.Store()
	if ls := statestore.CallState(st, d); ls.State == "held" {
		return view.Flash("call " + termsafe.Line(d.Handle) + " is " + leaseLabel(ls) + "; not forgotten")
	}
	a := view.Flash("forgot " + termsafe.Line(d.Handle) + " (the server may still run it)")
	if err := st.Delete(d.Handle); err != nil {
		a = view.Flash("forget: " + err.Error())
	}
	v.load()
	return a
}

func (v *View) rejoin(d statestore.Detached) view.Action {
	if ok, why := v.s.CanRejoin(d); !ok {
		return view.Flash("cannot rejoin here: " + termsafe.Line(why) + "; run " + statestore.RejoinCommandIn(v.s.Store(), d.Handle))
	}
	// The session takes the call's lease (refused while another holds it)
	// and keeps it as long as the call runs here.
	key, err := v.s.Rejoin(d)
	if err != nil {
		v.load()
		return view.Flash("rejoin: " + termsafe.Line(err.Error()))
	}
	return view.Close().Then(view.Flash("rejoined " + termsafe.Line(d.Handle) + " as call " + termsafe.Line(key)))
}

// leaseLabel is how a record's call is held.
func leaseLabel(st statestore.LeaseState) string {
	itoa := strconv.Itoa
	switch {
	case st.Holder != nil && st.Holder.Owner == statestore.Me():
		return "attached"
	case st.Holder != nil:
		return "held " + itoa(st.Holder.Owner.PID) + "@" + termsafe.Line(st.Holder.Owner.Host)
	case st.Owner != nil:
		return "expired " + itoa(st.Owner.PID) + "@" + termsafe.Line(st.Owner.Host)
	}
	return st.State
}

func (v *View) Scope() keys.Scope { return Scope }

func (v *View) selected() (statestore.Detached, bool) {
	if len(v.list) == 0 {
		return statestore.Detached{}, false
	}
	return v.list[widget.Clamp(v.sel, 0, len(v.list)-1)], true
}

func (v *View) Key(c view.Context, name string, _ tea.KeyPressMsg) view.Action {
	if a, ok := bindings.Do(v, c, name); ok {
		return a
	}
	return view.ListKey(name, &v.sel, len(v.list))
}

func (v *View) Render(c view.Context, w, h int) string {
	th := c.Theme
	or := widget.FirstNonEmpty
	l := []string{th.Title.Render(fmt.Sprintf(" Detached calls %d — %s copies the rejoin command", len(v.list), c.KeyOf("copy")))}
	switch {
	case v.err != "":
		l = append(l, th.Error.Render("   "+termsafe.Line(v.err)))
	case len(v.list) == 0:
		l = append(l, th.Faint.Render("   no calls are left running ("+c.KeyOf("detach-call")+" detaches the selected call; quitting detaches the resumable ones)"))
	}
	room := max(1, h-7)
	top := widget.Clamp(v.sel-room+1, 0, max(0, len(v.list)-room))
	hw := min(36, max(16, w/3))
	for i := top; i < len(v.list) && i < top+room; i++ {
		d := v.list[i]
		state := v.leases[d.Handle]
		prog := ""
		if d.Progress.Updates > 0 {
			prog = " " + widget.Num(d.Progress.Value)
			if d.Progress.Total > 0 {
				prog += "/" + widget.Num(d.Progress.Total)
			}
		}
		local := ""
		if d.Fallback != "" {
			local = "  local copy"
		}
		row := fmt.Sprintf(" %-*s %-24s %s %s %s%s%s", hw, widget.Shorten(termsafe.Line(d.Handle), hw), widget.Shorten(state, 24),
			d.Started.In(c.Location).Format("01-02 15:04"), termsafe.Line(d.Method), termsafe.Line(d.Name), prog, local)
		if i == v.sel {
			l = append(l, th.Selected.Render(widget.Pad("▸"+row, w)))
		} else {
			l = append(l, " "+row)
		}
	}
	if d, ok := v.selected(); ok {
		l = append(l, "",
			" target   "+termsafe.Line(transport.RedactTarget(d.Target)), // a record an older build wrote may hold it as typed
			" session  "+termsafe.Line(or(d.SessionID, "(none)"))+" · "+termsafe.Line(or(d.ProtocolVersion, "?"))+" "+termsafe.Line(d.Era),
			" rejoin   "+th.Accent.Render(termsafe.Line(statestore.RejoinCommandIn(v.s.Store(), d.Handle))))
		if d.Fallback != "" {
			// On this machine only: another machine on the same Redis
			// does not list it.
			l = append(l, th.Faint.Render(" kept     "+statestore.FallbackLabel+", on this machine only: "+termsafe.Line(d.Fallback)))
		}
		if ok, why := v.s.CanRejoin(d); ok {
			l = append(l, th.OK.Render(" "+c.KeyOf("rejoin-here")+" rejoins it in this session"))
		} else {
			l = append(l, th.Faint.Render(" not here: "+termsafe.Line(why)))
		}
	}
	return strings.Join(l, "\n")
}
