package session

import (
	"context"
	"encoding/json"

	"mcpscope/journal"
	"mcpscope/transport"
)

// ServerRequest is a request the server sent to us (ping, roots/list,
// sampling/createMessage, elicitation/create, …).
type ServerRequest struct {
	ID      json.RawMessage
	Key     string
	Method  string
	Params  json.RawMessage
	Seq     uint64 // the item that carried it
	Related string // key of the client call whose stream carried it, if known
	// Round is set for MRTR input requests (stateless era): Key is then the
	// server's inputRequests key, ID is empty, and the answer goes into the
	// retry's inputResponses instead of a JSON-RPC response.
	Round int
	MRTR  bool
	// TaskID is set when the input request comes from an input_required
	// task (tasks extension): the answer goes out with tasks/update.
	TaskID string
}

// Responder answers server requests. Respond may block (a person answering a
// form); ctx ends when the server cancels the request or the session closes.
// It returns a result, or an error to send back.
type Responder interface {
	Respond(ctx context.Context, r ServerRequest) (json.RawMessage, *journal.RPCError)
}

// Capable is implemented by responders that can answer sampling or
// elicitation, so the session declares those capabilities.
type Capable interface {
	Capabilities() json.RawMessage
}

// Root is one entry of roots/list.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// Headless answers what needs no person: ping, and roots from --root flags.
// Everything else is declined with an error that says where to answer it.
type Headless struct {
	Roots []Root
}

// Respond implements Responder.
func (h Headless) Respond(_ context.Context, r ServerRequest) (json.RawMessage, *journal.RPCError) {
	switch r.Method {
	case "ping":
		return json.RawMessage("{}"), nil
	case "roots/list":
		roots := h.Roots
		if roots == nil {
			roots = []Root{}
		}
		b, _ := json.Marshal(map[string]any{"roots": roots})
		return b, nil
	}
	return nil, &journal.RPCError{Code: -32601, Message: "mcpscope is running headless and does not answer " + r.Method +
		"; open the inspector (mcpscope <target>) to answer it"}
}

// Capabilities implements Capable: roots only.
func (Headless) Capabilities() json.RawMessage {
	return json.RawMessage(`{"roots":{"listChanged":true}}`)
}

// answer runs the responder for a server→client request and sends its reply.
func (s *Session) answer(req ServerRequest) {
	ctx, cancel := context.WithCancel(s.ctx)
	s.mu.Lock()
	s.serverReq[req.Key] = cancel
	s.mu.Unlock()
	go func() {
		defer func() {
			s.mu.Lock()
			delete(s.serverReq, req.Key)
			s.mu.Unlock()
			cancel()
		}()
		result, rerr := s.opts.Responder.Respond(ctx, req)
		if ctx.Err() != nil && s.ctx.Err() == nil {
			return // the server cancelled its request: it wants no answer
		}
		var msg []byte
		if rerr != nil {
			msg, _ = json.Marshal(struct {
				JSONRPC string            `json:"jsonrpc"`
				ID      json.RawMessage   `json:"id"`
				Error   *journal.RPCError `json:"error"`
			}{"2.0", req.ID, rerr})
		} else {
			if result == nil {
				result = json.RawMessage("{}")
			}
			msg, _ = json.Marshal(struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Result  json.RawMessage `json:"result"`
			}{"2.0", req.ID, result})
		}
		s.enqueue(transport.Outgoing{Data: msg}, func(error) {})
	}()
}
