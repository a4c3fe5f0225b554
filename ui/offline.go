package ui

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"mcpscope/internal/termsafe"
	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/transport"
)

// The inspector over a session that cannot send on its own: a journal read
// back (mcpscope open), or a host's session watched through a proxy
// (mcpscope attach). Keys that need a live server say why they cannot act;
// replays go to a live session of their own (Live), which the model shows
// in place of the recording until the user switches back.

// Live is how replays reach a server when the session itself cannot send:
// a recording's target, or the URL an HTTP proxy forwards to.
type Live struct {
	// Target names what Connect connects to, as shown to the user
	// ("stdio: node server.js", "http://…"; credentials redacted).
	Target string
	// Confirm: connecting starts a command on this machine (a recorded
	// stdio command); the user is asked first, shown Target.
	Confirm bool
	// Connect starts the live session (handshake done). It must give up by
	// itself within a bounded time. nil: no target is known; Missing says
	// what to give on the command line.
	Connect func(ctx context.Context) (*session.Session, *Responder, error)
	Missing string
}

// connectWait bounds a Live connection as the UI waits for it (Connect's
// own handshake timeout is normally shorter).
const connectWait = 2 * time.Minute

// cancelWait bounds the wait for a proxy's answer to a foreign cancel
// (proxy.AttachAnswerWait plus slack).
const cancelWait = 15 * time.Second

// storeGens numbers the store wake-up loops: when the model switches to
// another session, the old session's loop is dropped at its next wake-up.
var storeGens atomic.Int64

// recording reports a journal read back: nothing is connected.
func (m *Model) recording() bool { return m.s.Transport() == nil }

// journalName is the recording's file, for the status bar and messages.
func (m *Model) journalName() string {
	if p := m.info.JournalPath; p != "" {
		return termsafe.Line(filepath.Base(p))
	}
	return "a journal"
}

// cannotSend says why the session cannot send a request of its own ("" when
// it can).
func (m *Model) cannotSend() string {
	switch {
	case m.recording():
		return "this is a recording (" + m.journalName() + "): nothing is connected"
	case m.s.Follows():
		if in, ok := m.s.Transport().(transport.Injector); ok && !in.CanInject() {
			return "the proxy forwards HTTP: it puts no request of mcpscope's into the host's session"
		}
		if m.feedEnded() != "" {
			return "the proxy is gone (" + m.feedEnded() + ")"
		}
	}
	return ""
}

// feedEnded is why an attached session's proxy connection ended ("" while
// it runs, and for every other session).
func (m *Model) feedEnded() string {
	t := m.s.Transport()
	if !m.s.Follows() || t == nil {
		return ""
	}
	select {
	case <-t.Done():
	default:
		return ""
	}
	if e, ok := t.(transport.Ender); ok && e.Ended() != "" {
		return termsafe.Line(e.Ended())
	}
	return "the connection to the proxy ended"
}

// refuse says, in the footer, why a key cannot act here.
func (m *Model) refuse(what, why string) {
	m.setFlash(what + ": " + why)
}

// isHosts reports a call another client made through a proxy (its host).
func isHosts(sn session.CallSnapshot) bool {
	return sn.Adopted && sn.Via == transport.ViaHost
}

// cancelCall cancels c: the session's own call as usual; a host's call
// (attached) after the user confirms, through the proxy; nothing in a
// recording.
func (m *Model) cancelCall(c *session.Call) tea.Cmd {
	sn := c.Snapshot()
	switch {
	case m.recording():
		m.refuse("cancel", "this is a recording ("+m.journalName()+"): nothing runs to cancel")
		return nil
	case sn.Adopted && m.s.Follows():
		if sn.State.Ended() {
			m.refuse("cancel", "call "+termsafe.Line(sn.Key)+" ("+termsafe.Line(sn.Method)+") already ended")
			return nil
		}
		if why := m.feedEnded(); why != "" {
			m.refuse("cancel", "the proxy is gone ("+why+")")
			return nil
		}
		title := fmt.Sprintf("Cancel the host's call %s (%s %s)? The server gets notifications/cancelled, the host a JSON-RPC error saying mcpscope cancelled it.",
			termsafe.Line(sn.Key), termsafe.Line(sn.Method), termsafe.Line(sn.Name))
		m.choose(title, []string{"no, leave it running", "yes, cancel the host's call"}, 0, func(m *Model, i int) tea.Cmd {
			if i != 1 {
				m.setFlash("left the host's call " + termsafe.Line(sn.Key) + " running")
				return nil
			}
			return m.cancelForeign(c)
		})
		return nil
	case sn.Adopted:
		m.refuse("cancel", "call "+termsafe.Line(sn.Key)+" is another client's")
		return nil
	}
	if err := m.s.Cancel(c, ""); err != nil {
		m.setFlash("cancel: " + err.Error())
		return nil
	}
	m.setFlash("cancelled call " + c.Key + " (" + c.Method + ")")
	return nil
}

// cancelForeign sends the cancel of a host's call and reports the proxy's
// answer, waiting for it at most cancelWait.
func (m *Model) cancelForeign(c *session.Call) tea.Cmd {
	done := make(chan error, 1)
	if err := m.s.CancelForeign(c, "", func(err error) { done <- err }); err != nil {
		m.setFlash("cancel: " + termsafe.Line(err.Error()))
		return nil
	}
	key := termsafe.Line(c.Key)
	m.setFlash("cancelling the host's call " + key + "…")
	return func() tea.Msg {
		select {
		case err := <-done:
			if err != nil {
				return flashMsg("cancel of the host's call " + key + " failed: " + termsafe.Line(err.Error()))
			}
			return flashMsg("cancelled the host's call " + key + ": the host got an error, the server notifications/cancelled")
		case <-time.After(cancelWait):
			return flashMsg(fmt.Sprintf("cancel of the host's call %s: no answer from the proxy within %s", key, cancelWait))
		}
	}
}

// thenSaying runs then and, when it flashed what it did, adds where.
func (m *Model) thenSaying(then func(*Model) tea.Cmd, where string) tea.Cmd {
	before := m.flash
	cmd := then(m)
	if m.flash != before {
		m.addToFlash(where)
	}
	return cmd
}

// liveMsg is a Live connection made (or not) for a replay.
type liveMsg struct {
	s    *session.Session
	resp *Responder
	err  error
	then func(m *Model) tea.Cmd
}

// goLive runs then on the live session replays go to: the one made
// before, else a new one from o.Live (after the user confirms a command
// it would start). The model shows the live session from then on; the
// "switch-session" key goes back.
func (m *Model) goLive(what, why string, then func(m *Model) tea.Cmd) tea.Cmd {
	if m.other != nil && m.liveOther {
		cmd := m.switchSession()
		return tea.Batch(cmd, m.thenSaying(then, " — in the live session; "+m.keyOf("switch-session")+" goes back to "+m.other.sessionName()))
	}
	if msg := m.noLive(why); msg != "" {
		m.refuse(what, msg)
		return nil
	}
	lv := m.opts.Live
	connect := func(m *Model) tea.Cmd {
		if m.connecting {
			m.setFlash("still connecting to " + termsafe.Line(lv.Target) + "…")
			return nil
		}
		m.connecting = true
		m.setFlash("connecting to " + termsafe.Line(lv.Target) + " for the " + what + "…")
		ctx := m.ctx()
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(ctx, connectWait)
			defer cancel()
			s, resp, err := lv.Connect(ctx)
			return liveMsg{s: s, resp: resp, err: err, then: then}
		}
	}
	if !lv.Confirm {
		return connect(m)
	}
	title := "The " + what + " starts this command on this machine: " + termsafe.Line(lv.Target) + " — run it?"
	m.choose(title, []string{"no", "yes, start it and " + what}, 0, func(m *Model, i int) tea.Cmd {
		if i != 1 {
			m.setFlash(what + ": nothing started")
			return nil
		}
		return connect(m)
	})
	return nil
}

func (m *Model) ctx() context.Context {
	if m.opts.Context != nil {
		return m.opts.Context
	}
	return context.Background()
}

// liveReady takes in the live session: the model now shows it, and the
// recording (or attached session) waits behind the switch key.
func (m *Model) liveReady(msg liveMsg) tea.Cmd {
	m.connecting = false
	target := "the live target"
	if m.opts.Live != nil {
		target = m.opts.Live.Target
	}
	if msg.err != nil {
		m.setFlash("could not connect to " + termsafe.Line(target) + ": " + termsafe.Line(msg.err.Error()))
		return nil
	}
	if m.other != nil { // a second connection raced the first: keep the first
		msg.s.Close()
		if m.liveOther {
			return tea.Batch(m.switchSession(), msg.then(m))
		}
		return msg.then(m)
	}
	o := m.opts
	o.Session, o.Responder, o.Live = msg.s, msg.resp, nil
	lm := New(o)
	lm.th, lm.w, lm.hgt = m.th, m.w, m.hgt
	m.other, m.liveOther = lm, true
	cmd := m.switchSession()
	cmds := []tea.Cmd{cmd, m.thenSaying(msg.then, " — in a live session against "+termsafe.Line(target)+"; "+m.keyOf("switch-session")+" goes back")}
	if m.resp != nil {
		cmds = append(cmds, waitPrompt(m.resp))
	}
	m.catalog.Fetch(false)
	return tea.Batch(cmds...)
}

// switchSession shows the other session (the live one replays went to,
// or the recording) in place of this one.
func (m *Model) switchSession() tea.Cmd {
	if m.other == nil {
		m.setFlash("no other session: a replay from a recording or an attached HTTP proxy opens one")
		return nil
	}
	cur := *m
	o := m.other
	live := !m.liveOther
	*m = *o
	cur.other = nil
	m.other, m.liveOther = &cur, live
	m.th, m.w, m.hgt = cur.th, cur.w, cur.hgt
	m.storeGen = storeGens.Add(1)
	m.refresh()
	key := m.keyOf("switch-session")
	switch {
	case live:
		m.setFlash("back on " + m.sessionName() + " — " + key + " shows the live session again")
	default:
		m.setFlash("the live session (" + termsafe.Line(m.info.Target) + ") — " + key + " goes back to " + cur.sessionName())
	}
	return m.waitStore(0)
}

// sessionName names the session shown, for messages.
func (m *Model) sessionName() string {
	switch {
	case m.recording():
		return "the recording"
	case m.s.Follows():
		return "the attached session"
	}
	return "the live session"
}

// otherPrompt hands a server request of the live session, shown while the
// model shows the recording, to the live session's model.
func (m *Model) otherPrompt(p *serverPrompt) tea.Cmd {
	o := m.other
	o.prompts = append(o.prompts, p)
	m.setFlash("the live session's server asks for input — " + m.keyOf("switch-session") + " shows it")
	return tea.Batch(waitPrompt(o.resp), watchPrompt(p))
}

// whyNoChange is why keys that change the session cannot now ("" when
// they can): the disabled reason of those bindings.
func (m *Model) whyNoChange() string {
	if why := m.cannotSend(); why != "" {
		return why
	}
	if m.s.Follows() {
		return "the host's session is the host's to change; mcpscope only adds calls and replays to it"
	}
	return ""
}

// whyNoReplay is why a replay has nowhere to go ("" when this session or
// a live one takes it): the disabled reason of replay and edit-replay.
func (m *Model) whyNoReplay() string {
	why := m.cannotSend()
	if why == "" || m.other != nil && m.liveOther {
		return ""
	}
	return m.noLive(why)
}

// noLive is why, no live session being made for it, a request this
// session cannot send is refused ("" when o.Live can connect one).
func (m *Model) noLive(why string) string {
	lv := m.opts.Live
	if lv != nil && lv.Connect != nil {
		return ""
	}
	if lv != nil && lv.Missing != "" {
		why += "; " + lv.Missing
	}
	return why
}

// loadingText is the status bar's word on a journal still being read.
func (m *Model) loadingText() (long, short string) {
	l := m.s.Loading()
	switch {
	case l.Active && l.Size > 0:
		pct := int(l.Read * 100 / l.Size)
		return fmt.Sprintf("loading %d%% (%s of %s)", pct, humanBytes(int(l.Read)), humanBytes(int(l.Size))), fmt.Sprintf("loading %d%%", pct)
	case l.Active:
		return "loading…", "loading…"
	case l.Err != nil:
		var d *journal.Damage
		if errors.As(l.Err, &d) {
			n := d.Count
			if d.Torn > 0 {
				n++
			}
			return fmt.Sprintf("%d unreadable line(s)", n), "damaged"
		}
		return "read stopped: " + termsafe.Line(shorten(l.Err.Error(), 40)), "read stopped"
	}
	return "", ""
}

// connState is the connection in one word, and why when it is not
// plainly connected.
func (m *Model) connState() (word, why string) {
	in := m.info
	t := m.s.Transport()
	switch {
	case t == nil:
		return "recording", "offline · " + m.journalName()
	case m.s.Follows():
		if why := m.feedEnded(); why != "" {
			return "disconnected", why
		}
		return "attached", termsafe.Line(t.Describe())
	case in.Closed:
		return "disconnected", in.CloseReason
	case in.CloseReason != "": // the server process exited; the session is not closed yet
		return "disconnected", in.CloseReason
	}
	select {
	case <-t.Done():
		return "disconnected", "the transport ended"
	default:
	}
	// A retry under way is the truth until it fails; then what failed.
	if in.Reinitializing {
		return "reconnecting", "the server forgot the session: starting a new one"
	}
	if n := in.Reconnecting; n > 0 {
		return "reconnecting", fmt.Sprintf("%d stream(s) waiting to be resumed (%s reconnects now)", n, m.keyOf("reconnect"))
	}
	if in.Unreachable != "" {
		return "disconnected", termsafe.Line(in.Unreachable)
	}
	return "connected", ""
}
