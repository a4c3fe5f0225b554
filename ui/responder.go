package ui

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"

	"mcpscope/internal/termsafe"
	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/ui/detail"
	formview "mcpscope/ui/form"
	"mcpscope/ui/roots"
	"mcpscope/ui/view"
)

// Responder hands server→client requests to the UI and waits for the
// user's answer. It is created before the session (the session needs it)
// and read by the model once the program runs, through a channel, so
// requests that arrive during the handshake are not lost.
type Responder struct {
	ch    chan *serverPrompt
	mu    sync.Mutex
	roots []session.Root
	ask   bool
}

// NewResponder makes a responder that answers roots/list with roots (the
// working directory, or --root) at once, as hosts do; with ask, the user
// is asked each time instead, the editor starting from roots.
func NewResponder(roots []session.Root, ask bool) *Responder {
	return &Responder{ch: make(chan *serverPrompt, 64), roots: roots, ask: ask}
}

type answer struct {
	result json.RawMessage
	err    *journal.RPCError
}

// serverPrompt is one server request waiting for the user.
type serverPrompt struct {
	req   session.ServerRequest
	ctx   context.Context
	reply chan answer // capacity 1: the UI never blocks answering
	once  sync.Once
	// told is set for a request already answered without the user (roots/list
	// by default): the UI only notes what went back.
	told string
}

func (p *serverPrompt) answer(a answer) {
	p.once.Do(func() { p.reply <- a })
}

// Capabilities implements session.Capable: the UI can answer roots,
// sampling and form elicitation, so servers may use them.
func (r *Responder) Capabilities() json.RawMessage {
	return json.RawMessage(`{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{}}}`)
}

// Respond implements session.Responder. ping is answered at once; all else
// waits for the user or for ctx.
func (r *Responder) Respond(ctx context.Context, req session.ServerRequest) (json.RawMessage, *journal.RPCError) {
	if req.Method == "ping" {
		return json.RawMessage("{}"), nil
	}
	if req.Method == "roots/list" && !r.ask {
		roots := r.Roots()
		if roots == nil {
			roots = []session.Root{}
		}
		res, _ := json.Marshal(map[string]any{"roots": roots})
		select { // the note only: the answer does not wait for the UI
		case r.ch <- &serverPrompt{req: req, ctx: ctx, told: "answered roots/list with " + RootsLine(roots) + " (without asking: --root sets the roots, --root ask asks)"}:
		default:
		}
		return res, nil
	}
	p := &serverPrompt{req: req, ctx: ctx, reply: make(chan answer, 1)}
	select {
	case r.ch <- p:
	case <-ctx.Done():
		return nil, &journal.RPCError{Code: -32603, Message: "request withdrawn before the user saw it"}
	}
	select {
	case a := <-p.reply:
		return a.result, a.err
	case <-ctx.Done():
		return nil, &journal.RPCError{Code: -32603, Message: "request withdrawn before the user answered"}
	}
}

// Roots returns the roots the user last gave.
func (r *Responder) Roots() []session.Root {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]session.Root(nil), r.roots...)
}

// Asks reports whether roots/list is put to the user (--root ask).
func (r *Responder) Asks() bool { return r.ask }

// RootsLine is roots in one line: each URI, its name in parentheses.
func RootsLine(roots []session.Root) string {
	if len(roots) == 0 {
		return "no roots"
	}
	var parts []string
	for _, r := range roots {
		p := termsafe.Line(r.URI)
		if r.Name != "" {
			p += " (" + termsafe.Line(r.Name) + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

func (r *Responder) setRoots(rs []session.Root) {
	r.mu.Lock()
	r.roots = rs
	r.mu.Unlock()
}

func waitPrompt(r *Responder) tea.Cmd {
	return func() tea.Msg { return serverPromptMsg{<-r.ch} }
}

// watchPrompt reports when a prompt's request is over, answered or not.
func watchPrompt(p *serverPrompt) tea.Cmd {
	return func() tea.Msg {
		<-p.ctx.Done()
		return promptGoneMsg{p}
	}
}

// nextPrompt shows the oldest waiting server request when nothing else
// holds the screen: a form the user is typing into is never hijacked. A
// detail being read gives way: it is often the call that asks.
func (m *Model) nextPrompt() tea.Cmd {
	reading := m.top() != nil && m.top().scope() == detail.Scope // not while a search is typed
	if m.active != nil || (len(m.modals) > 0 && !reading) || len(m.prompts) == 0 {
		return nil
	}
	p := m.prompts[0]
	m.prompts = m.prompts[1:]
	if p.ctx.Err() != nil {
		return m.nextPrompt()
	}
	m.active = p
	m.push(m.promptModal(p))
	return nil
}

func (m *Model) promptGone(p *serverPrompt) tea.Cmd {
	for i, q := range m.prompts {
		if q == p {
			m.prompts = append(m.prompts[:i], m.prompts[i+1:]...)
			return nil
		}
	}
	if m.active != p {
		return nil
	}
	m.active = nil
	m.setFlash("the server withdrew its " + p.req.Method + " request")
	if len(m.modals) > 0 {
		m.modals = m.modals[:len(m.modals)-1]
	}
	return m.nextPrompt()
}

// done answers the active prompt and lets the next one in.
func (m *Model) done(p *serverPrompt, a answer, note string) tea.Cmd {
	p.answer(a)
	if m.active == p {
		m.active = nil
	}
	m.setFlash(note)
	return nil
}

func (m *Model) promptModal(p *serverPrompt) modal {
	req := p.req
	via := ""
	if req.Related != "" {
		via = " (during call " + req.Related + ")"
	}
	switch {
	case req.TaskID != "":
		via = " (for task " + termsafe.Line(req.TaskID) + ": the answer goes out with tasks/update)"
	case req.MRTR:
		via = " (MRTR round " + itoa(req.Round+1) + " of call " + req.Related + ": the answer goes into the retry)"
	}
	switch req.Method {
	case "elicitation/create":
		var ep struct {
			Mode            string          `json:"mode"`
			Message         string          `json:"message"`
			RequestedSchema json.RawMessage `json:"requestedSchema"`
			URL             string          `json:"url"`
		}
		_ = json.Unmarshal(req.Params, &ep)
		fields, err := formview.FromSchema(ep.RequestedSchema)
		msg := ep.Message
		if ep.Mode == "url" {
			msg += "\nURL: " + ep.URL
		}
		how := " — enter accepts, ctrl+d declines, esc cancels"
		if req.MRTR {
			how = " — enter accepts, esc ends the call, ctrl+d declines" // esc: no retry goes out (onCancel)
		}
		f := &form{title: "The server asks (elicitation)" + via + how, message: msg, fields: fields}
		if err != nil {
			f.rawWhy = "the requested schema is unreadable (" + err.Error() + "); answer in raw JSON"
		}
		f.onSubmit = func(m *Model, args json.RawMessage) tea.Cmd {
			res, _ := json.Marshal(map[string]any{"action": "accept", "content": args})
			if ep.Mode == "url" {
				res = json.RawMessage(`{"action":"accept"}`)
			}
			return m.done(p, answer{result: res}, "elicitation accepted")
		}
		f.onDecline = func(m *Model) tea.Cmd {
			return m.done(p, answer{result: json.RawMessage(`{"action":"decline"}`)}, "elicitation declined")
		}
		f.onCancel = func(m *Model) tea.Cmd {
			if req.MRTR {
				// An answer in an MRTR round goes into a retry, and a server may
				// just ask again: esc ends the chain here, no retry sent.
				return m.done(p, answer{err: &journal.RPCError{Code: -1, Message: "cancelled by the user (esc): no retry sent"}}, "elicitation cancelled: the call ends, no retry sent")
			}
			return m.done(p, answer{result: json.RawMessage(`{"action":"cancel"}`)}, "elicitation cancelled")
		}
		return f
	case "sampling/createMessage":
		return newEditor(m, "The server asks your model (sampling)"+via+" — type the reply; ctrl+s sends, ctrl+d/esc declines", "", samplingHeader(req.Params),
			func(m *Model, text string) (string, tea.Cmd) {
				res, _ := json.Marshal(map[string]any{"role": "assistant", "content": map[string]string{"type": "text", "text": text},
					"model": "mcpscope-user", "stopReason": "endTurn"})
				return "", m.done(p, answer{result: res}, "sampling answered")
			}, func(m *Model) tea.Cmd {
				return m.done(p, answer{err: &journal.RPCError{Code: -1, Message: "User rejected sampling request"}}, "sampling declined")
			})
	case "roots/list":
		return &component{roots.Ask(m.viewCtx(), via, m.resp.Roots(),
			func(rs []session.Root) view.Action {
				m.resp.setRoots(rs)
				res, _ := json.Marshal(map[string]any{"roots": rs})
				return view.Action{Cmd: m.done(p, answer{result: res}, "roots sent: "+RootsLine(rs))}
			}, func() view.Action {
				return view.Action{Cmd: m.done(p, answer{err: &journal.RPCError{Code: -32603, Message: "the user declined to list roots"}}, "roots declined")}
			})}
	}
	return newEditor(m, "The server sent "+termsafe.Line(req.Method)+via+" — write a raw JSON result; ctrl+s sends, esc answers method-not-found", "{}",
		[]string{" " + oneLine(req.Params, 400)},
		func(m *Model, text string) (string, tea.Cmd) {
			if !json.Valid([]byte(text)) {
				return "not valid JSON", nil
			}
			return "", m.done(p, answer{result: json.RawMessage(text)}, "answered "+req.Method)
		}, func(m *Model) tea.Cmd {
			return m.done(p, answer{err: &journal.RPCError{Code: -32601, Message: "mcpscope: method not found: " + req.Method}}, "answered method-not-found")
		})
}

// samplingHeader shows what the server asked the model, sanitized.
func samplingHeader(params json.RawMessage) []string {
	var sp struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		SystemPrompt string `json:"systemPrompt"`
		MaxTokens    int    `json:"maxTokens"`
	}
	_ = json.Unmarshal(params, &sp)
	var l []string
	if sp.SystemPrompt != "" {
		l = append(l, " system: "+termsafe.Line(sp.SystemPrompt))
	}
	for _, msg := range sp.Messages {
		var c struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		text := oneLine(msg.Content, 300)
		if json.Unmarshal(msg.Content, &c) == nil && c.Type == "text" {
			text = termsafe.Line(c.Text)
		}
		l = append(l, " "+termsafe.Line(msg.Role)+": "+text)
	}
	if sp.MaxTokens > 0 {
		l = append(l, " (maxTokens "+itoa(sp.MaxTokens)+")")
	}
	return l
}

// toldPrompt notes a server request answered without the user (roots/list
// by default) in the notes pane and the journal of the session it came
// from, and listens for the next.
func (m *Model) toldPrompt(p *serverPrompt) tea.Cmd {
	target := m
	if m.resp == nil && m.other != nil && m.other.resp != nil {
		target = m.other // the live session of open's replays
	}
	if target.s != nil {
		target.s.Note(p.told)
	}
	if target.resp == nil {
		return nil
	}
	return waitPrompt(target.resp)
}

// openRoots opens the roots panel (R): the roots kept replace those
// roots/list is answered with, and the server is told when the client
// advertised roots.listChanged.
func (m *Model) openRoots() {
	m.open(roots.Edit(m.viewCtx(), m.resp.Roots(), func(rs []session.Root) view.Action {
		m.resp.setRoots(rs)
		what := "roots set to " + RootsLine(rs)
		if !rootsListChanged(m.resp.Capabilities()) {
			return view.Flash(what + "; the client did not advertise roots.listChanged, so the server is not told (it reads them when it next asks)")
		}
		m.s.Notify("notifications/roots/list_changed", nil, nil)
		return view.Flash(what + "; told the server (notifications/roots/list_changed)")
	}))
}

// whyNoRoots is why R cannot change the roots now.
func (m *Model) whyNoRoots() string {
	if m.resp == nil {
		return "this session answers no roots/list: a recording, or a host's session the host answers"
	}
	return m.whyNoChange()
}

// rootsListChanged reports whether the client capabilities advertise
// roots.listChanged: only then may the client send
// notifications/roots/list_changed.
func rootsListChanged(caps json.RawMessage) bool {
	var c struct {
		Roots *struct {
			ListChanged bool `json:"listChanged"`
		} `json:"roots"`
	}
	return json.Unmarshal(caps, &c) == nil && c.Roots != nil && c.Roots.ListChanged
}
