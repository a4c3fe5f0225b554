package session

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"mcpscope/journal"
	"mcpscope/transport"
)

// The stateless protocol (2026-07-28): no initialize, no session; every
// request carries its own _meta, and HTTP requests mirror routing fields in
// headers (SEP-2243).
const (
	ModernVersion = "2026-07-28"
	EraLegacy     = "legacy"
	EraModern     = "modern"
)

// ModernVersions are the stateless versions mcpscope speaks.
var ModernVersions = []string{ModernVersion}

// Reserved _meta keys of the stateless protocol.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// Errors of the stateless protocol.
const (
	CodeHeaderMismatch             = -32020
	CodeMissingRequiredCapability  = -32021
	CodeUnsupportedProtocolVersion = -32022
)

// MaxRounds bounds MRTR retries of one logical request.
const MaxRounds = 10

// DiscoverResult is the answer to server/discover.
type DiscoverResult struct {
	SupportedVersions []string                   `json:"supportedVersions"`
	Capabilities      json.RawMessage            `json:"capabilities"`
	Instructions      string                     `json:"instructions,omitempty"`
	Meta              map[string]json.RawMessage `json:"_meta,omitempty"`
}

// EraVerdict says which protocol era a server speaks and why.
type EraVerdict struct {
	Era      string
	Reason   string
	Discover *DiscoverResult
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
		MetaProtocolVersion:    version,
		MetaClientInfo:         s.opts.ClientInfo,
		MetaClientCapabilities: withTasksExtension(s.capabilities()),
	}
	if s.info.LogLevel != "" {
		m[MetaLogLevel] = s.info.LogLevel
	}
	return m
}

// Discover sends server/discover carrying stateless _meta for version.
func (s *Session) Discover(version string, o CallOptions) *Call {
	o.modernVersion = version
	return s.CallWith("server/discover", nil, o)
}

// Probe decides the era as the 2026-07-28 versioning rules say: a
// DiscoverResult naming a version we speak, or a -32022 naming one, means
// modern; 401/403/5xx and network failures are errors, not evidence;
// anything else (another error, a timeout, a dead stdio process) means
// legacy. It does not switch the session; Adopt does.
func (s *Session) Probe(ctx context.Context, timeout time.Duration) (EraVerdict, error) {
	version := ModernVersion
	for attempt := 0; attempt < 2; attempt++ {
		c := s.Discover(version, CallOptions{Timeout: timeout, NoProgressToken: true, probe: true})
		raw, err := c.Wait(ctx)
		if ctx.Err() != nil {
			_ = s.Cancel(c, "probe abandoned")
			return EraVerdict{}, ctx.Err()
		}
		if err == nil {
			var d DiscoverResult
			if json.Unmarshal(raw, &d) != nil {
				return EraVerdict{Era: EraLegacy, Reason: "server/discover answered something that is not a DiscoverResult", Answered: true}, nil
			}
			if slices.Contains(d.SupportedVersions, ModernVersion) {
				return EraVerdict{Era: EraModern, Reason: "server/discover lists " + ModernVersion, Discover: &d, Answered: true}, nil
			}
			return EraVerdict{Era: EraLegacy, Reason: fmt.Sprintf("server/discover lists only %v", d.SupportedVersions), Answered: true}, nil
		}
		if errors.Is(err, ErrProbeWrongID) {
			var f *Failure
			errors.As(err, &f)
			return EraVerdict{Era: EraLegacy, Reason: f.Reason + "; taken as the initialize era", Answered: true}, nil
		}
		var rpc *journal.RPCError
		if errors.As(err, &rpc) {
			if rpc.Code != CodeUnsupportedProtocolVersion {
				return EraVerdict{Era: EraLegacy, Reason: fmt.Sprintf("server/discover answered error %d: %s", rpc.Code, rpc.Message), Answered: true}, nil
			}
			var data struct {
				Supported []string `json:"supported"`
			}
			_ = json.Unmarshal(rpc.Data, &data)
			var modern, legacy []string
			for _, v := range data.Supported {
				if v >= ModernVersion {
					modern = append(modern, v)
				} else {
					legacy = append(legacy, v)
				}
			}
			mutual := ""
			for _, v := range modern {
				if slices.Contains(ModernVersions, v) {
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
				return EraVerdict{}, fmt.Errorf("the server speaks only %v of the stateless protocol; mcpscope speaks %v", modern, ModernVersions)
			}
			return EraVerdict{Era: EraLegacy, Reason: fmt.Sprintf("server/discover: unsupported version; the server lists %v", legacy), Answered: true}, nil
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
			return EraVerdict{Era: EraLegacy, Reason: fmt.Sprintf("server/discover got HTTP %d", he.Status), Answered: true}, nil
		}
		if s.isHTTP() {
			return EraVerdict{}, fmt.Errorf("probing the protocol era: %w", err)
		}
		return EraVerdict{Era: EraLegacy, Reason: "no answer to server/discover on stdio: " + err.Error()}, nil
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
	if v.Era == EraModern {
		s.info.ProtocolVersion = ModernVersion
		if d := v.Discover; d != nil {
			s.info.Capabilities = d.Capabilities
			s.info.Instructions = d.Instructions
			if si, ok := d.Meta[MetaServerInfo]; ok {
				_ = json.Unmarshal(si, &s.info.ServerInfo)
			}
		}
	}
	s.mu.Unlock()
	if v.Era == EraModern {
		if h, ok := s.t.(transport.VersionHeader); ok {
			h.SetProtocolVersion(ModernVersion)
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

// headerSafe reports whether v can travel as a plain header value (SEP-2243).
func headerSafe(v string) bool {
	if v == "" {
		return true
	}
	if v[0] == ' ' || v[0] == '\t' || v[len(v)-1] == ' ' || v[len(v)-1] == '\t' {
		return false
	}
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c != '\t' && (c < 0x20 || c > 0x7e) {
			return false
		}
	}
	return true
}

// HeaderValue encodes v for Mcp-Name / Mcp-Param-*: as is when safe, else
// the =?base64?…?= sentinel form.
func HeaderValue(v string) string {
	if headerSafe(v) {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// headerParam is one x-mcp-header annotation of a tool's inputSchema.
type headerParam struct {
	Path []string // properties chain from the schema root
	Name string   // the header is Mcp-Param-<Name>
}

// toolHeaders reads the x-mcp-header annotations of one inputSchema. An
// invalid annotation makes the tool invalid (the spec says drop it).
func toolHeaders(schema json.RawMessage) ([]headerParam, error) {
	var out []headerParam
	seen := map[string]bool{}
	var walk func(raw json.RawMessage, path []string, reachable bool) error
	walk = func(raw json.RawMessage, path []string, reachable bool) error {
		var node map[string]json.RawMessage
		if json.Unmarshal(raw, &node) != nil {
			return nil
		}
		if h, ok := node["x-mcp-header"]; ok {
			var name string
			if json.Unmarshal(h, &name) != nil || name == "" || !isToken(name) {
				return fmt.Errorf("x-mcp-header %s is not a header name token", h)
			}
			if !reachable || len(path) == 0 {
				return fmt.Errorf("x-mcp-header %q is not statically reachable through properties", name)
			}
			var typ string
			_ = json.Unmarshal(node["type"], &typ)
			if typ != "string" && typ != "integer" && typ != "boolean" {
				return fmt.Errorf("x-mcp-header %q is on a %q property (only string, integer, boolean)", name, typ)
			}
			if seen[strings.ToLower(name)] {
				return fmt.Errorf("x-mcp-header %q appears twice", name)
			}
			seen[strings.ToLower(name)] = true
			out = append(out, headerParam{Path: append([]string(nil), path...), Name: name})
		}
		for k, v := range node {
			switch k {
			case "properties":
				var props map[string]json.RawMessage
				if json.Unmarshal(v, &props) == nil {
					for name, sub := range props {
						if err := walk(sub, append(path, name), reachable); err != nil {
							return err
						}
					}
				}
			case "items", "oneOf", "anyOf", "allOf", "not", "if", "then", "else", "$defs", "definitions",
				"additionalProperties", "prefixItems", "patternProperties", "dependentSchemas":
				// Anything below here is not statically reachable; an
				// annotation found there invalidates the tool.
				var subs []json.RawMessage
				if json.Unmarshal(v, &subs) != nil {
					subs = []json.RawMessage{v}
				}
				for _, sub := range subs {
					if err := walk(sub, path, false); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	if err := walk(schema, nil, true); err != nil {
		return nil, err
	}
	return out, nil
}

func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
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
		hp, err := toolHeaders(t.InputSchema)
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
		h["Mcp-Name"] = HeaderValue(p.Name)
	case "resources/read":
		h["Mcp-Name"] = HeaderValue(p.URI)
	case "tasks/get", "tasks/update", "tasks/cancel":
		h["Mcp-Name"] = HeaderValue(p.TaskID)
	}
	if method == "tools/call" {
		for _, hp := range s.toolHeaders[p.Name] {
			if v, ok := lookupPath(p.Arguments, hp.Path); ok {
				h["Mcp-Param-"+hp.Name] = HeaderValue(v)
			}
		}
	}
	return h
}

// lookupPath reads a primitive at a properties path as header text.
func lookupPath(raw json.RawMessage, path []string) (string, bool) {
	for _, k := range path {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return "", false
		}
		v, ok := m[k]
		if !ok {
			return "", false
		}
		raw = v
	}
	var x any
	if json.Unmarshal(raw, &x) != nil {
		return "", false
	}
	switch v := x.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		return strings.TrimSuffix(string(raw), ".0"), true
	}
	return "", false
}

// InputRequired is a result that asks for more input (MRTR).
type InputRequired struct {
	InputRequests map[string]InputRequest `json:"inputRequests"`
	RequestState  json.RawMessage         `json:"requestState,omitempty"` // echoed byte for byte
}

// InputRequest is one embedded server request of an MRTR round.
type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// continueRounds answers an input_required result through the Responder
// (a person in the UI, a policy headless) and retries with a new id, the
// original params, inputResponses and the byte-exact requestState.
func (s *Session) continueRounds(c *Call, result json.RawMessage) {
	var ir InputRequired
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
	if json.Unmarshal(StripMeta(c.Params), &params) != nil || params == nil {
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
func (s *Session) answerInputs(ctx context.Context, keys []string, reqs map[string]InputRequest, base ServerRequest) (map[string]json.RawMessage, *Unanswered) {
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

// knownResultType reports whether rt is a resultType this client
// understands: "complete" (or none), "input_required" (MRTR) and "task"
// (the tasks extension, declared on every request).
func knownResultType(rt string) bool {
	switch rt {
	case "", "complete", "input_required", "task":
		return true
	}
	return false
}

// invalidResultType is the failure of a 2026-07-28 result whose resultType
// is unknown (or not a string), nil for any other. Earlier eras have no
// resultType: there it means nothing and is left alone.
func invalidResultType(era string, h *journal.Hints) *Failure {
	if era != EraModern || (!h.ResultTypeBad && knownResultType(h.ResultType)) {
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
