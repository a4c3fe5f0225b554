package filter

import "time"

// Subject is what a filter looks at: one frame, and the call it belongs to
// when it has one. Callers fill it from whatever they store; the filter never
// decodes anything itself. A caller may reuse one Subject for many frames, but
// must not share it between goroutines during Match.
type Subject struct {
	// Kind is one word: request, response, notification, progress (a
	// notifications/progress), log (a notifications/message), stderr,
	// garbage or event.
	Kind string
	// Dir is in (server → client), out (client → server) or local.
	Dir string
	// Method is the JSON-RPC method; for a response, the method of its
	// request; for an event frame, the event name (stream-dropped, exited…).
	Method string
	// Tool is what the call is about: the tool of a tools/call, the prompt of
	// a prompts/get, the URI of a resources/read.
	Tool string
	// ID is the JSON-RPC id as canonical text: 7, "abc" (with the quotes).
	ID string
	// State is the call's state: ok, error, cancelled, late, lost, detached,
	// pending, streaming, input. Empty when the frame belongs to no call.
	State string
	// IsError: a JSON-RPC error, a tool result with isError, or a synthetic
	// failure.
	IsError bool
	// Duration is the call's duration, so far while it runs; 0 when unknown
	// or when the frame belongs to no call.
	Duration time.Duration
	// Size is the frame's length in bytes.
	Size int
	// Headers are the HTTP headers recorded with the frame; names are
	// compared case-insensitively whatever their case here.
	Headers map[string]string
	// Content returns the frame's exact bytes. It is called at most once per
	// Match, and only when the filter needs it (see Filter.NeedsContent), so
	// it may read a journal. Nil means the frame has no content.
	Content func() []byte
}
