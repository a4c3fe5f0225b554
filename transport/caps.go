package transport

import "sync"

// Optional capabilities. A Transport is all the session needs to exchange
// messages; these are the extra things some transports can do, named here so
// the contract is written down in one place. The session asks for them with
// a type assertion and does without when a transport lacks one.
//
//	capability      Stdio  HTTP  LegacySSE
//	SessionHolder     -     ✓       -
//	VersionHeader     -     ✓       -
//	StreamCloser      -     ✓       -
//	Listener          -     ✓       -
//	Resumer           -     ✓       -
//	StreamSessions    -     ✓       -
//	Process           ✓     -       -
//	PostEndpoint      -     -       ✓
//
// Injector and Ender are a proxy feed's (proxy.Attach), not a wire
// transport's: they say whether the viewer may send and why the feed ended.

// Process is a transport that runs the server as a child process: Stdio.
type Process interface {
	// ExitStatus is how the process ended; exited turns true as soon as it
	// was reaped, before the transport reports its end and closes Done.
	ExitStatus() (code int, signal string, exited bool)
}

// SessionHolder carries an MCP session (Mcp-Session-Id): Streamable HTTP.
// Having one is also how the session tells an HTTP transport from a pipe.
type SessionHolder interface {
	// SessionID is the id in use, "" before the server issued one.
	SessionID() string
	// SetSessionID seeds an id (rejoin after a restart) or clears it before
	// a fresh initialize.
	SetSessionID(id string)
	// KeepSession makes Close leave the session on the server (no DELETE),
	// so calls detached from it can be rejoined by another process.
	KeepSession()
}

// VersionHeader mirrors the negotiated protocol version in every later
// request (MCP-Protocol-Version).
type VersionHeader interface {
	SetProtocolVersion(v string)
}

// StreamCloser closes one request's own response stream (and any resume of
// it) and nothing else: how a call is cancelled over HTTP.
type StreamCloser interface {
	CloseStream(key string)
}

// Listener opens the standalone server→client stream (GET). done learns
// once whether it was answered: nil for an open stream, an error for a
// refusal or failure (a server may refuse it: 405).
type Listener interface {
	OpenListen(done func(error))
}

// Resumer continues a broken stream with Last-Event-ID. One attempt: when
// and how often to retry is the caller's policy. done gets nil once the
// server answered 2xx.
type Resumer interface {
	Resume(stream, lastEventID string, done func(error))
}

// StreamSessions lets one stream live in another MCP session than the
// transport's own: a call rejoined from a session another process made is
// resumed with that session's id, and its answers never switch the
// transport's own session.
type StreamSessions interface {
	SetStreamSession(stream, sessionID string)
}

// PostEndpoint is a transport whose messages go to a URI the server named
// (the legacy SSE endpoint event), not to the target the user gave.
type PostEndpoint interface {
	// Endpoint is that URI, redacted ("" before the server named it).
	Endpoint() string
}

// Injector is a feed that may or may not take requests of the viewer's own
// (a stdio proxy does; an HTTP proxy has no session to put them in).
type Injector interface {
	CanInject() bool
}

// Ender is a feed that can say why it ended ("" while it runs).
type Ender interface {
	Ended() string
}

// callOnce makes done safe to call from several paths: only the first call
// gets through (nil → no-op).
func callOnce(done func(error)) func(error) {
	if done == nil {
		return func(error) {}
	}
	var once sync.Once
	return func(err error) { once.Do(func() { done(err) }) }
}

// Backlog is a transport that can tell whether the server has read what
// was sent to it: a stdio server still starting (npx fetching a package)
// has not read its stdin yet, and a wait for its answer should not count
// that time. ok is false when it cannot be known.
type Backlog interface {
	Unread() (n int, ok bool)
}
