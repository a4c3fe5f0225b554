package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/transport"
)

// MaxRounds bounds MRTR retries of one logical request.
const MaxRounds = 10

// EraVerdict says which protocol era a server speaks and why.
type EraVerdict struct {
	Era      string
	Reason   string
	Discover *protocol.DiscoverResult
	// Answered: the server itself said so (a result or an error), rather
	// than keeping quiet or dying. Only such a verdict may be remembered.
	Answered bool
}

func (s *Session) capabilities() json.RawMessage {
	if s.opts.Capabilities != nil {
		return s.opts.Capabilities
	}
	if c, ok := s.opts.Responder.(Capable); ok {
		return c.Capabilities()
	}
	return json.RawMessage("{}")
}

// modernMetaLocked is the _meta every stateless request carries.
func (s *Session) modernMetaLocked(version string) map[string]any {
	m := map[string]any{
		protocol.MetaProtocolVersion:    version,
		protocol.MetaClientInfo:         s.opts.ClientInfo,
		protocol.MetaClientCapabilities: protocol.WithTasksExtension(s.capabilities()),
	}
	if s.info.LogLevel != "" {
		m[protocol.MetaLogLevel] = s.info.LogLevel
	}
	return m
}

// Discover sends server/discover carrying stateless _meta for version.
func (s *Session) Discover(version string, o CallOptions) *Call {
	o.modernVersion = version
	return s.CallWith("server/discover", nil, o)
}

// Probe decides the era as the 2026-07-28 versioning rules say: a
// protocol.DiscoverResult naming a version we speak, or a -32022 naming one, means
// modern; 401/403/5xx and network failures are errors, not evidence;
// anything else (another error, a timeout, a dead stdio process) means
// legacy. It does not switch the session; Adopt does.
func (s *Session) Probe(ctx context.Context, timeout time.Duration) (EraVerdict, error) {
	version := protocol.ModernVersion
	for attempt := 0; attempt < 2; attempt++ {
		c := s.Discover(version, CallOptions{Timeout: timeout, NoProgressToken: true, probe: true})
		raw, err := c.Wait(ctx)
		if ctx.Err() != nil {
			_ = s.Cancel(c, "probe abandoned")
			return EraVerdict{}, ctx.Err()
		}
		if err == nil {
			var d protocol.DiscoverResult
			if json.Unmarshal(raw, &d) != nil {
				return EraVerdict{Era: protocol.EraLegacy, Reason: "server/discover answered something that is not a DiscoverResult", Answered: true}, nil
			}
			if slices.Contains(d.SupportedVersions, protocol.ModernVersion) {
				return EraVerdict{Era: protocol.EraModern, Reason: "server/discover lists " + protocol.ModernVersion, Discover: &d, Answered: true}, nil
			}
			return EraVerdict{Era: protocol.EraLegacy, Reason: fmt.Sprintf("server/discover lists only %v", d.SupportedVersions), Answered: true}, nil
		}
		if errors.Is(err, ErrProbeWrongID) {
			var f *Failure
			errors.As(err, &f)
			return EraVerdict{Era: protocol.EraLegacy, Reason: f.Reason + "; taken as the initialize era", Answered: true}, nil
		}
		var rpc *journal.RPCError
		if errors.As(err, &rpc) {
			if rpc.Code != protocol.CodeUnsupportedProtocolVersion {
				return EraVerdict{Era: protocol.EraLegacy, Reason: fmt.Sprintf("server/discover answered error %d: %s", rpc.Code, rpc.Message), Answered: true}, nil
			}
			var data struct {
				Supported []string `json:"supported"`
			}
			_ = json.Unmarshal(rpc.Data, &data)
			var modern, legacy []string
			for _, v := range data.Supported {
				if v >= protocol.ModernVersion {
					modern = append(modern, v)
				} else {
					legacy = append(legacy, v)
				}
			}
			mutual := ""
			for _, v := range modern {
				if slices.Contains(protocol.ModernVersions, v) {
					mutual = v
				}
			}
			switch {
			case mutual != "" && attempt == 0:
				version = mutual // the corrective retry, once
				continue
			case mutual != "":
				return EraVerdict{}, fmt.Errorf("the server rejected protocol version %s twice while listing it as supported", mutual)
			case len(modern) > 0:
				return EraVerdict{}, fmt.Errorf("the server speaks only %v of the stateless protocol; mcpscope speaks %v", modern, protocol.ModernVersions)
			}
			return EraVerdict{Era: protocol.EraLegacy, Reason: fmt.Sprintf("server/discover: unsupported version; the server lists %v", legacy), Answered: true}, nil
		}
		var he *transport.HTTPError
		if errors.As(err, &he) {
			switch {
			case he.Status == 0: // no answer at all: nothing to learn about the era
				return EraVerdict{}, err
			case he.Status == 401 || he.Status == 403:
				return EraVerdict{}, fmt.Errorf("probing the protocol era: %w", err)
			case he.Status >= 500:
				return EraVerdict{}, fmt.Errorf("probing the protocol era: %w", err)
			}
			return EraVerdict{Era: protocol.EraLegacy, Reason: fmt.Sprintf("server/discover got HTTP %d", he.Status), Answered: true}, nil
		}
		if s.isHTTP() {
			return EraVerdict{}, fmt.Errorf("probing the protocol era: %w", err)
		}
		return EraVerdict{Era: protocol.EraLegacy, Reason: "no answer to server/discover on stdio: " + err.Error()}, nil
	}
	return EraVerdict{}, errors.New("unreachable")
}

func (s *Session) isHTTP() bool {
	_, ok := s.t.(transport.SessionHolder)
	return ok
}

// Adopt switches the session to the era of v and records why, as a local
// event in the journal and the store.
func (s *Session) Adopt(v EraVerdict) {
	s.mu.Lock()
	s.info.Era = v.Era
	s.info.EraReason = v.Reason
	if v.Era == protocol.EraModern {
		s.info.ProtocolVersion = protocol.ModernVersion
		if d := v.Discover; d != nil {
			s.info.Capabilities = d.Capabilities
			s.info.Instructions = d.Instructions
			if si, ok := d.Meta[protocol.MetaServerInfo]; ok {
				_ = json.Unmarshal(si, &s.info.ServerInfo)
			}
		}
	}
	s.mu.Unlock()
	if v.Era == protocol.EraModern {
		if h, ok := s.t.(transport.VersionHeader); ok {
			h.SetProtocolVersion(protocol.ModernVersion)
		}
	}
	s.localEvent(transport.Meta{Event: transport.EvNote, Detail: "era: " + v.Era + " (" + v.Reason + ")"})
}

// Era is the protocol era in use.
func (s *Session) Era() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info.Era
}

// noteToolsLocked caches the header annotations of listed tools.
func (s *Session) noteToolsLocked(result json.RawMessage) {
	var r struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &r) != nil {
		return
	}
	for _, t := range r.Tools {
		hp, err := protocol.ToolHeaders(t.InputSchema)
		if err != nil {
			s.invalidTools[t.Name] = err.Error()
			delete(s.toolHeaders, t.Name)
			continue
		}
		delete(s.invalidTools, t.Name)
		s.toolHeaders[t.Name] = hp
	}
}

// invalidToolReason refuses a stateless tools/call to a tool whose
// x-mcp-header annotations are invalid: the spec says clients must not use
// it (a raw send still can, for debugging).
func (s *Session) invalidToolReason(method string, params json.RawMessage, modern bool) string {
	if !modern || method != "tools/call" {
		return ""
	}
	var p struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(params, &p)
	s.mu.Lock()
	why := s.invalidTools[p.Name]
	s.mu.Unlock()
	if why == "" {
		return ""
	}
	return fmt.Sprintf("not sent: tool %q has an invalid x-mcp-header annotation (%s); the 2026-07-28 spec says clients must not call it (send it raw with ':' in the inspector to try anyway)", p.Name, why)
}

// InvalidTools names tools whose x-mcp-header annotations are invalid and
// why; a modern client must not call them.
func (s *Session) InvalidTools() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.invalidTools))
	for k, v := range s.invalidTools {
		out[k] = v
	}
	return out
}

// modernHeadersLocked computes Mcp-Method, Mcp-Name and Mcp-Param-* for a
// request (SEP-2243).
func (s *Session) modernHeadersLocked(method string, params json.RawMessage) map[string]string {
	h := map[string]string{"Mcp-Method": method}
	var p struct {
		Name      string          `json:"name"`
		URI       string          `json:"uri"`
		TaskID    string          `json:"taskId"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      struct {
			Version string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	if p.Meta.Version != "" {
		// MUST equal the body's version; the probe is sent before the
		// transport knows the era, so it cannot come from there.
		h["MCP-Protocol-Version"] = p.Meta.Version
	}
	switch method {
	case "tools/call", "prompts/get":
		h["Mcp-Name"] = protocol.HeaderValue(p.Name)
	case "resources/read":
		h["Mcp-Name"] = protocol.HeaderValue(p.URI)
	case "tasks/get", "tasks/update", "tasks/cancel":
		h["Mcp-Name"] = protocol.HeaderValue(p.TaskID)
	}
	if method == "tools/call" {
		for _, hp := range s.toolHeaders[p.Name] {
			if v, ok := protocol.LookupPath(p.Arguments, hp.Path); ok {
				h["Mcp-Param-"+hp.Name] = protocol.HeaderValue(v)
			}
		}
	}
	return h
}

// continueRounds answers an input_required result through the Responder
// (a person in the UI, a policy headless) and retries with a new id, the
// original params, inputResponses and the byte-exact requestState.
func (s *Session) continueRounds(c *Call, result json.RawMessage) {
	var ir protocol.InputRequired
	if err := json.Unmarshal(result, &ir); err != nil {
		s.chainEnd(c, &Failure{Reason: "the server's input_required result is unreadable", Cause: err})
		return
	}
	if c.x().round >= MaxRounds {
		s.chainEnd(c, &Failure{Reason: fmt.Sprintf("gave up after %d input_required rounds (the server keeps asking)", MaxRounds), Kind: ErrRoundLimit})
		return
	}
	responses, un := s.answerInputs(s.ctx, slices.Sorted(maps.Keys(ir.InputRequests)), ir.InputRequests, ServerRequest{Seq: c.Seq, Related: c.Key, Round: c.x().round})
	if un != nil {
		s.chainEnd(c, &Failure{Reason: "the server asks for input", Cause: un})
		return
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(protocol.StripMeta(c.params()), &params) != nil || params == nil {
		params = map[string]json.RawMessage{}
	}
	delete(params, "inputResponses")
	delete(params, "requestState")
	if len(responses) > 0 {
		params["inputResponses"], _ = json.Marshal(responses)
	}
	if len(ir.RequestState) > 0 {
		params["requestState"] = ir.RequestState
	}
	raw, _ := json.Marshal(params)
	o := c.x().opts // the retry keeps the first round's headers and timeouts
	o.round, o.parent = c.x().round+1, c.Key
	next := s.CallWith(c.Method, json.RawMessage(raw), o)
	s.mu.Lock()
	c.xw().next = next
	close(c.chainLocked())
	s.mu.Unlock()
	s.store.Notify()
}

// Unanswered is an input request (an MRTR round's or a task's) that nobody
// answered, and why.
type Unanswered struct{ Key, Method, Why string }

func (u *Unanswered) Error() string {
	return fmt.Sprintf("input request %q (%s) was not answered: %s", u.Key, u.Method, u.Why)
}

// answerInputs puts embedded input requests (an MRTR round's, or an
// input_required task's) to the Responder in the order of keys, each as the
// server request base describes with its own key, method and params. It
// stops at the first one not answered and says which; the answers before it
// are returned.
func (s *Session) answerInputs(ctx context.Context, keys []string, reqs map[string]protocol.InputRequest, base ServerRequest) (map[string]json.RawMessage, *Unanswered) {
	responses := map[string]json.RawMessage{}
	for _, k := range keys {
		r := base
		r.Key, r.Method, r.Params, r.MRTR = k, reqs[k].Method, reqs[k].Params, true
		res, rerr := s.opts.Responder.Respond(ctx, r)
		if rerr != nil {
			return responses, &Unanswered{Key: k, Method: r.Method, Why: rerr.Message}
		}
		responses[k] = res
	}
	return responses, nil
}

// chainEnd records why a chain of MRTR rounds stopped at c.
func (s *Session) chainEnd(c *Call, f *Failure) {
	s.mu.Lock()
	c.xw().chainErr = f
	close(c.chainLocked())
	s.mu.Unlock()
	s.store.Notify()
}

// chainLocked is the channel closed when the next round or the reason
// there is none is known, made when first needed (most calls have no
// rounds, and a session may hold a million calls).
func (c *Call) chainLocked() chan struct{} {
	if c.x().chain == nil {
		c.xw().chain = make(chan struct{})
	}
	return c.x().chain
}

// Next is the retry of an input_required round, nil until it exists.
func (c *Call) Next() *Call {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.x().next
}

// WaitFinal follows MRTR rounds (and re-issues after a broken stream) to
// the last one and returns its outcome.
func (c *Call) WaitFinal(ctx context.Context) (json.RawMessage, error) {
	for cur := c; ; {
		res, err := cur.Wait(ctx)
		if errors.Is(err, ErrReissued) {
			if next := cur.Next(); next != nil {
				cur = next // the same request, sent again after its stream broke
				continue
			}
		}
		if err != nil || journal.ResultType(res) != "input_required" {
			return res, err
		}
		// Wait for the next round, or the reason there is none.
		cur.s.mu.Lock()
		chain := cur.chainLocked()
		cur.s.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-cur.s.ctx.Done():
			return res, &Failure{Reason: "the session closed between input_required rounds"}
		case <-chain:
		}
		cur.s.mu.Lock()
		next, cerr := cur.x().next, cur.x().chainErr
		cur.s.mu.Unlock()
		if next == nil {
			return res, cerr
		}
		cur = next
	}
}

// ErrInvalidResult: a result the protocol does not allow, such as a
// resultType the client does not know (2026-07-28 says to treat it as
// invalid) or a completed task without its result. The server's fault:
// the call failed, though the frame is kept as it came.
var ErrInvalidResult = errors.New("invalid result")

// invalidResultType is the failure of a 2026-07-28 result whose resultType
// is unknown (or not a string), nil for any other. Earlier eras have no
// resultType: there it means nothing and is left alone.
func invalidResultType(era string, h *journal.Hints) *Failure {
	if era != protocol.EraModern || (!h.ResultTypeBad && protocol.KnownResultType(h.ResultType)) {
		return nil
	}
	rt := "(not a string)"
	if !h.ResultTypeBad {
		rt = h.ResultType
		if r := []rune(rt); len(r) > 64 {
			rt = string(r[:64]) + "…"
		}
		rt = strconv.Quote(rt)
	}
	return &Failure{Reason: "invalid result: unknown resultType " + rt, Kind: ErrInvalidResult}
}
