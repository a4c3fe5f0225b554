package connect

import (
	"context"
	"encoding/json"
	"fmt"

	"mcpscope/journal"
	"mcpscope/session"
)

// answers answers server requests and MRTR input requests from answers
// given in advance, matched by the input request's key, then by method
// (e.g. "elicitation/create"). Whatever has none goes to the headless
// default (ping, roots).
type answers struct {
	given    map[string]json.RawMessage
	fallback session.Headless
}

func newAnswers(given map[string]json.RawMessage, roots []session.Root) *answers {
	h := session.Headless{Roots: roots}
	if given == nil {
		given = map[string]json.RawMessage{}
	}
	return &answers{given: given, fallback: h}
}

func (r *answers) Respond(ctx context.Context, req session.ServerRequest) (json.RawMessage, *journal.RPCError) {
	if req.MRTR {
		if a, ok := r.given[req.Key]; ok {
			return a, nil
		}
	}
	if a, ok := r.given[req.Method]; ok {
		return a, nil
	}
	if req.MRTR {
		return nil, &journal.RPCError{Code: -32601, Message: fmt.Sprintf("no answer given for input request %q (%s)", req.Key, req.Method)}
	}
	return r.fallback.Respond(ctx, req)
}

// Capabilities declares what the given answers can serve.
func (r *answers) Capabilities() json.RawMessage {
	caps := map[string]any{"roots": map[string]any{"listChanged": true}}
	for k := range r.given {
		switch k {
		case "sampling/createMessage":
			caps["sampling"] = map[string]any{}
		case "elicitation/create":
			caps["elicitation"] = map[string]any{"form": map[string]any{}}
		}
	}
	// MRTR keys are server-chosen names: declare both so the server may ask.
	if len(caps) == 1 && len(r.given) > 0 {
		caps["sampling"] = map[string]any{}
		caps["elicitation"] = map[string]any{"form": map[string]any{}}
	}
	b, _ := json.Marshal(caps)
	return b
}
