// Package conformance is the client the official MCP conformance suite
// drives (`mcpscope client URL`, the suite's
// `client --command "mcpscope client"`) (npx @modelcontextprotocol/conformance client
// --command "mcpscope client" --scenario NAME). The suite starts a scenario
// server, runs the command with the server's URL appended and the scenario's
// name in MCP_CONFORMANCE_SCENARIO, and judges what arrives on the wire. The
// client here does what each scenario expects with the normal engine (era
// probe, handshake, calls, MRTR rounds, stream resumption) and succeeds only
// when everything it did worked.
package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"mcpscope/connect"
	"mcpscope/framestore"
	"mcpscope/internal/render"
	"mcpscope/internal/schema"
	"mcpscope/internal/termsafe"
	"mcpscope/journal"
	"mcpscope/oauth"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/transport"
)

// Environment the conformance suite sets for the client it runs.
const (
	EnvScenario    = "MCP_CONFORMANCE_SCENARIO"
	envConfContext = "MCP_CONFORMANCE_CONTEXT"
	envConfVersion = "MCP_CONFORMANCE_PROTOCOL_VERSION" // 0.2.0 and later: the spec version the scenario runs at
)

// confDefaultTimeout bounds each step when --timeout is not given: well
// inside the suite's own 30 s limit, so our error message is what the
// suite's log shows instead of its kill.
const confDefaultTimeout = 20 * time.Second

// confContext is MCP_CONFORMANCE_CONTEXT: what a scenario tells its client
// besides the URL (tool calls to make, credentials for auth scenarios).
type confContext struct {
	Name      string         `json:"name"`
	ToolCalls []confToolCall `json:"toolCalls"`
	// A pre-registered OAuth client (auth scenarios).
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	PrivateKeyPEM string `json:"private_key_pem"`
	SigningAlg    string `json:"signing_algorithm"`
	// Enterprise-managed authorization (SEP-990).
	IdPClientID      string `json:"idp_client_id"`
	IdPIDToken       string `json:"idp_id_token"`
	IdPTokenEndpoint string `json:"idp_token_endpoint"`
	// Workload identity federation: the workload's JWT.
	ValidJWT string `json:"valid_jwt"`
}

// confClientMetadataURL is the client id the suite's authorization server
// takes as this client's metadata document (it does not fetch it).
const confClientMetadataURL = "https://conformance-test.local/client-metadata.json"

type confToolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// confTool is one entry of tools/list, its schema kept byte for byte.
type confTool struct {
	Name        string          `json:"name"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// confClient runs one scenario over one session.
type confClient struct {
	s        *session.Session
	out      io.Writer
	scenario string
	cc       confContext
	tools    []confTool
}

// confPlans are the scenarios mcpscope knows. Any other scenario gets
// confGeneric: list tools and make the calls the scenario's context names.
var confPlans = map[string]func(context.Context, *confClient) error{
	// 0.1.16 (and 0.2.0 at 2025-11-25)
	"initialize":                          func(ctx context.Context, c *confClient) error { return c.listTools(ctx) },
	"tools_call":                          confToolsCall,
	"elicitation-sep1034-client-defaults": confCallNamed("test_client_elicitation_defaults"),
	"sse-retry":                           confSSERetry,
	// 0.2.0-alpha.12 at 2026-07-28
	"request-metadata":                 confGeneric,
	"http-standard-headers":            confEverything,
	"http-custom-headers":              confGeneric,
	"http-invalid-tool-headers":        confCallAllTools,
	"sep-2322-client-request-state":    confCallAllTools,
	"json-schema-2020-12-preservation": confSchemaEcho,
	"json-schema-ref-no-deref":         func(ctx context.Context, c *confClient) error { return c.listTools(ctx) },
}

// Run runs scenario against the server at sp.URL with the rest of sp (the
// suite's scenario context fills in what it names: credentials, a client
// id), writing what it did to out.
func Run(ctx context.Context, sp connect.Spec, scenario string, browserLogin bool, out, errw io.Writer) error {
	c := &confClient{out: out, scenario: scenario}
	if raw := os.Getenv(envConfContext); raw != "" {
		if err := json.Unmarshal([]byte(raw), &c.cc); err != nil {
			return fmt.Errorf("scenario %s: %s is not the JSON object the suite sends: %v", scenario, envConfContext, err)
		}
	}
	if sp.Timeout == 0 {
		sp.Timeout = confDefaultTimeout
	}
	a := &sp.Auth
	if a.ClientID == "" {
		a.ClientID, a.ClientSecret = c.cc.ClientID, c.cc.ClientSecret
		a.ClientKeyPEM, a.SigningAlg = c.cc.PrivateKeyPEM, c.cc.SigningAlg
		a.IDToken, a.IdPTokenEndpoint, a.IdPClientID = c.cc.IdPIDToken, c.cc.IdPTokenEndpoint, c.cc.IdPClientID
		a.Assertion = c.cc.ValidJWT
	}
	if a.ClientMetadataURL == "" {
		a.ClientMetadataURL = confClientMetadataURL
	}
	if a.Authorizer == nil && !browserLogin {
		a.Authorizer = &oauth.Fetch{} // the suite's authorization server approves at once
	}
	if !sp.NoJournal && sp.Journal == "" {
		sp.NoJournal = true // a conformance run leaves nothing behind unless a journal is asked for
	}
	// A throwaway run keeps no rejoin state or login, and answers
	// elicitation the way the suite expects (accept, schema defaults filled).
	sp.NoState = true
	if sp.Transport == "" {
		sp.Transport = "http"
	}
	r := confResponder{}
	r.Roots = sp.Roots
	sp.Responder = r
	s, err := connect.Connect(ctx, sp)
	if err != nil {
		return fmt.Errorf("scenario %s: %w", scenario, err)
	}
	defer s.Close()
	c.s = s
	in := s.Info()
	fmt.Fprintf(out, "scenario %s: connected to %s (era %s, protocol %s; %s)\n", scenario, termsafe.Line(in.Target), in.Era,
		termsafe.Line(in.ProtocolVersion), termsafe.Line(in.EraReason))
	if v := os.Getenv(envConfVersion); v != "" && v != in.ProtocolVersion && !(v < protocol.ModernVersion && in.Era == protocol.EraLegacy) {
		fmt.Fprintf(errw, "mcpscope: note: the suite runs %s at protocol %s, mcpscope settled on %s\n", scenario, v, in.ProtocolVersion)
	}
	plan := confPlans[scenario]
	if plan == nil && strings.HasPrefix(scenario, "auth/") {
		plan = confAuth
	}
	if plan == nil {
		fmt.Fprintf(out, "scenario %s is not one mcpscope knows: listing tools and making the calls its context names\n", scenario)
		plan = confGeneric
	}
	if err := plan(ctx, c); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("scenario %s: %w", scenario, err)
	}
	fmt.Fprintf(out, "scenario %s: done\n", scenario)
	return nil
}

// listTools runs tools/list to the last page and keeps the tools.
func (c *confClient) listTools(ctx context.Context) error {
	items, err := c.s.ListAll(ctx, "tools/list", "tools")
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	c.tools = make([]confTool, len(items))
	names := make([]string, len(items))
	for i, it := range items {
		if err := json.Unmarshal(it, &c.tools[i]); err != nil {
			return fmt.Errorf("tools/list: tool %d is not a Tool: %w", i, err)
		}
		names[i] = termsafe.Line(c.tools[i].Name)
	}
	fmt.Fprintf(c.out, "tools/list: %d tools %v\n", len(c.tools), names)
	return nil
}

// usable reports whether a listed tool may be called: in the 2026-07-28
// era a tool whose x-mcp-header annotations are invalid must be dropped.
func (c *confClient) usable(name string) (bool, string) {
	if c.s.Era() != protocol.EraModern {
		return true, ""
	}
	why, bad := c.s.InvalidTools()[name]
	return !bad, why
}

// callTool calls one tool and fails on an error or an isError result.
func (c *confClient) callTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	call := c.s.Call("tools/call", map[string]any{"name": name, "arguments": args})
	res, err := call.Await(ctx)
	if err != nil {
		return nil, fmt.Errorf("tools/call %s: %w", name, err)
	}
	text := render.FirstText(res, 120)
	rounds := ""
	if n := confRounds(call); n > 0 {
		rounds = fmt.Sprintf(" after %d input_required round(s)", n)
	}
	fmt.Fprintf(c.out, "tools/call %s: %s%s\n", termsafe.Line(name), text, rounds)
	if final := lastRound(call).Snapshot(); final.IsError {
		return res, &session.ToolError{Name: name, Text: text}
	}
	return res, nil
}

// lastRound is the last MRTR round of a call (the call itself without any).
func lastRound(c *session.Call) *session.Call {
	for next := c.Next(); next != nil; next = next.Next() {
		c = next
	}
	return c
}

// confRounds counts the MRTR retries that followed a call.
func confRounds(c *session.Call) int {
	n := 0
	for next := c.Next(); next != nil; next = next.Next() {
		n++
	}
	return n
}

// confGeneric lists tools and makes the calls the scenario's context names.
func confGeneric(ctx context.Context, c *confClient) error {
	if err := c.listTools(ctx); err != nil {
		return err
	}
	for _, tc := range c.cc.ToolCalls {
		if ok, why := c.usable(tc.Name); !ok {
			return fmt.Errorf("the scenario asks for tool %s, which the spec says to drop: %s", tc.Name, why)
		}
		if _, err := c.callTool(ctx, tc.Name, tc.Arguments); err != nil {
			return err
		}
	}
	return nil
}

// confAuth is what the authorization scenarios judge the OAuth dance by:
// the handshake, tools/list and a call of each tool (where a server asks
// for more scope).
func confAuth(ctx context.Context, c *confClient) error {
	if err := c.listTools(ctx); err != nil {
		return err
	}
	for _, t := range c.tools {
		if _, err := c.callTool(ctx, t.Name, confArguments(t.InputSchema)); err != nil {
			return err
		}
	}
	return nil
}

// confCallNamed lists tools, then calls one with arguments made from its
// schema.
func confCallNamed(name string) func(context.Context, *confClient) error {
	return func(ctx context.Context, c *confClient) error {
		if err := c.listTools(ctx); err != nil {
			return err
		}
		t, ok := c.tool(name)
		if !ok {
			return fmt.Errorf("the server lists no tool %q, which this scenario calls", name)
		}
		_, err := c.callTool(ctx, name, confArguments(t.InputSchema))
		return err
	}
}

func (c *confClient) tool(name string) (confTool, bool) {
	for _, t := range c.tools {
		if t.Name == name {
			return t, true
		}
	}
	return confTool{}, false
}

// confToolsCall: add_numbers with two numbers (the scenario checks their types).
func confToolsCall(ctx context.Context, c *confClient) error {
	if err := c.listTools(ctx); err != nil {
		return err
	}
	if _, ok := c.tool("add_numbers"); !ok {
		return errors.New("the server lists no tool add_numbers, which this scenario calls")
	}
	res, err := c.callTool(ctx, "add_numbers", json.RawMessage(`{"a":2,"b":3}`))
	if err != nil {
		return err
	}
	if !strings.Contains(string(res), "5") {
		return fmt.Errorf("tools/call add_numbers 2+3: the result does not contain 5: %s", termsafe.Line(string(res)))
	}
	return nil
}

// confCallAllTools calls every listed tool the spec lets us call, with
// arguments made from its schema, and says which it dropped.
func confCallAllTools(ctx context.Context, c *confClient) error {
	if err := c.listTools(ctx); err != nil {
		return err
	}
	called := 0
	for _, t := range c.tools {
		if ok, why := c.usable(t.Name); !ok {
			fmt.Fprintf(c.out, "tools/call %s: not called: %s\n", termsafe.Line(t.Name), termsafe.Line(why))
			continue
		}
		if _, err := c.callTool(ctx, t.Name, confArguments(t.InputSchema)); err != nil {
			return err
		}
		called++
	}
	if called == 0 {
		return errors.New("no tool could be called (the server listed none, or only invalid ones)")
	}
	return nil
}

// confEverything exercises every request that carries a routing header:
// tools/list and tools/call, resources/list and resources/read,
// prompts/list and prompts/get (SEP-2243's Mcp-Method and Mcp-Name).
func confEverything(ctx context.Context, c *confClient) error {
	if err := confCallAllTools(ctx, c); err != nil {
		return err
	}
	if c.s.HasCapability("resources") {
		res, err := c.s.Call("resources/list", nil).Await(ctx)
		if err != nil {
			return fmt.Errorf("resources/list: %w", err)
		}
		var r struct {
			Resources []struct {
				URI string `json:"uri"`
			} `json:"resources"`
		}
		_ = json.Unmarshal(res, &r)
		fmt.Fprintf(c.out, "resources/list: %d resources\n", len(r.Resources))
		for _, x := range r.Resources {
			if _, err := c.s.Call("resources/read", map[string]any{"uri": x.URI}).Await(ctx); err != nil {
				return fmt.Errorf("resources/read %s: %w", x.URI, err)
			}
			fmt.Fprintf(c.out, "resources/read %s: ok\n", termsafe.Line(x.URI))
		}
	}
	if c.s.HasCapability("prompts") {
		res, err := c.s.Call("prompts/list", nil).Await(ctx)
		if err != nil {
			return fmt.Errorf("prompts/list: %w", err)
		}
		var r struct {
			Prompts []struct {
				Name string `json:"name"`
			} `json:"prompts"`
		}
		_ = json.Unmarshal(res, &r)
		fmt.Fprintf(c.out, "prompts/list: %d prompts\n", len(r.Prompts))
		for _, p := range r.Prompts {
			if _, err := c.s.Call("prompts/get", map[string]any{"name": p.Name, "arguments": map[string]string{}}).Await(ctx); err != nil {
				return fmt.Errorf("prompts/get %s: %w", p.Name, err)
			}
			fmt.Fprintf(c.out, "prompts/get %s: ok\n", termsafe.Line(p.Name))
		}
	}
	return nil
}

// confSchemaEcho hands the focal tool's inputSchema back, byte for byte, to
// the echo tool: the scenario checks nothing was lost on the way through.
func confSchemaEcho(ctx context.Context, c *confClient) error {
	const focal, echo = "json_schema_2020_12_tool", "json_schema_echo"
	if err := c.listTools(ctx); err != nil {
		return err
	}
	t, ok := c.tool(focal)
	if !ok {
		return fmt.Errorf("the server lists no tool %q, whose schema this scenario echoes", focal)
	}
	if _, ok := c.tool(echo); !ok {
		return fmt.Errorf("the server lists no tool %q to echo the schema to", echo)
	}
	args, err := json.Marshal(map[string]json.RawMessage{"schema": t.InputSchema})
	if err != nil {
		return fmt.Errorf("the inputSchema of %s is not JSON: %w", focal, err)
	}
	_, err = c.callTool(ctx, echo, args)
	return err
}

// confSSERetry calls the tool whose response stream the server closes
// after a priming event with retry: 500; the engine must come back with GET
// and Last-Event-ID no sooner than the retry. The delay we measured is
// printed (the suite measures its own).
func confSSERetry(ctx context.Context, c *confClient) error {
	// The scenario server answers any GET with the pending result: let the
	// standalone listen stream settle first, or a late listen GET could
	// take the result that belongs to the resume.
	if err := c.settleListen(ctx); err != nil {
		return err
	}
	if err := c.listTools(ctx); err != nil {
		return err
	}
	mark := c.s.Store().Last()
	name := "test_reconnection"
	if _, ok := c.tool(name); !ok && len(c.tools) > 0 {
		name = c.tools[0].Name
	}
	if _, err := c.callTool(ctx, name, nil); err != nil {
		return err
	}
	d, retry, ok := confResumeDelay(c.s.Store().Since(mark, 0))
	if !ok {
		return fmt.Errorf("tools/call %s finished without a resume GET after its stream closed; the scenario wants one", name)
	}
	fmt.Fprintf(c.out, "sse-retry: reconnected with Last-Event-ID %s after the stream closed (server retry: %s)\n",
		d.Round(time.Millisecond), retry)
	if retry > 0 && d < retry-50*time.Millisecond {
		return fmt.Errorf("reconnected %s after the stream closed, sooner than the server's retry of %s", d.Round(time.Millisecond), retry)
	}
	return nil
}

// confResumeDelay finds, in items, a POST stream's clean close and the
// answered resume GET that continued it, and the retry the server set.
func confResumeDelay(items []*framestore.Item) (d, retry time.Duration, ok bool) {
	closed := map[string]time.Time{}
	for _, it := range items {
		m := it.Frame.Meta
		if m.Retry > 0 {
			retry = time.Duration(m.Retry) * time.Millisecond
		}
		if it.Frame.Kind != transport.Event {
			continue
		}
		switch {
		case m.Event == transport.EvStreamClosed && strings.HasPrefix(m.Stream, "post:"):
			closed[m.Stream] = it.Frame.Time
		case m.Event == transport.EvStreamResumed:
			if at, seen := closed[m.Resumes]; seen {
				return it.Frame.Time.Sub(at), retry, true
			}
		}
	}
	return 0, retry, false
}

// settleListen waits until the standalone GET stream the legacy handshake
// opens on HTTP has an answer (opened, refused, failed), bounded by the
// step timeout. Nothing to wait for in the modern era or on stdio.
func (c *confClient) settleListen(ctx context.Context) error {
	if c.s.Era() != protocol.EraLegacy {
		return nil
	}
	if _, http := c.s.Transport().(transport.Listener); !http {
		return nil
	}
	limit := time.NewTimer(confDefaultTimeout)
	defer limit.Stop()
	var last uint64
	for {
		for _, it := range c.s.Store().Since(last, 0) {
			last = it.Seq
			m := it.Frame.Meta
			if it.Frame.Kind != transport.Event || !strings.HasPrefix(m.Stream, "get:") || m.Resumes != "" {
				continue
			}
			switch m.Event {
			case transport.EvStreamOpened, transport.EvHTTPError, transport.EvNote, transport.EvStreamClosed, transport.EvStreamDropped:
				return nil
			}
		}
		select {
		case <-c.s.Store().Changed():
		case <-ctx.Done():
			return ctx.Err()
		case <-limit.C:
			return fmt.Errorf("the standalone GET stream opened after initialize got no answer within %s", confDefaultTimeout)
		}
	}
}

// confArguments makes arguments for a tool from its inputSchema: each
// required property gets its default, its first enum value, or a plain
// value of its type that keeps to its format and bounds.
func confArguments(inputSchema json.RawMessage) json.RawMessage {
	o, err := schema.ReadObject(inputSchema)
	if err != nil {
		return json.RawMessage("{}")
	}
	args := map[string]any{}
	for name := range o.Required { // a required name without a property too
		if v, ok := confValue(o.Props[name], true); ok {
			args[name] = v
		}
	}
	b, _ := json.Marshal(args)
	return b
}

// confValue picks a value for one property schema (read by schema,
// as the inspector's forms read it): its default, else (when must) its
// const or first enum value, else a plain value of its type.
func confValue(p *jsonschema.Schema, must bool) (any, bool) {
	if p == nil {
		p = &jsonschema.Schema{}
	}
	if len(p.Default) > 0 {
		return p.Default, true
	}
	if !must {
		return nil, false
	}
	switch {
	case p.Const != nil:
		return *p.Const, true
	case len(p.Enum) > 0:
		return p.Enum[0], true
	case len(p.OneOf) > 0 && p.OneOf[0].Const != nil:
		return *p.OneOf[0].Const, true
	}
	switch schema.TypeOf(p) {
	case "string":
		return confString(p), true
	case "integer", "number":
		if p.Minimum != nil && *p.Minimum > 1 {
			return *p.Minimum, true
		}
		return 1, true
	case "boolean":
		return true, true
	case "array":
		return []any{}, true
	case "object":
		return map[string]any{}, true
	case "null":
		return nil, true
	}
	return "mcpscope", true
}

// confString is a string that keeps to the property's format and length.
func confString(p *jsonschema.Schema) string {
	s := map[string]string{"email": "mcpscope@example.com", "uri": "https://example.com/mcpscope", "date": "2026-07-28",
		"date-time": "2026-07-28T00:00:00Z"}[p.Format]
	if s == "" {
		s = "mcpscope"
	}
	if p.MinLength != nil && len(s) < *p.MinLength {
		s += strings.Repeat("x", *p.MinLength-len(s))
	}
	return s
}

// confResponder answers what the headless engine does (ping, roots) and
// also elicitation: it accepts, with every field that has a default set to
// it (SEP-1034) and every required field without one set to a plain value.
// URL-mode elicitation needs a person and is declined.
type confResponder struct{ session.Headless }

func (r confResponder) Respond(ctx context.Context, req session.ServerRequest) (json.RawMessage, *journal.RPCError) {
	if req.Method != "elicitation/create" {
		return r.Headless.Respond(ctx, req)
	}
	res, err := elicitDefaults(req.Params)
	if err != nil {
		return nil, &journal.RPCError{Code: -32602, Message: "mcpscope could not read the elicitation request: " + err.Error()}
	}
	return res, nil
}

// Capabilities implements session.Capable: roots and form elicitation.
func (confResponder) Capabilities() json.RawMessage {
	return json.RawMessage(`{"roots":{"listChanged":true},"elicitation":{"form":{}}}`)
}

// elicitDefaults builds the ElicitResult for a form request: accept, with
// the schema's defaults.
func elicitDefaults(params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Mode            string          `json:"mode"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	if p.Mode == "url" {
		return json.RawMessage(`{"action":"decline"}`), nil
	}
	o, err := schema.ReadObject(p.RequestedSchema)
	if err != nil {
		return nil, err
	}
	content := map[string]any{}
	for _, n := range o.Names {
		if v, ok := confValue(o.Props[n], o.Required[n]); ok {
			content[n] = v
		}
	}
	return json.Marshal(map[string]any{"action": "accept", "content": content})
}
