package ui

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	tea "charm.land/bubbletea/v2"

	"mcpscope/internal/shell"
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
	m.setFlash("detached call " + c.Key + " as " + h + " — rejoin: " + rejoinCommand(h) + " (" + m.keyOf("rejoinable") + " lists them)")
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

// rejoinCommand is the shell command that rejoins a record.
func rejoinCommand(handle string) string {
	return shell.Join([]string{"mcpscope", "rejoin", handle})
}

// rejoinView lists the calls left running on servers (by this or another
// mcpscope) with the command that rejoins each, and rejoins in this
// session the ones that belong to it.
type rejoinView struct {
	list []session.Detached
	sel  int
	err  string
}

func (m *Model) openRejoin() {
	v := &rejoinView{}
	v.load(m)
	m.push(v)
}

func (v *rejoinView) load(m *Model) {
	list, err := m.opts.StateStore.List()
	v.list, v.err = list, ""
	if err != nil {
		v.err = err.Error()
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
// why. A call of another MCP session on the same server (one a killed
// mcpscope left) is rejoined in its own session, beside this one.
func (m *Model) rejoinHere(d session.Detached) (bool, string) {
	if d.Alive() {
		return false, fmt.Sprintf("attached to the mcpscope with pid %d", d.OwnerPID)
	}
	if d.OwnerPID == os.Getpid() {
		return false, "still attached in this session"
	}
	if m.s.Transport() == nil || m.info.Closed {
		return false, "this session is not connected"
	}
	if t := m.httpTarget(); t == "" || d.Target != transport.RedactURL(t) { // records keep the URL redacted
		return false, "made against another server than this session's"
	}
	if d.Era != "" && m.info.Era != "" && d.Era != m.info.Era {
		return false, "made in the " + termsafe.Line(d.Era) + " era; this session is " + m.info.Era
	}
	for _, c := range m.h.calls {
		if sn := c.Snapshot(); bytes.Equal(bytes.TrimSpace(sn.ID), bytes.TrimSpace(d.RequestID)) && !sn.State.Ended() {
			return false, "its request id is in use by running call " + sn.Key
		}
	}
	return true, ""
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
			return false, m.copyText(rejoinCommand(d.Handle), "rejoin command")
		}
	case "rejoin-forget":
		d, ok := v.selected()
		if !ok {
			return false, nil
		}
		if d.Alive() {
			m.setFlash("call " + d.Handle + " is attached to pid " + itoa(d.OwnerPID) + "; not forgotten")
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
			m.setFlash("cannot rejoin here: " + why + "; run " + rejoinCommand(d.Handle))
			return false, nil
		}
		release, err := m.opts.StateStore.Claim(d.Handle)
		if err != nil {
			m.setFlash("rejoin: " + err.Error())
			return false, nil
		}
		c, err := m.s.Rejoin(context.Background(), d)
		if err != nil {
			release()
			m.setFlash("rejoin: " + err.Error())
			return false, nil
		}
		// The claim lasts as long as the call: it ends here (the record is
		// then deleted) or is detached again.
		go func() { <-c.Done(); release() }()
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
		state := "rejoinable"
		if d.Alive() {
			state = "pid " + itoa(d.OwnerPID)
		} else if d.OwnerPID == os.Getpid() {
			state = "attached"
		}
		prog := ""
		if d.Progress.Updates > 0 {
			prog = " " + fmtNum(d.Progress.Value)
			if d.Progress.Total > 0 {
				prog += "/" + fmtNum(d.Progress.Total)
			}
		}
		row := fmt.Sprintf(" %-*s %-10s %s %s %s%s", hw, shorten(termsafe.Line(d.Handle), hw), state,
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
			" rejoin   "+m.th.Accent.Render(termsafe.Line(rejoinCommand(d.Handle))))
		if ok, why := m.rejoinHere(d); ok {
			l = append(l, m.th.OK.Render(" "+m.keyOf("rejoin-here")+" rejoins it in this session"))
		} else {
			l = append(l, m.th.Faint.Render(" not here: "+why))
		}
	}
	return strings.Join(l, "\n")
}
