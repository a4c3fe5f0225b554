// Package ui is mcpscope's Bubble Tea front end: live panes for calls,
// notifications and progress over a session, a detail view, a catalog, and
// dialogs for the server's requests. It renders session state and sends
// intents; it never touches the network itself.
package ui

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"mcpscope/framestore"
	"mcpscope/internal/termsafe"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/themes"
	"mcpscope/ui/keys"
	"mcpscope/ui/roots"
	"mcpscope/ui/view"
	"mcpscope/ui/widget/textbox"
)

// Options configure the UI.
type Options struct {
	Session   *session.Session
	Responder *Responder // nil: server requests are not routed to the UI
	Theme     themes.Theme
	// Target is how the command line names the server, for copied
	// command lines ("http://…", or "--", "cmd", "args"…). Empty = demo.
	Target []string
	// TargetLine, when set, is the target with the connection flags it
	// needs (-H, -e, --bearer…), shell-quoted, secrets as $VARIABLE
	// references: what a copied command line ends with.
	TargetLine string

	// Clipboard writes the native clipboard; nil uses atotto. OSC 52 is
	// always sent as well.
	Clipboard func(string) error
	Now       func() time.Time
	Location  *time.Location
	// StateStore lists calls left running for a rejoin; nil uses
	// statestore.Default().
	StateStore statestore.Store
	// AutoTheme: no theme was chosen, so follow the terminal's background
	// (light or dark) once it answers.
	AutoTheme bool
	// SaveTheme keeps the theme T switched to for the next run (nil: not
	// kept).
	SaveTheme func(name string) error
	// Frame is the shortest gap between two redraws caused by the store
	// (default 33ms): floods coalesce into at most this many wake-ups.
	Frame time.Duration
	// Live, for a session that cannot send itself (a journal read back,
	// an HTTP proxy attached to), is where replays go (offline.go).
	Live *Live
	// Context bounds what the UI starts in the background (a Live
	// connection); nil is context.Background.
	Context context.Context
	// DetachOnQuit: the command detaches the calls that can be rejoined
	// once the inspector exits (Session.DetachAll), so quitting loses only
	// the others (quit.go asks about those).
	DetachOnQuit bool
	// Typeahead is what was typed before the inspector drew (while it
	// connected): taken as key presses first. Printable characters, enter,
	// tab, backspace, a lone esc and ctrl+letter are read; the rest of an
	// escape sequence (an arrow) is dropped.
	Typeahead []byte
	// OTLPStatus, when set, is the live OpenTelemetry exporter in one
	// line (where to, spans sent and dropped), for the info view.
	OTLPStatus func() string
}

type pane uint8

const (
	paneRequests pane = iota
	paneNotes
)

// modal is anything drawn over the panes that takes the keys: detail,
// forms, editors, choosers, help.
type modal interface {
	scope() keys.Scope
	// key handles one bound key (name) or typed text; close reports that the
	// modal is done.
	key(m *Model, name string, msg tea.KeyPressMsg) (close bool, cmd tea.Cmd)
	render(m *Model, w, h int) string
}

// listState is a scrolled, selectable list.
type listState struct {
	sel, top int
	follow   bool
}

// Model is the root model. Only it returns a tea.View; children render
// strings.
type Model struct {
	s      *session.Session
	resp   *Responder
	th     themes.Theme
	km     *keys.Map
	opts   Options
	rawSeq int // numbers the ids of raw messages the user sends
	h      *history

	w, hgt  int
	focus   pane
	catalog *catalog
	inCat   bool

	req, note listState
	paused    bool
	pausedLen int // rows visible when the pane was paused

	running []*session.Call
	find    findState // the panes' filters and the filter input line (find.go)
	modals  []modal
	prompts []*serverPrompt // server requests waiting for the user, oldest first
	active  *serverPrompt   // the one on screen
	// following are the 2026 extension tasks polled in the background (r in
	// the tasks view), by id.
	following map[string]bool
	// asking are the tasks whose server asks for input now (input_required),
	// for the row of the call that made each and a hint when one starts to.
	asking map[string]bool
	info   session.Info

	rowCache      map[rowKey]string
	rowCacheW     int
	rowCacheTheme string

	flash   string
	flashAt time.Time
	// flashCall is the call the flash names by its key: once a proxy says
	// which id the call carried on the wire (WireKey, a few ms after the
	// flash is made), the flash names that id, the one the journal has.
	flashCall *session.Call
	// flashWarn marks the flash as a session warning (Info.Warning),
	// shown in the warning colour until a key is pressed (the notes pane
	// keeps it too); warned counts those shown.
	flashWarn bool
	warned    int
	quit      bool

	// other is the session not shown: the live one replays went to while
	// the recording (or attached session) is shown, or the other way round
	// (liveOther false). storeGen numbers this model's store wake-ups.
	other      *Model
	liveOther  bool
	connecting bool // a Live connection is being made
	storeGen   int64
}

// New builds the root model over a started (or loaded) session.
func New(o Options) *Model {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Location == nil {
		o.Location = time.Local
	}
	if o.Frame == 0 {
		o.Frame = 33 * time.Millisecond
	}
	if o.Theme.Name == "" {
		o.Theme = themes.FromEnv("dark")
	}
	if o.StateStore == nil {
		o.StateStore = statestore.Default()
	}
	m := &Model{s: o.Session, resp: o.Responder, th: o.Theme, km: DefaultKeys(), opts: o, h: newHistory(o.Session),
		w: 80, hgt: 24}
	m.req.follow, m.note.follow = true, true
	if o.Responder != nil {
		// A person answers: input_required tasks (2026 tasks extension) are
		// put to them as they are seen, like any server request.
		o.Session.AutoAnswerTasks(true)
	}
	m.catalog = newCatalog(m)
	m.refresh()
	return m
}

// Keys exposes the keymap (tests press keys by binding name).
func (m *Model) Keys() *keys.Map { return m.km }

// Init starts the wake-up loops and fetches the catalog.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.waitStore(0), tick()}
	if keys := typeahead(m.opts.Typeahead); len(keys) > 0 {
		var seq []tea.Cmd
		for _, k := range keys {
			seq = append(seq, func() tea.Msg { return k })
		}
		cmds = append(cmds, tea.Sequence(seq...))
	}
	if m.opts.AutoTheme && !m.th.NoColor {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	if m.resp != nil {
		cmds = append(cmds, waitPrompt(m.resp))
	}
	if m.s.Transport() != nil && !m.s.Follows() {
		// An attached host's session: the catalog is fetched when opened
		// (C), not put into the host's server unasked.
		m.catalog.Fetch(false)
	}
	return tea.Batch(cmds...)
}

// waitStore waits for the store's coalescing signal. It sleeps first when
// re-armed, so a flood wakes the UI at most once per frame and key presses
// never queue behind a backlog of redraws.
func (m *Model) waitStore(delay time.Duration) tea.Cmd {
	ch, gen := m.s.Store().Changed(), m.storeGen
	return func() tea.Msg {
		if delay > 0 {
			time.Sleep(delay)
		}
		<-ch
		return storeChangedMsg{gen: gen}
	}
}

func tick() tea.Cmd {
	return tea.Tick(500*time.Millisecond, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// Pull takes in what the session gained, as the store's wake-up does in
// the program; a driver without a terminal (a benchmark) calls it itself.
func (m *Model) Pull() { m.refresh() }

// refresh pulls new items and call state into the model.
func (m *Model) refresh() {
	if gone := m.h.pull(); gone > 0 {
		// A session without a journal forgot its oldest rows: keep the
		// selection on the row it was on.
		m.note.sel, m.note.top = max(0, m.note.sel-gone), max(0, m.note.top-gone)
		m.pausedLen = max(0, m.pausedLen-gone)
	}
	m.running = m.h.running()
	m.find.refresh(m)
	m.info = m.s.Info()
	if m.info.Warnings != m.warned {
		// stderr is this screen: a warning the session gives a person at
		// once (the state store unreachable, a lease lost) goes here.
		m.warned = m.info.Warnings
		m.setFlash("⚠ " + m.info.Warning)
		m.flashWarn = true
	}
	m.noteAskingTasks()
	m.catalog.Poll()
	if v, ok := m.top().(viewer); ok {
		if r, ok := v.held().(view.Refresher); ok {
			r.Refresh(m.viewCtx())
		}
	}
	m.fixScroll()
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.hgt = msg.Width, msg.Height
		m.fixScroll()
	case tea.BackgroundColorMsg:
		if m.opts.AutoTheme && !m.th.NoColor {
			m.th = themes.ByName(map[bool]string{true: "dark", false: "light"}[msg.IsDark()])
		}
	case storeChangedMsg:
		if msg.gen != m.storeGen {
			break // the wake-up of a session no longer shown
		}
		m.refresh()
		cmd = m.waitStore(m.opts.Frame)
	case liveMsg:
		cmd = m.liveReady(msg)
	case filterStepMsg:
		m.find.step(m)
	case tickMsg:
		m.refresh()
		cmd = tick()
	case serverPromptMsg:
		if msg.p.told != "" {
			cmd = m.toldPrompt(msg.p)
			break
		}
		if m.resp == nil && m.other != nil && m.other.resp != nil {
			cmd = m.otherPrompt(msg.p)
			break
		}
		m.prompts = append(m.prompts, msg.p)
		cmd = tea.Batch(waitPrompt(m.resp), watchPrompt(msg.p), m.nextPrompt())
	case promptGoneMsg:
		cmd = m.promptGone(msg.p)
		if m.other != nil {
			m.other.promptGone(msg.p) // a prompt of the session not shown
		}
	case copiedMsg:
		switch {
		case msg.err != nil:
			m.setFlash("copied " + msg.what + " (" + humanBytes(msg.bytes) + ") via OSC 52 (no native clipboard)")
		default:
			m.setFlash("copied " + msg.what + " (" + humanBytes(msg.bytes) + ") to the clipboard")
		}
	case flashMsg:
		m.setFlash(string(msg))
	case taskFollowedMsg:
		delete(m.following, msg.id)
		m.setFlash(msg.note)
	case tea.PasteMsg:
		cmd = m.paste(msg)
	case textbox.Edited:
		if v, ok := m.top().(viewer); ok {
			cmd = m.update(v, msg)
		}
	case tea.KeyPressMsg:
		cmd = m.handleKey(msg)
	case tea.MouseWheelMsg:
		m.mouseWheel(msg.Mouse())
	case tea.MouseClickMsg:
		m.mouseClick(msg.Mouse())
	}
	if m.quit {
		return m, tea.Quit
	}
	if step := m.find.kick(m); step != nil {
		cmd = tea.Batch(cmd, step)
	}
	return m, cmd
}

func (m *Model) setFlash(s string) {
	m.flash, m.flashAt, m.flashCall, m.flashWarn = s, m.opts.Now(), nil, false
}

// flashNaming sets a flash that names call c by its key.
func (m *Model) flashNaming(s string, c *session.Call) {
	m.setFlash(s)
	m.flashCall = c
}

// addToFlash says more after the flash, keeping the call it names.
func (m *Model) addToFlash(more string) {
	c := m.flashCall
	m.setFlash(m.flash + more)
	m.flashCall = c
}

// flashText is the flash as shown: a call it names by a key of this
// session's under the id that went on the wire, once known.
func (m *Model) flashText() string {
	if c := m.flashCall; c != nil {
		if wk := c.Snapshot().WireKey; wk != "" {
			if i := strings.LastIndex(m.flash, c.Key); i >= 0 { // the call named last: "replayed call X as KEY"
				return m.flash[:i] + wk + m.flash[i+len(c.Key):]
			}
		}
	}
	return m.flash
}

func (m *Model) top() modal {
	if len(m.modals) == 0 {
		return nil
	}
	return m.modals[len(m.modals)-1]
}

func (m *Model) push(md modal) {
	if f, ok := md.(*form); ok {
		f.build(m) // a form the root asked for gets its view (form.go)
	}
	m.modals = append(m.modals, md)
}

// pop closes md, which need not be on top: a form that sent a call has
// put the call's detail over itself.
func (m *Model) pop(md modal) tea.Cmd {
	for i := len(m.modals) - 1; i >= 0; i-- {
		if m.modals[i] == md {
			m.modals = append(m.modals[:i], m.modals[i+1:]...)
			break
		}
	}
	return m.nextPrompt()
}

// textScope reports scopes where typed characters are text, not commands.
func textScope(s keys.Scope) bool {
	return s == keys.Form || s == keys.Editor || s == keys.Search || s == keys.Filter || s == roots.AskScope || s == roots.EditScope
}

func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	k := msg.String()
	if m.flashWarn {
		m.flash, m.flashWarn = "", false // read: the key does what it does too
	}
	if k == "ctrl+c" {
		m.quit = true
		return nil
	}
	if md := m.top(); md != nil {
		sc := md.scope()
		name := m.km.Lookup(sc, k, !textScope(sc))
		close, cmd := md.key(m, name, msg)
		if close {
			return tea.Batch(cmd, m.pop(md))
		}
		return cmd
	}
	if m.find.prompt != nil {
		return m.promptKey(msg)
	}
	if m.inCat {
		return m.catalogKey(m.km.Lookup(m.catalog.Scope(), k, true), msg)
	}
	sc := keys.Requests
	if m.focus == paneNotes {
		sc = keys.Notes
	}
	name := m.km.Lookup(sc, k, false)
	if name == "" {
		name = m.km.Lookup(keys.Panes, k, true)
	}
	a, _ := paneBindings.Do(m, m.viewCtx(), name)
	cmd := m.apply(a, nil)
	m.fixScroll()
	return cmd
}

// disabled is why the binding called name cannot run where the keys go
// now ("" when it can): the footer dims it, help says why.
func (m *Model) disabled(name string) string {
	switch md := m.top().(type) {
	case nil:
		switch {
		case m.find.prompt != nil:
			return ""
		case m.inCat:
			return m.catalog.Disabled(m.viewCtx(), name)
		}
		return paneBindings.Why(m, m.viewCtx(), name)
	case viewer:
		if d, ok := md.held().(view.Disabler); ok {
			return d.Disabled(m.viewCtx(), name)
		}
	}
	return ""
}

// Press runs the binding called name, as if its first key were pressed.
func (m *Model) Press(name string) tea.Cmd {
	_, cmd := m.Update(m.km.Press(name))
	return cmd
}

// followFocused selects the focused pane's last row and follows new ones;
// on paused notifications it resumes them.
func (m *Model) followFocused() {
	ls, n := m.focused()
	ls.follow, ls.sel = true, max(0, n-1)
	if m.focus == paneNotes && m.paused {
		m.paused = false
	}
}

// nextKind shows the next kind of notification row.
func (m *Model) nextKind() {
	next := (m.h.filter + 1) % numKinds
	m.h.setFilter(next)
	if nf := &m.find.note; nf.f != nil {
		m.setNoteFilter(nf.expr, nf.f) // checked again within the new kind
	}
	m.note.sel, m.note.follow = max(0, m.h.noteLen()-1), true
	m.setFlash("notifications: showing " + next.String())
}

// togglePause freezes or resumes the notification pane.
func (m *Model) togglePause() {
	m.paused = !m.paused
	m.pausedLen = m.h.noteLen()
	if m.paused {
		m.note.follow = false
		m.setFlash("notifications paused: new rows are kept but not shown; space resumes")
	} else {
		m.note.follow = true
		m.setFlash("notifications resumed")
	}
}

func (m *Model) nextTheme() {
	if m.th.NoColor {
		m.setFlash("NO_COLOR is set: colours stay off")
		return
	}
	names := themes.Names()
	for i, n := range names {
		if n == m.th.Name {
			m.th = themes.ByName(names[(i+1)%len(names)])
			m.opts.AutoTheme = false // chosen now: the background no longer decides
			m.setFlash("theme: " + m.th.Name)
			if m.opts.SaveTheme != nil {
				if err := m.opts.SaveTheme(m.th.Name); err != nil {
					m.setFlash("theme: " + m.th.Name + " (not kept for next time: " + err.Error() + ")")
				} else {
					m.setFlash("theme: " + m.th.Name + " (kept for next time)")
				}
			}
			return
		}
	}
	m.th = themes.ByName(names[0])
}

// focused returns the focused list and its length.
func (m *Model) focused() (*listState, int) {
	if m.focus == paneNotes {
		return &m.note, m.visibleNotes()
	}
	return &m.req, m.reqLen()
}

// visibleNotes is how many notification rows the pane shows: frozen while
// paused so reading is not disturbed.
func (m *Model) visibleNotes() int {
	n := m.h.noteLen()
	if m.paused && m.pausedLen < n {
		return m.pausedLen
	}
	return n
}

func (m *Model) move(ls *listState, n, d int) {
	ls.sel = clamp(ls.sel+d, 0, n-1)
	ls.follow = ls.sel == n-1 && d > 0
}

// fixScroll keeps selections in range and visible, and follows the newest
// row when asked to.
func (m *Model) fixScroll() {
	fix := func(ls *listState, n, h int) {
		if ls.follow {
			ls.sel = n - 1
		}
		ls.sel = clamp(ls.sel, 0, n-1)
		h = max(1, h)
		if ls.sel < ls.top {
			ls.top = ls.sel
		}
		if ls.sel >= ls.top+h {
			ls.top = ls.sel - h + 1
		}
		ls.top = clamp(ls.top, 0, max(0, n-h))
	}
	fix(&m.req, m.reqLen(), m.paneHeight(paneRequests)-1)
	noteH := m.paneHeight(paneNotes) - 1
	if m.h.dropped > 0 {
		noteH-- // the "older rows not kept" marker
	}
	fix(&m.note, m.visibleNotes(), noteH)
}

func (m *Model) selectedCall() *session.Call {
	if m.reqLen() == 0 {
		return nil
	}
	return m.reqCall(clamp(m.req.sel, 0, m.reqLen()-1))
}

func (m *Model) selectedNote() *framestore.Item {
	n := m.visibleNotes()
	if n == 0 {
		return nil
	}
	return m.s.Store().Get(m.h.noteSeq(clamp(m.note.sel, 0, n-1)))
}

// replaySelected replays the selected call (with params, when edited):
// in this session when it can send, else in the live session (Live).
func (m *Model) replaySelected(params json.RawMessage) tea.Cmd {
	c := m.selectedCall()
	if c == nil {
		return nil
	}
	if why := m.cannotSend(); why != "" {
		return m.goLive("replay", why, func(m *Model) tea.Cmd { m.replay(c, params); return nil })
	}
	m.replay(c, params)
	return nil
}

// replay sends c again in this model's session.
func (m *Model) replay(c *session.Call, params json.RawMessage) {
	n := m.s.Replay(c, params)
	m.req.follow = true
	m.flashNaming("replayed call "+termsafe.Line(c.Key)+" as "+n.Key, n)
}

func (m *Model) openEditReplay() {
	c := m.selectedCall()
	if c == nil {
		return
	}
	m.editJSON("Edit params, then replay "+c.Method, string(prettyParams(c.Params())),
		func(m *Model, text string) (string, tea.Cmd) {
			return "", m.replaySelected(json.RawMessage(text))
		})
}

func (m *Model) openRawSend() tea.Cmd {
	m.rawSeq++
	tmpl := `{"jsonrpc": "2.0", "id": "raw-` + itoa(m.rawSeq) + `", "method": "ping"}`
	m.editJSON("Send a raw JSON-RPC message", tmpl, func(m *Model, text string) (string, tea.Cmd) {
		c, err := m.s.SendRaw([]byte(text))
		if err != nil {
			return err.Error(), nil
		}
		if c != nil {
			m.req.follow = true
			m.setFlash("sent request " + c.Key)
		} else {
			m.setFlash("sent")
		}
		return "", nil
	})
	return nil
}

var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func (m *Model) openLogLevel() {
	m.choose("Server log level", logLevels, 1, func(m *Model, i int) tea.Cmd {
		if c := m.s.SetLogLevel(logLevels[i]); c != nil {
			m.setFlash("logging/setLevel " + logLevels[i] + " sent (call " + c.Key + ")")
		} else {
			m.setFlash("log level " + logLevels[i] + " will ride on each request's _meta")
		}
		return nil
	})
}

// paste gives pasted text to what is being edited.
func (m *Model) paste(msg tea.PasteMsg) tea.Cmd {
	if m.find.prompt != nil && m.top() == nil {
		return m.promptPaste(msg)
	}
	if v, ok := m.top().(viewer); ok {
		return m.update(v, msg)
	}
	return nil
}

func prettyParams(raw json.RawMessage) []byte {
	raw = protocol.StripMeta(raw)
	if len(raw) == 0 {
		return []byte("{}")
	}
	var b []byte
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	b, _ = json.MarshalIndent(v, "", "  ")
	return b
}
