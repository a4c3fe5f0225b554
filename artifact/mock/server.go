package mock

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"mcpscope/internal/termsafe"
	"mcpscope/journal"
	"mcpscope/protocol"
)

// Options tune a Server. The zero value replays at the recorded pace.
type Options struct {
	// Speed scales the recorded spacing: 1 (or 0 with NoWait false) as
	// recorded, 2 twice as fast. NoWait sends everything at once.
	Speed  float64
	NoWait bool
	// AnswerWait bounds how long a replayed server request (sampling,
	// elicitation, roots) waits for the client's answer before the
	// recording goes on (default 10s).
	AnswerWait time.Duration
	// Log hears one line per request: how it was matched, or why not.
	Log io.Writer
	// Warn hears, even when Log is nil, that a request was answered with
	// the recording of other params (matched by name only).
	Warn io.Writer
	// Strict serves exact matches only: a request whose params differ from
	// every recording of its method and name gets an error naming the
	// closest one, instead of that recording's answer.
	Strict bool
}

// MetaMatch is the _meta key of an answer served from a recording whose
// params differ from the request's: what was matched, and how.
const MetaMatch = "mcpscope/match"

// Server answers clients from a Recording.
type Server struct {
	rec *Recording
	o   Options

	mu     sync.Mutex
	served map[string]int // exact key → times served (repeats go in order)
}

// New makes a server for rec.
func New(rec *Recording, o Options) *Server {
	if o.Speed <= 0 {
		o.Speed = 1
	}
	if o.AnswerWait <= 0 {
		o.AnswerWait = 10 * time.Second
	}
	return &Server{rec: rec, o: o, served: map[string]int{}}
}

// Recording is what the server serves.
func (s *Server) Recording() *Recording { return s.rec }

func (s *Server) logf(format string, a ...any) {
	if s.o.Log != nil {
		fmt.Fprintf(s.o.Log, "mcpscope serve: %s\n", termsafe.Line(fmt.Sprintf(format, a...)))
	}
}

// scaled is a recorded duration at the replay's speed.
func (s *Server) scaled(d time.Duration) time.Duration {
	if s.o.NoWait || d <= 0 {
		return 0
	}
	return time.Duration(float64(d) / s.o.Speed)
}

// peer is one client connection: the standalone channel (stdio itself, or
// an HTTP session's GET stream), the server requests waiting for its
// answers, and its running calls (to cancel them).
type peer struct {
	send func([]byte) error // what belongs to no request

	mu      sync.Mutex
	answers map[string]chan struct{}
	running map[string]context.CancelFunc
	ambient sync.Once
}

func newPeer(send func([]byte) error) *peer {
	return &peer{send: send, answers: map[string]chan struct{}{}, running: map[string]context.CancelFunc{}}
}

// expect notes that a server request with id was sent: its answer will be
// waited for.
func (p *peer) expect(id string) chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	ch := make(chan struct{})
	p.answers[id] = ch
	return ch
}

// answered takes a client's response to a server request.
func (p *peer) answered(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ch, ok := p.answers[id]; ok {
		close(ch)
		delete(p.answers, id)
	}
}

// cancelled stops the replay a client's notifications/cancelled names.
func (p *peer) cancelled(params json.RawMessage) {
	var c struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	_ = json.Unmarshal(params, &c)
	p.mu.Lock()
	defer p.mu.Unlock()
	if stop := p.running[(&envelope{ID: c.RequestID}).key()]; stop != nil {
		stop()
	}
}

// envelope is an incoming message.
type envelope struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

func (e *envelope) key() string {
	se := journal.Envelope{ID: e.ID}
	return se.Key()
}

func (e *envelope) isRequest() bool { return e.Method != "" && e.key() != "" }

// answer is how a request is answered: an exchange to replay, or a message
// made here (a synthesized initialize, an error, a ping's result).
type answer struct {
	ex     *Exchange
	made   []byte
	how    string
	byName bool // ex's params differ from the request's: the answer says so in _meta
}

// resolve decides how to answer a request.
func (s *Server) resolve(req *envelope) answer {
	r := s.rec
	switch req.Method {
	case "initialize":
		if r.Init != nil {
			return answer{ex: r.Init, how: "the recorded initialize"}
		}
		return answer{made: result(req.ID, r.synthInit(req.Params)),
			how: "initialize made from the recorded server/discover (the recording is of the 2026-07-28 protocol)"}
	case "server/discover":
		if r.Discover != nil {
			return answer{ex: r.Discover, how: "the recorded server/discover"}
		}
		return answer{made: rpcError(req.ID, -32601, "Method not found", nil),
			how: "no server/discover in the recording: answered as a server of the initialize era would"}
	}
	exs, how, key := r.candidates(req.Method, req.Params)
	switch how {
	case Exact:
		s.mu.Lock()
		i := s.served[key]
		s.served[key]++
		s.mu.Unlock()
		ex := exs[min(i, len(exs)-1)]
		return answer{ex: ex, how: fmt.Sprintf("exact match, journal seq %d", ex.Seq)}
	case ByName:
		ex := mostAlike(exs, req.Params)
		if s.o.Strict {
			msg := fmt.Sprintf("Invalid params: the recording %s has %s only with other params (--strict serves exact matches only); the closest is journal seq %d with params %s",
				r.Path, ex.what(), ex.Seq, cut(string(ex.Params), 200))
			return answer{made: rpcError(req.ID, -32602, msg, map[string]any{"closest": map[string]any{"method": ex.Method, "name": ex.Name, "seq": ex.Seq, "params": ex.Params}}),
				how: "refused (--strict): the params differ from the recording's"}
		}
		if s.o.Warn != nil {
			fmt.Fprintf(s.o.Warn, "mcpscope serve: warning: %s\n", termsafe.Line(fmt.Sprintf(
				"%s was called with other params than recorded: answered with the recording of journal seq %d, whose params were %s (the answer's _meta %s says so; --strict refuses instead)",
				ex.what(), ex.Seq, cut(string(ex.Params), 200), MetaMatch)))
		}
		return answer{ex: ex, byName: true, how: fmt.Sprintf("matched by method and name (the params differ), journal seq %d", ex.Seq)}
	}
	if why := r.housekeeping(req.Method); why != "" {
		return answer{made: result(req.ID, json.RawMessage("{}")), how: "not recorded; answered {} (" + why + ")"}
	}
	code, msg, data := r.noMatch(req.Method, req.Params)
	return answer{made: rpcError(req.ID, code, msg, data), how: "no match: " + msg}
}

// request answers one request: emit carries what belongs to it (stdio:
// the connection; HTTP: its response). It returns when the answer is
// complete or ctx ends (the client cancelled or went away).
func (s *Server) request(ctx context.Context, p *peer, req *envelope, a answer, emit func([]byte) error) error {
	what := req.Method
	if n := journal.ParamName(req.Params); n != "" {
		what += " " + n
	}
	s.logf("%s → %s", what, a.how)
	if a.made != nil {
		return emit(a.made)
	}
	var note json.RawMessage
	if a.byName {
		note, _ = json.Marshal(map[string]any{"match": ByName, "journalSeq": a.ex.Seq, "recordedParams": a.ex.Params,
			"note": "the request's params differ from the recording's; this is the recorded answer to those"})
	}
	return s.play(ctx, p, a.ex, req, note, emit)
}

// what names an exchange: its method and name.
func (ex *Exchange) what() string {
	if ex.Name == "" {
		return ex.Method
	}
	return ex.Method + " " + ex.Name
}

// play replays an exchange: each step at its recorded offset (scaled),
// the response with the client's id, progress with the client's token;
// after a server request, the client's answer is waited for (up to
// AnswerWait) and the rest keeps its spacing from then on.
// note, when set, goes into the result's _meta under MetaMatch.
func (s *Server) play(ctx context.Context, p *peer, ex *Exchange, req *envelope, note json.RawMessage, emit func([]byte) error) error {
	var token json.RawMessage
	var pm struct {
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if json.Unmarshal(req.Params, &pm) == nil && len(pm.Meta.Token) > 0 {
		token = pm.Meta.Token
	}
	base := time.Now()
	for _, st := range ex.steps {
		if err := wait(ctx, base.Add(s.scaled(st.after))); err != nil {
			return err
		}
		data := st.data
		switch {
		case st.final:
			data = withID(data, ex.ID, req.ID)
			if note != nil {
				data = withResultMeta(data, MetaMatch, note)
			}
		case st.method == "notifications/progress":
			if token == nil {
				continue // the client asked for no progress
			}
			data, _ = splice(data, token, "params", "progressToken")
		}
		var answered chan struct{}
		if st.id != "" && st.answer > 0 {
			answered = p.expect(st.id)
		}
		if err := emit(data); err != nil {
			return err
		}
		if st.final {
			return nil
		}
		if answered != nil {
			t := time.NewTimer(s.o.AnswerWait)
			select {
			case <-answered:
			case <-t.C:
				s.logf("%s: no answer to the replayed %s within %s; going on", req.Method, st.method, s.o.AnswerWait)
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			}
			t.Stop()
			base = time.Now().Add(-s.scaled(st.answer)) // the recording goes on from the answer
		}
	}
	if ex.status != 0 {
		return emit(rpcError(req.ID, -32603, fmt.Sprintf("the recorded server answered HTTP %d: %s", ex.status, cut(ex.body, 300)), nil))
	}
	return emit(rpcError(req.ID, -32603, fmt.Sprintf("the recorded server never answered this request (journal seq %d): the recording ended first", ex.Seq), nil))
}

// ambient replays what the recorded server sent outside any call, from
// now on, through send.
func (s *Server) ambient(ctx context.Context, send func([]byte) error) {
	base := time.Now()
	for _, st := range s.rec.ambient {
		if wait(ctx, base.Add(s.scaled(st.after))) != nil {
			return
		}
		if send(st.data) != nil {
			return
		}
	}
}

func wait(ctx context.Context, until time.Time) error {
	d := time.Until(until)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// withID is a recorded response with the client's id in place of the
// recorded one (a response whose id was null or another stays as it was).
func withID(data []byte, recorded, id json.RawMessage) []byte {
	s, e, ok := member(data, "id")
	if !ok || !bytes.Equal(canonical(data[s:e]), canonical(recorded)) {
		return data
	}
	out, _ := splice(data, id, "id")
	return out
}

func result(id json.RawMessage, res json.RawMessage) []byte {
	b, _ := json.Marshal(map[string]json.RawMessage{"jsonrpc": json.RawMessage(`"2.0"`), "id": orNull(id), "result": res})
	return b
}

func rpcError(id json.RawMessage, code int64, msg string, data any) []byte {
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": orNull(id), "error": e})
	return b
}

func orNull(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}

// synthInit is an initialize result for a 2025 client of a recording of
// the 2026-07-28 protocol, made from its server/discover answer: the
// version the client asked for when the server listed it, else the newest
// initialize-era version it listed.
func (r *Recording) synthInit(params json.RawMessage) json.RawMessage {
	var d protocol.DiscoverResult
	if r.Discover != nil {
		for _, st := range r.Discover.steps {
			if st.final {
				var m struct {
					Result protocol.DiscoverResult `json:"result"`
				}
				_ = json.Unmarshal(st.data, &m)
				d = m.Result
			}
		}
	}
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(params, &p)
	version := ""
	if slices.Contains(d.SupportedVersions, p.ProtocolVersion) && p.ProtocolVersion < protocol.ModernVersion {
		version = p.ProtocolVersion
	}
	if version == "" {
		for _, v := range d.SupportedVersions {
			if v < protocol.ModernVersion && v > version {
				version = v
			}
		}
	}
	if version == "" {
		version = "2025-11-25"
	}
	res := map[string]any{"protocolVersion": version, "capabilities": orEmptyObject(d.Capabilities)}
	if si, ok := d.Meta[protocol.MetaServerInfo]; ok {
		res["serverInfo"] = si
	} else {
		res["serverInfo"] = r.ServerInfo
	}
	if d.Instructions != "" {
		res["instructions"] = d.Instructions
	}
	b, _ := json.Marshal(res)
	return b
}

func orEmptyObject(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}

// housekeeping says why a request that was not recorded is answered with
// an empty result anyway: ping always is, and a request whose empty
// answer the recorded server's capabilities promise (logging/setLevel
// with logging, resources/subscribe with resources.subscribe). Clients
// send these on their own (the official Inspector sets a log level on
// connect); "" for anything else.
func (r *Recording) housekeeping(method string) string {
	var caps struct {
		Logging   json.RawMessage `json:"logging"`
		Resources struct {
			Subscribe bool `json:"subscribe"`
		} `json:"resources"`
	}
	_ = json.Unmarshal(r.capabilities(), &caps)
	switch {
	case method == "ping":
		return "every server answers ping"
	case method == "logging/setLevel" && len(caps.Logging) > 0:
		return "the recorded server declares logging"
	case (method == "resources/subscribe" || method == "resources/unsubscribe") && caps.Resources.Subscribe:
		return "the recorded server declares resources.subscribe"
	}
	return ""
}

// capabilities are what the recorded handshake declared.
func (r *Recording) capabilities() json.RawMessage {
	for _, ex := range []*Exchange{r.Init, r.Discover} {
		if ex == nil {
			continue
		}
		for _, st := range ex.steps {
			var m struct {
				Result struct {
					Capabilities json.RawMessage `json:"capabilities"`
				} `json:"result"`
			}
			if st.final && json.Unmarshal(st.data, &m) == nil && len(m.Result.Capabilities) > 0 {
				return m.Result.Capabilities
			}
		}
	}
	return nil
}
