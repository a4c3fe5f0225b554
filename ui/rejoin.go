package ui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"mcpscope/internal/termsafe"
	"mcpscope/session"
	"mcpscope/transport"
	"mcpscope/ui/keys"
)

// detachSelected leaves the selected running call to the server; its
// record stays in the state store for `mcpscope rejoin` or the D view.
func (m *Model) detachSelected() {
	c := m.selectedCall()
	if c == nil {
		return
	}
	h, err := m.s.Detach(c)
	if err != nil {
		m.setFlash("detach: " + err.Error())
		return
	}
	m.refresh()
	m.setFlash("detached call " + c.Key + " as " + h + " — rejoin: " + session.RejoinCommand(h) + " (" + m.keyOf("rejoinable") + " lists them)")
}

// whyNoDetach is why detach cannot run now ("" when it may: the session
// then says why a particular call cannot be detached).
func (m *Model) whyNoDetach() string {
	if why := m.whyNoChange(); why != "" {
		return why
	}
	if strings.HasPrefix(m.info.Target, "stdio:") {
		return "a stdio server ends with mcpscope, so no call can be left running on it — run the call as a task (" +
			m.keyOf("form-task") + " in the tool's form) to keep working while it runs, or connect over HTTP to detach calls and rejoin them later"
	}
	return ""
}

// reconnectNow fires every pending stream resume at once.
func (m *Model) reconnectNow() {
	switch n := m.s.ReconnectNow(); n {
	case 0:
		m.setFlash("no stream is waiting to reconnect")
	case 1:
		m.setFlash("reconnecting 1 stream now")
	default:
		m.setFlash("reconnecting " + itoa(n) + " streams now")
	}
}

// rejoinView lists the calls left running on servers (by this or another
// mcpscope) with the command that rejoins each, and rejoins in this
// session the ones that belong to it.
type rejoinView struct {
	list   []session.Detached
	leases map[string]string // handle → how its call is held (leaseLabel)
	sel    int
	err    string
}

func (m *Model) openRejoin() {
	v := &rejoinView{}
	v.load(m)
	m.push(v)
}

func (v *rejoinView) load(m *Model) {
	list, err := m.opts.StateStore.List()
	v.list, v.err, v.leases = list, "", map[string]string{}
	if err != nil {
		v.err = err.Error()
	}
	for _, d := range list {
		v.leases[d.Handle] = leaseLabel(session.CallState(m.opts.StateStore, d))
	}
	v.sel = clamp(v.sel, 0, len(v.list)-1)
}

func (v *rejoinView) scope() keys.Scope { return keys.Rejoin }

func (v *rejoinView) selected() (session.Detached, bool) {
	if len(v.list) == 0 {
		return session.Detached{}, false
	}
	return v.list[clamp(v.sel, 0, len(v.list)-1)], true
}

// httpTarget is the URL this session was opened on ("" for stdio and
// journals).
func (m *Model) httpTarget() string {
	if t := m.opts.Target; len(t) == 1 && (strings.HasPrefix(t[0], "http://") || strings.HasPrefix(t[0], "https://")) {
		return t[0]
	}
	return ""
}

// rejoinHere says whether d can be rejoined in this session, and if not,
// why: session.CanRejoin decides, for the TUI and the CLI alike.
func (m *Model) rejoinHere(d session.Detached) (bool, string) {
	ok, why := m.s.CanRejoin(m.opts.StateStore, d)
	return ok, termsafe.Line(why)
}

// leaseLabel is how a record's call is held, for the D view.
func leaseLabel(st session.LeaseState) string {
	switch {
	case st.Holder != nil && st.Holder.Owner == session.Me():
		return "attached"
	case st.Holder != nil:
		return "held " + itoa(st.Holder.Owner.PID) + "@" + termsafe.Line(st.Holder.Owner.Host)
	case st.Owner != nil:
		return "expired " + itoa(st.Owner.PID) + "@" + termsafe.Line(st.Owner.Host)
	}
	return st.State
}

func (v *rejoinView) key(m *Model, name string, _ tea.KeyPressMsg) (bool, tea.Cmd) {
	switch name {
	default:
		listKey(m, name, &v.sel, len(v.list))
	case "rejoin-close":
		return true, nil
	case "rejoin-refresh":
		v.load(m)
	case "copy":
		if d, ok := v.selected(); ok {
			return false, m.copyText(session.RejoinCommand(d.Handle), "rejoin command")
		}
	case "rejoin-forget":
		d, ok := v.selected()
		if !ok {
			return false, nil
		}
		if st := session.CallState(m.opts.StateStore, d); st.State == "held" {
			m.setFlash("call " + termsafe.Line(d.Handle) + " is " + leaseLabel(st) + "; not forgotten")
			return false, nil
		}
		if err := m.opts.StateStore.Delete(d.Handle); err != nil {
			m.setFlash("forget: " + err.Error())
		} else {
			m.setFlash("forgot " + d.Handle + " (the server may still run it)")
		}
		v.load(m)
	case "rejoin-here":
		d, ok := v.selected()
		if !ok {
			return false, nil
		}
		if ok, why := m.rejoinHere(d); !ok {
			m.setFlash("cannot rejoin here: " + why + "; run " + session.RejoinCommand(d.Handle))
			return false, nil
		}
		// The session takes the call's lease (refused while another holds
		// it) and keeps it as long as the call runs here.
		c, err := m.s.Rejoin(context.Background(), d)
		if err != nil {
			m.setFlash("rejoin: " + termsafe.Line(err.Error()))
			v.load(m)
			return false, nil
		}
		m.refresh()
		m.focus, m.req.follow = paneRequests, true
		m.fixScroll()
		m.setFlash("rejoined " + d.Handle + " as call " + c.Key)
		return true, nil
	}
	return false, nil
}

func (v *rejoinView) render(m *Model, w, h int) string {
	l := []string{m.th.Title.Render(fmt.Sprintf(" Detached calls %d — %s copies the rejoin command", len(v.list), m.keyOf("copy")))}
	switch {
	case v.err != "":
		l = append(l, m.th.Error.Render("   "+termsafe.Line(v.err)))
	case len(v.list) == 0:
		l = append(l, m.th.Faint.Render("   no calls are left running ("+m.keyOf("detach-call")+" detaches the selected call; quitting detaches the resumable ones)"))
	}
	room := max(1, h-7)
	top := clamp(v.sel-room+1, 0, max(0, len(v.list)-room))
	hw := min(36, max(16, w/3))
	for i := top; i < len(v.list) && i < top+room; i++ {
		d := v.list[i]
		state := v.leases[d.Handle]
		prog := ""
		if d.Progress.Updates > 0 {
			prog = " " + fmtNum(d.Progress.Value)
			if d.Progress.Total > 0 {
				prog += "/" + fmtNum(d.Progress.Total)
			}
		}
		row := fmt.Sprintf(" %-*s %-24s %s %s %s%s", hw, shorten(termsafe.Line(d.Handle), hw), shorten(state, 24),
			d.Started.In(m.opts.Location).Format("01-02 15:04"), termsafe.Line(d.Method), termsafe.Line(d.Name), prog)
		if i == v.sel {
			l = append(l, m.th.Selected.Render(pad("▸"+row, w)))
		} else {
			l = append(l, " "+row)
		}
	}
	if d, ok := v.selected(); ok {
		l = append(l, "",
			" target   "+termsafe.Line(transport.RedactTarget(d.Target)), // a record an older build wrote may hold it as typed
			" session  "+termsafe.Line(firstNonEmpty(d.SessionID, "(none)"))+" · "+termsafe.Line(firstNonEmpty(d.ProtocolVersion, "?"))+" "+termsafe.Line(d.Era),
			" rejoin   "+m.th.Accent.Render(termsafe.Line(session.RejoinCommand(d.Handle))))
		if ok, why := m.rejoinHere(d); ok {
			l = append(l, m.th.OK.Render(" "+m.keyOf("rejoin-here")+" rejoins it in this session"))
		} else {
			l = append(l, m.th.Faint.Render(" not here: "+why))
		}
	}
	return strings.Join(l, "\n")
}
