package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"mcpscope/session"
)

// answersResponder answers server requests and MRTR input requests from
// --answer KEY=JSON flags and an --answers FILE (a JSON object of the same),
// matched by the input request's key, then by method (e.g.
// "elicitation/create"). Whatever has no answer goes to the headless default.
type answersResponder struct {
	answers  map[string]json.RawMessage
	fallback session.Headless
}

func newAnswersResponder(o *options) (session.Responder, error) {
	h := session.Headless{}
	for _, u := range o.roots {
		h.Roots = append(h.Roots, session.Root{URI: u})
	}
	r := &answersResponder{answers: map[string]json.RawMessage{}, fallback: h}
	if o.answersFile != "" {
		b, err := os.ReadFile(o.answersFile)
		if err != nil {
			return nil, usagef("--answers: %v", err)
		}
		if err := json.Unmarshal(b, &r.answers); err != nil {
			return nil, usagef("--answers %s must be a JSON object of key → answer: %v", o.answersFile, err)
		}
	}
	for _, a := range o.answers {
		k, v, ok := strings.Cut(a, "=")
		if !ok || !json.Valid([]byte(v)) {
			return nil, usagef(`--answer takes KEY=JSON, e.g. --answer 'github_login={"action":"accept","content":{"name":"octocat"}}', got %q`, a)
		}
		r.answers[k] = json.RawMessage(v)
	}
	return r, nil
}

func (r *answersResponder) Respond(ctx context.Context, req session.ServerRequest) (json.RawMessage, *session.RPCError) {
	if req.MRTR {
		if a, ok := r.answers[req.Key]; ok {
			return a, nil
		}
	}
	if a, ok := r.answers[req.Method]; ok {
		return a, nil
	}
	if req.MRTR {
		return nil, &session.RPCError{Code: -32601, Message: fmt.Sprintf(
			"no answer for input request %q (%s): pass --answer '%s=<json>' or --answers FILE", req.Key, req.Method, req.Key)}
	}
	return r.fallback.Respond(ctx, req)
}

// Capabilities declares what the given answers can serve.
func (r *answersResponder) Capabilities() json.RawMessage {
	caps := map[string]any{"roots": map[string]any{"listChanged": true}}
	for k := range r.answers {
		switch {
		case k == "sampling/createMessage":
			caps["sampling"] = map[string]any{}
		case k == "elicitation/create":
			caps["elicitation"] = map[string]any{"form": map[string]any{}}
		}
	}
	// MRTR keys are server-chosen names: declare both so the server may ask.
	if len(caps) == 1 && len(r.answers) > 0 {
		caps["sampling"] = map[string]any{}
		caps["elicitation"] = map[string]any{"form": map[string]any{}}
	}
	return mustJSON(caps)
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
