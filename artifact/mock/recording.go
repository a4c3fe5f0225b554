// Package mock serves a journal as an MCP server: it answers a client the
// way the recorded server did, byte for byte, over stdio or Streamable HTTP,
// in the protocol era that was recorded.
//
// It is a small JSON-RPC responder of its own rather than an SDK server: an
// SDK re-encodes every message (the recorded bytes would not survive),
// speaks one era, and would answer what the recording never said. Here each
// answer is the recorded message with two things changed, in place: the id
// (the client's own) and, in progress notifications, the progress token
// (the client's own). Everything else, _meta included, is as recorded.
//
// Requests are matched to recorded ones ignoring ids and params._meta:
// first exactly (method and params; recorded repeats are served in order),
// then by method and name (the tool, prompt or resource; among several, the
// one whose params are most alike), and otherwise answered with a JSON-RPC
// error that names the closest recording. What the recorded server sent
// during a call (progress, logs, server requests) is sent again with its
// original spacing, scaled by a speed; what it sent outside any call
// (list_changed, logs on the standalone stream) is replayed from the
// handshake on, with its spacing.
package mock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"mcpscope/artifact/scan"
	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/transport"
)

// step is one message the recorded server sent for a call (or outside any).
type step struct {
	after  time.Duration // since the call's request (ambient: since the handshake)
	data   []byte
	method string // a notification's or a server request's method; "" for the response
	id     string // a server request's id key
	answer time.Duration
	final  bool // the response
}

// Exchange is one recorded client request and what the server sent for it.
type Exchange struct {
	Seq    uint64 // the request's journal sequence number
	Method string
	Name   string          // its tool, prompt or resource
	Params json.RawMessage // canonical, without _meta
	ID     json.RawMessage // as recorded

	keys      map[string]string // top-level params → canonical value
	at        time.Time
	steps     []step
	answered  bool
	sse       bool   // the recorded answer was an SSE stream (HTTP)
	status    int    // a non-2xx HTTP answer
	body      string // its body, when not a JSON-RPC message
	token     bool
	handshake bool
}

// Recording is what a journal says its server answered.
type Recording struct {
	Path            string
	Transport       string // stdio, http or sse: how it was recorded
	Era             string // legacy or modern
	ProtocolVersion string
	ServerInfo      protocol.Implementation
	// Init and Discover are the recorded handshake (nil when absent).
	Init, Discover *Exchange
	Calls          []*Exchange
	ambient        []step
	// Notes are what the recording could not give (a call never answered).
	Notes []string

	exact  map[string][]*Exchange
	byName map[string][]*Exchange
}

// Load reads a recording from a journal. It keeps every answer in memory:
// what a server may be asked for must be at hand.
func Load(path string) (*Recording, error) {
	l := &loader{
		r:     &Recording{Path: path, exact: map[string][]*Exchange{}, byName: map[string][]*Exchange{}},
		open:  map[int]*Exchange{},
		byKey: map[string]*Exchange{},
		asks:  map[string]stepRef{},
	}
	_, err := scan.File(path, scan.Options{}, l.frame)
	if err != nil && l.in.Frames == 0 {
		return nil, err
	}
	r := l.r
	if err != nil {
		r.Notes = append(r.Notes, err.Error())
	}
	in := l.in
	r.Transport, r.Era, r.ProtocolVersion, r.ServerInfo = in.Transport, in.Era, in.ProtocolVersion, in.ServerInfo
	if r.Init == nil && r.Discover == nil {
		return nil, fmt.Errorf("%s holds no handshake (no initialize and no server/discover): nothing to serve", path)
	}
	if r.Era == "" {
		r.Era = protocol.EraLegacy
	}
	for _, ex := range r.Calls {
		if !ex.answered && ex.status == 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("#%d %s %s was never answered in the recording", ex.Seq, ex.Method, ex.Name))
		}
		k := exactKey(ex.Method, ex.Params)
		r.exact[k] = append(r.exact[k], ex)
		n := ex.Method + "\x00" + ex.Name
		r.byName[n] = append(r.byName[n], ex)
	}
	sort.SliceStable(r.ambient, func(i, j int) bool { return r.ambient[i].after < r.ambient[j].after })
	return r, nil
}

// loader is Load's state while it reads a journal's frames in order.
type loader struct {
	r        *Recording
	in       scan.Info
	open     map[int]*Exchange    // by call index, until answered
	byKey    map[string]*Exchange // by id key, for what comes on a call's HTTP stream
	asks     map[string]stepRef   // server requests by id key, until the client answers
	anchor   time.Time
	first    time.Time
	openReal int // open calls other than the handshake
}

// frame takes one frame of the journal into the recording.
func (l *loader) frame(fr *scan.Frame) error {
	l.in.Observe(fr)
	if l.first.IsZero() {
		l.first = fr.Time
	}
	if fr.Late {
		return nil
	}
	e := fr.Env
	switch {
	case fr.Kind == transport.Event:
		if key, ok := fr.Meta.PostCall(); ok && l.byKey[key] != nil {
			ex := l.byKey[key]
			switch {
			case fr.Meta.Event == transport.EvStreamOpened:
				ex.sse = true
			case fr.Meta.Event == transport.EvHTTPError && fr.Meta.Status != 0:
				ex.status, ex.body = fr.Meta.Status, fr.Meta.Detail
			}
		}
	case e == nil:
	case fr.Dir == transport.Out && e.Class() == journal.ClassRequest && fr.Call != nil:
		l.request(fr)
	case fr.Dir == transport.Out && (e.Class() == journal.ClassResult || e.Class() == journal.ClassError):
		// The client's answer to a server request: when it came.
		if ref, ok := l.asks[e.Key()]; ok {
			ref.ex.steps[ref.i].answer = fr.Time.Sub(ref.ex.at)
			delete(l.asks, e.Key())
		}
	case fr.Dir == transport.In && fr.Call != nil:
		if ex := l.open[fr.CallIndex]; ex != nil {
			l.addStep(ex, fr, e.Result != nil || e.Error != nil)
		}
	case fr.Dir == transport.In:
		l.serverMessage(fr)
	}
	return nil
}

// request opens the exchange of a client request.
func (l *loader) request(fr *scan.Frame) {
	r := l.r
	ex := newExchange(fr)
	l.open[fr.CallIndex] = ex
	l.byKey[fr.Call.Key] = ex
	switch fr.Env.Method {
	case "initialize":
		ex.handshake = true
		if r.Init == nil {
			r.Init = ex
			l.anchor = fr.Time
		}
	case "server/discover":
		ex.handshake = true
		if r.Discover == nil {
			r.Discover = ex
			if l.anchor.IsZero() {
				l.anchor = fr.Time
			}
		}
	default:
		l.openReal++
		r.Calls = append(r.Calls, ex)
	}
}

// serverMessage places a message from the server that is no call's by
// its call index: a step of the call whose HTTP stream it came on, of the
// one call running on stdio, or else ambient.
func (l *loader) serverMessage(fr *scan.Frame) {
	e := fr.Env
	final := e.Method == "" && (e.Result != nil || e.Error != nil)
	if key, ok := fr.Meta.PostCall(); ok && l.byKey[key] != nil && !l.byKey[key].answered {
		l.addStep(l.byKey[key], fr, final)
		return
	}
	if final {
		return // an answer to nothing we know
	}
	if l.in.Transport == "stdio" && l.openReal == 1 {
		// On stdio what the server sends while one call runs is
		// that call's (a log line, a sampling request).
		for _, ex := range l.open {
			if !ex.handshake {
				l.addStep(ex, fr, false)
				return
			}
		}
	}
	at := l.anchor
	if at.IsZero() {
		at = l.first
	}
	s := step{after: fr.Time.Sub(at), data: append([]byte(nil), fr.Data...), method: e.Method}
	if e.Class() == journal.ClassRequest {
		s.id = e.Key()
	}
	l.r.ambient = append(l.r.ambient, s)
}

// addStep adds what fr says to ex's steps; final closes the exchange.
func (l *loader) addStep(ex *Exchange, fr *scan.Frame, final bool) {
	s := step{after: fr.Time.Sub(ex.at), data: append([]byte(nil), fr.Data...), final: final}
	if final && ex.Method == session.ProbeMethod && len(ex.ID) > 0 {
		// A 2025 server's refusal of the probe comes with "id":null in
		// the body of its HTTP error; replayed as it was, a client (over
		// stdio above all) finds no request it answers. It is the
		// probe's own answer: it carries the probe's id.
		if a, b, ok := member(s.data, "id"); ok && bytes.Equal(bytes.TrimSpace(s.data[a:b]), []byte("null")) {
			if out, ok := splice(s.data, ex.ID, "id"); ok {
				s.data = out
			}
		}
	}
	if fr.Env != nil {
		s.method = fr.Env.Method
		if fr.Env.Class() == journal.ClassRequest {
			s.id = fr.Env.Key()
		}
	}
	if fr.Meta.EventType != "" || fr.Meta.EventID != "" {
		ex.sse = true
	}
	ex.steps = append(ex.steps, s)
	if s.id != "" {
		l.asks[s.id] = stepRef{ex, len(ex.steps) - 1}
	}
	if final {
		ex.answered = true
		for i, o := range l.open {
			if o == ex {
				delete(l.open, i)
				if !ex.handshake {
					l.openReal--
				}
			}
		}
	}
}

// stepRef names one step of an exchange.
type stepRef struct {
	ex *Exchange
	i  int
}

func newExchange(fr *scan.Frame) *Exchange {
	e := fr.Env
	ex := &Exchange{Seq: fr.Seq, Method: e.Method, Name: journal.ParamName(e.Params), ID: e.ID, at: fr.Time}
	ex.Params, ex.keys = canonicalParams(e.Params)
	var p struct {
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	ex.token = json.Unmarshal(e.Params, &p) == nil && len(p.Meta.Token) > 0
	return ex
}

// canonicalParams are params as matching sees them: _meta removed, keys
// sorted, no blanks; absent, null and {} are all {}. keys holds each
// top-level member's canonical value.
func canonicalParams(raw json.RawMessage) (json.RawMessage, map[string]string) {
	var m map[string]json.RawMessage
	if len(bytes.TrimSpace(raw)) == 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			return json.RawMessage("{}"), map[string]string{}
		}
		return canonical(raw), map[string]string{"": string(canonical(raw))}
	}
	delete(m, "_meta")
	keys := map[string]string{}
	out := map[string]json.RawMessage{}
	for k, v := range m {
		c := canonical(v)
		keys[k] = string(c)
		out[k] = c
	}
	b, _ := json.Marshal(out)
	return b, keys
}

// canonical re-encodes a JSON value with sorted keys and numbers as written.
func canonical(raw json.RawMessage) json.RawMessage {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return raw
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if e.Encode(v) != nil {
		return raw
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

func exactKey(method string, params json.RawMessage) string {
	return method + "\x00" + string(params)
}
