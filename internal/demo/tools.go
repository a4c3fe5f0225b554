package demo

//lint:file-ignore SA1019 the demo exercises logging and sampling on purpose: an inspector must show them while servers still use them (deprecated by SEP-2577 in 2026-07-28, functional through the deprecation window)

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits that keep a demo call from taking the machine down.
const (
	maxSeconds   = 3600
	maxSteps     = 10000
	maxLogCount  = 10000
	maxBurst     = 1000000
	maxMegabytes = 256
)

var logLevels = []any{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// schemaFor derives the input schema of T and lets edit set defaults, bounds
// and enums, which struct tags cannot express; the SDK applies the defaults
// before the handler runs, and an inspector can show them in its form.
func schemaFor[T any](edit func(props map[string]*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(err)
	}
	if edit != nil {
		edit(s.Properties)
	}
	return s
}

func def(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func ptr[T any](v T) *T { return &v }

func text(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

func toolError(format string, args ...any) *mcp.CallToolResult {
	r := text(format, args...)
	r.IsError = true
	return r
}

func (d *Demo) addTools() {
	mcp.AddTool(d.Server, &mcp.Tool{
		Name:        "slow",
		Title:       "Slow task with progress",
		Description: "Works for `seconds`, in `steps` equal steps, sending notifications/progress (\"step 3/10\") after each step when the request carries a progressToken. Cancel it to see the server stop at once. On 2026-07-28 over HTTP, to a client that declares the tasks extension, it runs as a task (answered at once with a task id; tasks/get shows \"step 3/10\" as its status message, then the result) when `task` is \"always\", or \"auto\" and `seconds` is 30 or more.",
		InputSchema: schemaFor[slowArgs](func(p map[string]*jsonschema.Schema) {
			p["seconds"].Default, p["seconds"].Minimum, p["seconds"].Maximum = def(10), ptr(0.0), ptr(float64(maxSeconds))
			p["steps"].Default, p["steps"].Minimum, p["steps"].Maximum = def(10), ptr(1.0), ptr(float64(maxSteps))
			p["task"].Default, p["task"].Enum = def(taskModeAuto), []any{taskModeAuto, taskModeAlways, taskModeNever}
		}),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, d.slow)

	mcp.AddTool(d.Server, &mcp.Tool{
		Name:        "echo",
		Title:       "Echo",
		Description: "Returns `message` unchanged, as text and as structured content.",
		InputSchema: schemaFor[echoArgs](nil),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, echo)

	mcp.AddTool(d.Server, &mcp.Tool{
		Name:        "log",
		Title:       "Emit log messages",
		Description: "Sends `count` notifications/message log messages at `level`. Only messages at or above the client's log level go out (logging/setLevel, or the request's _meta on 2026-07-28), and none before the client sets one; the result says how many were really sent.",
		InputSchema: schemaFor[logArgs](func(p map[string]*jsonschema.Schema) {
			p["level"].Default, p["level"].Enum = def("info"), logLevels
			p["message"].Default = def("Hello from the mcpscope demo server")
			p["count"].Default, p["count"].Minimum, p["count"].Maximum = def(1), ptr(1.0), ptr(float64(maxLogCount))
		}),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, logTool)

	mcp.AddTool(d.Server, &mcp.Tool{
		Name:        "ask",
		Title:       "Ask the user (elicitation)",
		Description: "Asks the client for the user's name, age and favourite colour with elicitation/create, then reports whether they accepted, declined or cancelled, and what they entered. Needs a client with the elicitation capability.",
		InputSchema: schemaFor[askArgs](func(p map[string]*jsonschema.Schema) {
			p["message"].Default = def("The mcpscope demo server would like to know a little about you.")
		}),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, ask)

	mcp.AddTool(d.Server, &mcp.Tool{
		Name:        "sample",
		Title:       "Ask the client's model (sampling)",
		Description: "Sends `prompt` to the client's language model with sampling/createMessage and returns the reply. Needs a client with the sampling capability.",
		InputSchema: schemaFor[sampleArgs](func(p map[string]*jsonschema.Schema) {
			p["prompt"].Default = def("Write a haiku about terminals.")
			p["maxTokens"].Default, p["maxTokens"].Minimum, p["maxTokens"].Maximum = def(200), ptr(1.0), ptr(100000.0)
		}),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(true)},
	}, sample)

	mcp.AddTool(d.Server, &mcp.Tool{
		Name:        "burst",
		Title:       "Notification flood",
		Description: "Sends `count` notifications as fast as it can, then returns how many were sent. kind \"progress\" needs a progressToken; \"log\" sends log messages (subject to logging/setLevel); \"auto\" picks progress when there is a token.",
		InputSchema: schemaFor[burstArgs](func(p map[string]*jsonschema.Schema) {
			p["count"].Default, p["count"].Minimum, p["count"].Maximum = def(1000), ptr(0.0), ptr(float64(maxBurst))
			p["kind"].Default, p["kind"].Enum = def("auto"), []any{"auto", "progress", "log"}
		}),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, burst)

	mcp.AddTool(d.Server, &mcp.Tool{
		Name:        "big",
		Title:       "Large result",
		Description: "Returns a text result of `megabytes` MiB (numbered 64-byte lines), to see how a client copes with a large response.",
		InputSchema: schemaFor[bigArgs](func(p map[string]*jsonschema.Schema) {
			p["megabytes"].Default, p["megabytes"].Minimum, p["megabytes"].Maximum = def(1), ptr(0.0), ptr(float64(maxMegabytes))
		}),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, big)

	mcp.AddTool(d.Server, &mcp.Tool{
		Name:        "fail",
		Title:       "Always fails",
		Description: "Returns a tool error (isError: true) with `message`, the way a tool reports a failure the model should see.",
		InputSchema: schemaFor[failArgs](func(p map[string]*jsonschema.Schema) {
			p["message"].Default = def("This tool always fails, on purpose.")
		}),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, fail)

	mcp.AddTool(d.Server, &mcp.Tool{
		Name:        "toggle-extra",
		Title:       "Add or remove the extra tool, resource and prompt",
		Description: "Adds the `extra` tool, the demo://extra resource and the `extra` prompt, or removes them if present, so the server sends notifications/tools/list_changed, notifications/resources/list_changed and notifications/prompts/list_changed.",
		InputSchema: &jsonschema.Schema{Type: "object"},
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, d.toggleExtra)
}

type slowArgs struct {
	Seconds float64 `json:"seconds,omitempty" jsonschema:"total duration in seconds"`
	Steps   int     `json:"steps,omitempty" jsonschema:"number of steps, one progress notification each"`
	Task    string  `json:"task,omitempty" jsonschema:"2026-07-28 over HTTP, to a client with the tasks extension: run as a task always, never, or auto (when seconds is 30 or more)"`
}

func (d *Demo) slow(ctx context.Context, req *mcp.CallToolRequest, in slowArgs) (*mcp.CallToolResult, any, error) {
	token := req.Params.GetProgressToken()
	start := time.Now()
	total := time.Duration(in.Seconds * float64(time.Second))
	for i := 1; i <= in.Steps; i++ {
		// Each step ends at a fixed offset from the start, so the notification
		// overhead does not stretch the total.
		timer := time.NewTimer(time.Until(start.Add(total * time.Duration(i) / time.Duration(in.Steps))))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, nil, fmt.Errorf("slow: stopped after %d of %d steps: %w", i-1, in.Steps, context.Cause(ctx))
		case <-timer.C:
		}
		if token == nil {
			continue
		}
		err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      float64(i),
			Total:         float64(in.Steps),
			Message:       fmt.Sprintf("step %d/%d", i, in.Steps),
		})
		if err != nil {
			return nil, nil, fmt.Errorf("slow: sending progress: %w", err)
		}
	}
	note := ""
	if token == nil {
		note = " (no progressToken in the request, so no progress notifications)"
	}
	return text("slow: finished %d steps in %s%s", in.Steps, time.Since(start).Round(time.Millisecond), note), nil, nil
}

type echoArgs struct {
	Message string `json:"message" jsonschema:"the text to send back"`
}

type echoOut struct {
	Message string `json:"message"`
	Length  int    `json:"length" jsonschema:"length of message in bytes"`
}

func echo(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, echoOut, error) {
	return text("%s", in.Message), echoOut{Message: in.Message, Length: len(in.Message)}, nil
}

type logArgs struct {
	Level   string `json:"level,omitempty" jsonschema:"log level of every message"`
	Message string `json:"message,omitempty" jsonschema:"text of the messages"`
	Count   int    `json:"count,omitempty" jsonschema:"how many messages to send"`
}

func logTool(ctx context.Context, req *mcp.CallToolRequest, in logArgs) (*mcp.CallToolResult, any, error) {
	ctx, sent := withSentCounter(ctx)
	for i := 1; i <= in.Count; i++ {
		msg := in.Message
		if in.Count > 1 {
			msg = fmt.Sprintf("%s (%d/%d)", in.Message, i, in.Count)
		}
		err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(in.Level), Logger: "demo", Data: msg})
		if err != nil {
			return nil, nil, fmt.Errorf("log: %w", err)
		}
	}
	n := sent.n.Load()
	if n < int64(in.Count) {
		return text("log: sent %d of %d %s messages; the rest were below the client's log level: %s", n, in.Count, in.Level, levelHint(req)), nil, nil
	}
	return text("log: sent %d %s messages", n, in.Level), nil, nil
}

// clientHas reports whether the client declared capability: in this
// request's _meta on 2026-07-28 (the SDK keeps only the first request's
// copy), or at initialize before that.
func clientHas(req *mcp.CallToolRequest, capability string) bool {
	if caps, ok := req.Params.GetMeta()[mcp.MetaKeyClientCapabilities]; ok {
		b, _ := json.Marshal(caps)
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil {
			return false
		}
		v, ok := m[capability]
		return ok && string(v) != "null"
	}
	ip := req.Session.InitializeParams()
	if ip == nil || ip.Capabilities == nil {
		return false
	}
	switch capability {
	case "elicitation":
		return ip.Capabilities.Elicitation != nil
	case "sampling":
		return ip.Capabilities.Sampling != nil
	}
	return false
}

// levelHint tells the user how to let log messages through in this
// request's protocol era.
func levelHint(req *mcp.CallToolRequest) string {
	if req.ProtocolVersion() >= "2026-07-28" {
		return "put a level in the request's _meta (" + mcp.MetaKeyLogLevel + "); without one this server sends no log messages"
	}
	return "set one with logging/setLevel; until the client does, this server sends no log messages"
}

type askArgs struct {
	Message string `json:"message,omitempty" jsonschema:"what the server tells the user when asking"`
}

// The ask and sample tools are written in the multi-round-trip style
// (SEP-2322): they return inputRequests and read inputResponses on the retry.
// For clients before 2026-07-28 the SDK turns that into a plain
// elicitation/create or sampling/createMessage request on the wire; for
// 2026-07-28 clients, which cannot receive server requests, it is the only
// way to ask.
const (
	askKey    = "ask"
	sampleKey = "sample"
)

var askSchema = &jsonschema.Schema{
	Type: "object",
	Properties: map[string]*jsonschema.Schema{
		"name":   {Type: "string", Title: "Your name", MinLength: ptr(1)},
		"age":    {Type: "integer", Title: "Your age", Minimum: ptr(0.0), Maximum: ptr(150.0)},
		"colour": {Type: "string", Title: "Favourite colour", Enum: []any{"red", "green", "blue", "other"}},
	},
	Required: []string{"name"},
}

func ask(_ context.Context, req *mcp.CallToolRequest, in askArgs) (*mcp.CallToolResult, any, error) {
	if resp, ok := req.Params.InputResponses[askKey]; ok {
		res, ok := resp.(*mcp.ElicitResult)
		if !ok {
			return toolError("ask: the client answered the elicitation with a %T, not an elicitation result", resp), nil, nil
		}
		switch res.Action {
		case "accept":
			b, _ := json.Marshal(res.Content)
			return text("ask: the user accepted and answered %s", b), nil, nil
		case "decline":
			return text("ask: the user declined to answer"), nil, nil
		case "cancel":
			return text("ask: the user cancelled (dismissed the form)"), nil, nil
		default:
			return toolError("ask: unknown elicitation action %q", res.Action), nil, nil
		}
	}
	if !clientHas(req, "elicitation") {
		return toolError("ask: this client did not declare the elicitation capability, so the server cannot ask the user anything"), nil, nil
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{askKey: &mcp.ElicitParams{
		Mode:            "form",
		Message:         in.Message,
		RequestedSchema: askSchema,
	}}}, nil, nil
}

type sampleArgs struct {
	Prompt    string `json:"prompt,omitempty" jsonschema:"what to ask the model"`
	MaxTokens int64  `json:"maxTokens,omitempty" jsonschema:"upper bound on the reply length"`
}

func sample(_ context.Context, req *mcp.CallToolRequest, in sampleArgs) (*mcp.CallToolResult, any, error) {
	if resp, ok := req.Params.InputResponses[sampleKey]; ok {
		var (
			content []mcp.Content
			model   string
		)
		switch r := resp.(type) {
		case *mcp.CreateMessageWithToolsResult:
			content, model = r.Content, r.Model
		case *mcp.CreateMessageResult:
			content, model = []mcp.Content{r.Content}, r.Model
		default:
			return toolError("sample: the client answered the sampling request with a %T, not a message", resp), nil, nil
		}
		var parts []string
		for _, c := range content {
			if t, ok := c.(*mcp.TextContent); ok {
				parts = append(parts, t.Text)
			} else {
				parts = append(parts, fmt.Sprintf("[%T content]", c))
			}
		}
		return text("%s\n\n(model: %s)", strings.Join(parts, "\n"), model), nil, nil
	}
	if !clientHas(req, "sampling") {
		return toolError("sample: this client did not declare the sampling capability, so the server cannot ask its model anything"), nil, nil
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{sampleKey: &mcp.CreateMessageParams{
		Messages:     []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}},
		MaxTokens:    in.MaxTokens,
		SystemPrompt: "You are answering a request from the mcpscope demo server. Keep it short.",
	}}}, nil, nil
}

type burstArgs struct {
	Count int    `json:"count,omitempty" jsonschema:"how many notifications to send"`
	Kind  string `json:"kind,omitempty" jsonschema:"progress, log, or auto (progress when the request has a progressToken)"`
}

func burst(ctx context.Context, req *mcp.CallToolRequest, in burstArgs) (*mcp.CallToolResult, any, error) {
	token := req.Params.GetProgressToken()
	kind := in.Kind
	if kind == "auto" {
		kind = "log"
		if token != nil {
			kind = "progress"
		}
	}
	if kind == "progress" && token == nil {
		return toolError("burst: kind progress needs a progressToken in the request's _meta; send one or use kind log"), nil, nil
	}
	ctx, sent := withSentCounter(ctx)
	start := time.Now()
	for i := 1; i <= in.Count; i++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("burst: stopped after %d of %d: %w", i-1, in.Count, err)
		}
		var err error
		if kind == "progress" {
			err = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: float64(i), Total: float64(in.Count),
			})
		} else {
			err = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "burst", Data: fmt.Sprintf("burst %d/%d", i, in.Count)})
		}
		if err != nil {
			return nil, nil, fmt.Errorf("burst: after %d of %d: %w", i-1, in.Count, err)
		}
	}
	n := sent.n.Load()
	note := ""
	if n < int64(in.Count) {
		note = "; the rest were log messages below the client's log level: " + levelHint(req)
	}
	return text("burst: sent %d %s notifications in %s%s", n, kind, time.Since(start).Round(time.Millisecond), note), nil, nil
}

type bigArgs struct {
	Megabytes float64 `json:"megabytes,omitempty" jsonschema:"size of the result in MiB"`
}

func big(_ context.Context, _ *mcp.CallToolRequest, in bigArgs) (*mcp.CallToolResult, any, error) {
	size := int(in.Megabytes * (1 << 20))
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: bigText(size)}}}, nil, nil
}

// bigText returns exactly size bytes of numbered 64-byte lines, so a reader
// can tell where a truncated or reordered copy went wrong.
func bigText(size int) string {
	const filler = "................................................................"
	b := make([]byte, 0, size+64)
	for line := 1; len(b) < size; line++ {
		start := len(b)
		b = fmt.Appendf(b, "line %08d ", line)
		b = append(b, filler[:63-(len(b)-start)]...)
		b = append(b, '\n')
	}
	return string(b[:size])
}

type failArgs struct {
	Message string `json:"message,omitempty" jsonschema:"the error text to return"`
}

func fail(_ context.Context, _ *mcp.CallToolRequest, in failArgs) (*mcp.CallToolResult, any, error) {
	return toolError("%s", in.Message), nil, nil
}

const extraName, extraURI = "extra", "demo://extra"

func (d *Demo) toggleExtra(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
	d.extraMu.Lock()
	defer d.extraMu.Unlock()
	d.extraOn = !d.extraOn
	if !d.extraOn {
		d.Server.RemoveTools(extraName)
		d.Server.RemoveResources(extraURI)
		d.Server.RemovePrompts(extraName)
		return text("toggle-extra: removed the extra tool, resource and prompt; expect notifications/{tools,resources,prompts}/list_changed"), nil, nil
	}
	mcp.AddTool(d.Server, &mcp.Tool{
		Name:        extraName,
		Title:       "Extra tool",
		Description: "Exists only while toggle-extra has switched it on. Says hello.",
		InputSchema: &jsonschema.Schema{Type: "object"},
	}, func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
		return text("hello from the extra tool"), nil, nil
	})
	d.Server.AddResource(&mcp.Resource{
		URI: extraURI, Name: "extra", Title: "Extra resource", MIMEType: "text/plain",
		Description: "Exists only while toggle-extra has switched it on.",
	}, staticText("This resource was added by toggle-extra.\n"))
	d.Server.AddPrompt(&mcp.Prompt{
		Name: extraName, Title: "Extra prompt",
		Description: "Exists only while toggle-extra has switched it on.",
	}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Say hello to the extra prompt."}}}}, nil
	})
	return text("toggle-extra: added the extra tool, resource and prompt; expect notifications/{tools,resources,prompts}/list_changed"), nil, nil
}
