// Package listen is the listen view (l): the session's
// subscriptions/listen streams (2026-07-28) — open ones and, greyed, ended
// ones — with what each asked for, what the server acknowledged, how many
// notifications it carried and where a dropped stream was re-listened; it
// opens and closes streams.
package listen

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/internal/termsafe"
	"mcpscope/session"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
	"mcpscope/ui/widget"
)

// Scope is where the view's keys are looked up.
const Scope keys.Scope = "listen"

// Method is the 2026-07-28 request that opens a listen stream.
const Method = "subscriptions/listen"

// Session is what the view reads of the session and the intents it sends.
type Session interface {
	// Streams is the session's listen calls, oldest first.
	Streams() []*session.Call
	// Notes is how many notifications went to the stream with this call
	// key, and the last one's method.
	Notes(key string) (n int, last string)
	// WhyNoNew is why no stream can be opened now ("" when one can).
	WhyNoNew() string
	// New asks which notifications a new stream wants, then opens it.
	New() view.Action
	// Open shows the stream's call in the detail.
	Open(c *session.Call) view.Action
	// Close ends a stream this session opened.
	Close(c *session.Call) view.Action
}

// View is the list and its selection.
type View struct {
	s    Session
	list []*session.Call
	sel  int
}

// New opens the view on the newest stream.
func New(s Session) *View {
	v := &View{s: s}
	v.Refresh(view.Context{})
	v.sel = max(0, len(v.list)-1)
	return v
}

// Keys is the view's part of the keymap.
var Keys = view.Group{Scope: Scope, Bindings: bindings.Keys(), Footer: []string{"listen-new", "listen-close", "open", "listen-back", "help"}}

var bindings = view.Bindings[*View]{
	{Binding: keys.Binding{Name: "listen-new", Scope: Scope, Keys: []string{"n"}, Help: "open a listen stream: list changes, resource URIs, task ids", Short: "new"},
		Run:      func(v *View, _ view.Context) view.Action { return v.s.New() },
		Disabled: func(v *View, _ view.Context) string { return v.s.WhyNoNew() }},
	{Binding: keys.Binding{Name: "listen-close", Scope: Scope, Keys: []string{"c"}, Help: "close the selected listen stream", Short: "close"},
		Run: func(v *View, _ view.Context) view.Action {
			if c := v.selected(); c != nil {
				return v.s.Close(c)
			}
			return view.Action{}
		}},
	{Binding: keys.Binding{Name: "listen-back", Scope: Scope, Keys: []string{"esc"}, Help: "back to the session", Short: "back"},
		Run: func(*View, view.Context) view.Action { return view.Close() }},
	{Binding: keys.Binding{Name: "open"},
		Run: func(v *View, _ view.Context) view.Action {
			if c := v.selected(); c != nil {
				return v.s.Open(c)
			}
			return view.Action{}
		}},
}

// Refresh lists the listen calls again; a new one (opened here or a
// re-listen) is selected.
func (v *View) Refresh(view.Context) {
	n := len(v.list)
	v.list = v.s.Streams()
	if len(v.list) > n {
		v.sel = len(v.list) - 1
	}
	v.sel = widget.Clamp(v.sel, 0, len(v.list)-1)
}

func (v *View) Scope() keys.Scope { return Scope }

// Disabled is why a binding cannot run now (a new stream, nothing
// connected or the session the host's).
func (v *View) Disabled(c view.Context, name string) string { return bindings.Why(v, c, name) }

func (v *View) selected() *session.Call {
	if len(v.list) == 0 {
		return nil
	}
	return v.list[widget.Clamp(v.sel, 0, len(v.list)-1)]
}

func (v *View) Key(c view.Context, name string, _ tea.KeyPressMsg) view.Action {
	if why := v.Disabled(c, name); why != "" {
		return view.Flash("listen: " + why)
	}
	if a, ok := bindings.Do(v, c, name); ok {
		return a
	}
	return view.ListKey(name, &v.sel, len(v.list))
}

// Items names what a filter asks for, one word or "uri …" per item.
func Items(f session.ListenFilter) []string {
	var out []string
	if f.ToolsListChanged {
		out = append(out, "tools")
	}
	if f.PromptsListChanged {
		out = append(out, "prompts")
	}
	if f.ResourcesListChanged {
		out = append(out, "resources")
	}
	for _, u := range f.ResourceSubscriptions {
		out = append(out, "uri "+termsafe.Line(u))
	}
	for _, t := range f.TaskIDs {
		out = append(out, "task "+termsafe.Line(t))
	}
	if len(out) == 0 {
		out = append(out, "nothing")
	}
	return out
}

// FilterOf reads the filter out of a listen request's params or an
// acknowledgement's params (both {"notifications": {...}}).
func FilterOf(raw json.RawMessage) (session.ListenFilter, bool) {
	var p struct {
		Notifications *session.ListenFilter `json:"notifications"`
	}
	if json.Unmarshal(raw, &p) != nil || p.Notifications == nil {
		return session.ListenFilter{}, false
	}
	return *p.Notifications, true
}

// stream is what the view says about one listen call.
type stream struct {
	sn        session.CallSnapshot
	asked     []string
	acked     []string // nil until the acknowledgement arrives
	ackErr    bool     // an acknowledgement arrived but was unreadable
	missing   []string // asked for but not acknowledged
	notes     int      // notifications demultiplexed to it (not the acknowledgement)
	next      string   // the call that re-listened after a drop
	hasAck    bool
	lastNotif string
}

func (v *View) stream(c *session.Call) stream {
	li := stream{sn: c.Snapshot()}
	asked, _ := FilterOf(li.sn.Params)
	li.asked = Items(asked)
	if li.sn.Ack != nil {
		li.hasAck = true
		if ack, ok := FilterOf(li.sn.Ack); ok {
			li.acked = Items(ack)
			for _, a := range li.asked {
				if a != "nothing" && !slices.Contains(li.acked, a) {
					li.missing = append(li.missing, a)
				}
			}
		} else {
			li.ackErr = true
		}
	}
	li.notes, li.lastNotif = v.s.Notes(c.Key)
	if n := c.Next(); n != nil {
		li.next = n.Key
	}
	return li
}

func (v *View) Render(c view.Context, w, h int) string {
	th := c.Theme
	short := widget.Shorten
	open := 0
	for _, c := range v.list {
		if !c.Snapshot().State.Ended() {
			open++
		}
	}
	l := []string{th.Title.Render(fmt.Sprintf(" Listen streams %d open, %d in all — %s opens one, %s closes the selected",
		open, len(v.list), c.KeyOf("listen-new"), c.KeyOf("listen-close")))}
	if len(v.list) == 0 {
		l = append(l, th.Faint.Render("   no listen streams yet — "+c.KeyOf("listen-new")+" opens one (subscriptions/listen, 2026-07-28)"))
	}
	l = append(l, th.Faint.Render(fmt.Sprintf("  %-6s %-10s %-7s %-6s %s", "call", "state", "ack", "notes", "asked for")))
	prev := map[string]string{} // re-listen → the dropped call it replaces
	for _, c := range v.list {
		if n := c.Next(); n != nil {
			prev[n.Key] = c.Key
		}
	}
	room := max(1, h-9)
	top := widget.Clamp(v.sel-room+1, 0, max(0, len(v.list)-room))
	for i := top; i < len(v.list) && i < top+room; i++ {
		li := v.stream(v.list[i])
		ack := "waiting"
		switch {
		case li.ackErr:
			ack = "?"
		case li.hasAck && len(li.missing) == 0:
			ack = "all"
		case li.hasAck:
			ack = "partial"
		}
		row := fmt.Sprintf(" %-6s %-10s %-7s %-6d %s", "#"+widget.MidCut(widget.IDText(li.sn.Key), 5), short(string(li.sn.State), 10), ack, li.notes,
			strings.Join(li.asked, ", "))
		if p := prev[li.sn.Key]; p != "" {
			row += " (re-listen of #" + p + ")"
		}
		if li.next != "" {
			row += " → re-listened as #" + li.next
		}
		row = widget.Fit(row, w-1)
		switch {
		case i == v.sel:
			l = append(l, th.Selected.Render(widget.Pad("▸"+ansi.Strip(row), w)))
		case li.sn.State.Ended():
			l = append(l, th.Faint.Render(" "+row))
		default:
			l = append(l, " "+row)
		}
	}
	sel := v.selected()
	if sel == nil {
		return strings.Join(l, "\n")
	}
	li := v.stream(sel)
	l = append(l, "", " asked for     "+strings.Join(li.asked, ", "))
	switch {
	case li.ackErr:
		l = append(l, th.Warn.Render(" acknowledged  (unreadable: "+termsafe.Line(short(string(li.sn.Ack), 60))+")"))
	case !li.hasAck:
		l = append(l, th.Faint.Render(" acknowledged  (not yet)"))
	default:
		l = append(l, " acknowledged  "+th.OK.Render(strings.Join(li.acked, ", ")))
		if len(li.missing) > 0 {
			l = append(l, " not acked     "+th.Warn.Render(strings.Join(li.missing, ", ")+" — the server will not send these"))
		}
	}
	notes := strconv.Itoa(li.notes) + " notification(s)"
	if li.lastNotif != "" {
		notes += ", last " + termsafe.Line(li.lastNotif)
	}
	l = append(l, " received      "+notes)
	switch {
	case li.next != "":
		l = append(l, th.Warn.Render(" dropped       re-listened as #"+li.next))
	case li.sn.State.Ended():
		end := string(li.sn.State)
		if e := li.sn.Err(); e != nil {
			end += ": " + termsafe.Line(e.Error())
		}
		l = append(l, th.Faint.Render(" ended         "+end))
	}
	return strings.Join(l, "\n")
}
