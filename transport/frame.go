// Package transport moves MCP messages between mcpscope and a server as exact
// bytes. It knows framing (lines, HTTP bodies, SSE events) and nothing about
// JSON-RPC beyond that: correlation and meaning belong to package session.
package transport

import (
	"bytes"
	"strings"
	"time"
)

// Dir says which way a frame travelled.
type Dir uint8

const (
	Out   Dir = iota + 1 // client → server
	In                   // server → client
	Local                // made by the transport itself (events)
)

func (d Dir) String() string {
	switch d {
	case Out:
		return "out"
	case In:
		return "in"
	case Local:
		return "local"
	}
	return "?"
}

// Kind says what a frame holds.
type Kind uint8

const (
	Message Kind = iota + 1 // one JSON-RPC message, exact bytes (see LooksJSON)
	Garbage                 // a stdout line that is not JSON; the session goes on
	Stderr                  // one stderr line of a spawned server
	Event                   // the transport's own life: see the Ev* names
)

func (k Kind) String() string {
	switch k {
	case Message:
		return "message"
	case Garbage:
		return "garbage"
	case Stderr:
		return "stderr"
	case Event:
		return "event"
	}
	return "?"
}

// Event names carried in Meta.Event for Kind == Event.
const (
	EvSpawned       = "spawned"        // process started (PID, Detail = argv)
	EvExited        = "exited"         // process ended (ExitCode / Signal)
	EvConnected     = "connected"      // HTTP target configured / first exchange done
	EvSessionID     = "session-id"     // server issued or changed Mcp-Session-Id (Detail)
	EvStreamOpened  = "stream-opened"  // an SSE stream started (Stream, Status)
	EvStreamClosed  = "stream-closed"  // an SSE stream ended cleanly (server closed it)
	EvStreamDropped = "stream-dropped" // an SSE stream broke (read error, cut); Detail says why
	EvStreamResumed = "stream-resumed" // a resume GET with Last-Event-ID was answered
	EvResumeAttempt = "resume-attempt" // a resume GET is about to be tried (Detail: attempt n/m, wait)
	EvPrime         = "sse-prime"      // an SSE event with an id and empty data (priming / polling)
	EvHTTPError     = "http-error"     // a non-2xx answer (Status, Detail = body excerpt)
	EvRedirect      = "redirect"       // a 3xx answer: URL the request, Status, Detail where to and whether followed
	EvSendFailed    = "send-failed"    // a message could not be written (Detail)
	EvLineTooLong   = "line-too-long"  // a stdout line over the limit; its head is kept as Garbage
	EvClosed        = "closed"         // the transport was closed by us
	EvNote          = "note"           // anything else worth showing (Detail)
	EvAuthWait      = "auth-wait"      // waiting for a person to log in (Detail: where); call clocks stand still
	EvAuthDone      = "auth-done"      // the person's login is over (Detail: how it went)
)

// LooksJSON is the stdio transport's test for a Message: the line has
// the shape of a JSON value (an object or an array by its first byte, the
// rare scalars by their whole). Validating every byte is left to the
// session, which reads each frame once in full anyway and files a
// Message that is not JSON as Garbage before it is journaled.
func LooksJSON(b []byte) bool {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return false
	}
	switch c := b[0]; {
	case c == '{' || c == '[':
		return true
	case c == '"':
		return len(b) > 1 && b[len(b)-1] == '"'
	case c == '-' || c >= '0' && c <= '9':
		return len(bytes.Trim(b, "0123456789.eE+-")) == 0
	}
	s := string(b)
	return s == "true" || s == "false" || s == "null"
}

// Frame is one unit that crossed (or happened on) the wire. Data is owned by
// the frame: transports never reuse the slice after handing it over.
type Frame struct {
	Time time.Time
	Dir  Dir
	Kind Kind
	Data []byte
	Meta Meta
}

// Meta is the transport's account of a frame. Zero fields are omitted from the
// journal. Header values are already redacted (see RedactHeader).
type Meta struct {
	Event  string `json:"event,omitempty"`
	Detail string `json:"detail,omitempty"`

	// HTTP
	HTTPMethod string            `json:"httpMethod,omitempty"`
	URL        string            `json:"url,omitempty"`
	Status     int               `json:"status,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	Stream     string            `json:"stream,omitempty"`  // stream key, e.g. "post:7", "get:1"
	Resumes    string            `json:"resumes,omitempty"` // for a resume GET: the stream it continues
	EventID    string            `json:"eventId,omitempty"`
	EventType  string            `json:"eventType,omitempty"`
	Retry      int               `json:"retryMs,omitempty"`

	// stdio
	PID      int    `json:"pid,omitempty"`
	ExitCode *int   `json:"exitCode,omitempty"`
	Signal   string `json:"signal,omitempty"`

	// Via says, in the journal of mcpscope proxy, whose traffic a frame is
	// (the Via* names); empty in every other journal.
	Via string `json:"via,omitempty"`
}

// LogicalStream names the stream a frame continues: a resume GET carries
// the key of the stream it resumes.
func (m *Meta) LogicalStream() string {
	if m.Resumes != "" {
		return m.Resumes
	}
	return m.Stream
}

// PostCall is the key of the request whose own response stream (or a
// resume of it) the frame came on: "7" for "post:7".
func (m *Meta) PostCall() (string, bool) { return strings.CutPrefix(m.LogicalStream(), "post:") }

// Via names (Meta.Via), set by mcpscope proxy.
const (
	ViaHost     = "host"     // the host's own message, or the server's to the host
	ViaViewer   = "viewer"   // sent by a viewer through the proxy, or the server's answer to it: never the host's
	ViaMcpscope = "mcpscope" // made by the proxy itself: a cancel's notification, the error the host gets for it
	ViaDropped  = "dropped"  // a server message kept from the host: a late answer to a call cancelled from mcpscope
)

// Sink receives every frame. It is called from the transport's own goroutines,
// possibly concurrently, and must not block for long: the transport never
// waits on its consumer beyond this call.
type Sink func(Frame)

// Outgoing is one message to send.
type Outgoing struct {
	Data []byte // one JSON-RPC message, no trailing newline
	// Key is the request id as canonical JSON text ("7", "\"abc\"") when Data
	// is a request; "" for notifications and responses. HTTP uses it to name
	// the request's own stream so it can be closed (cancel) or resumed.
	Key string
	// Method is the JSON-RPC method, for transports that mirror it in headers.
	Method string
	// Headers are extra per-message headers (HTTP only; ignored on stdio).
	Headers map[string]string
	// SessionID sends the message in another MCP session than the
	// transport's own (a call rejoined from another process's session);
	// "" = the transport's. HTTP only.
	SessionID string
}

// Transport is a connection to one server.
type Transport interface {
	// Start begins delivering frames to sink (spawns the process for stdio).
	Start(sink Sink) error
	// Send writes one message. It returns quickly and never waits for a
	// response; done is called exactly once, possibly before Send returns,
	// with nil when the message was accepted (written to stdin; HTTP 2xx
	// headers) or an error that says what failed and where.
	Send(m Outgoing, done func(error))
	// Close ends the connection (stdio shutdown ladder; HTTP DELETE). Bounded.
	Close() error
	// Done is closed once the transport can carry no more messages
	// (process gone, or closed by us).
	Done() <-chan struct{}
	// Describe names the target for people ("stdio: node server.js").
	Describe() string
}

// DeadlineCloser is a transport whose Close waits on the network (an HTTP
// DELETE, exchanges still ending): CloseBy waits no later than deadline, so
// a close after the user's limit ran out adds no wait of its own.
type DeadlineCloser interface {
	CloseBy(deadline time.Time) error
}

// closeWait is d, or less when deadline comes first (zero: no deadline).
func closeWait(d time.Duration, deadline time.Time) time.Duration {
	if !deadline.IsZero() {
		d = min(d, time.Until(deadline))
	}
	return max(d, 0)
}

// endWait bounds the wait, at close, for exchanges already cancelled to
// record how they ended: no network wait (their context is done), only
// the frames, so the journal is whole even when no time is left.
const endWait = 250 * time.Millisecond

// sensitiveHeaders are redacted wherever headers are recorded.
var sensitiveHeaders = map[string]bool{
	"authorization":       true,
	"proxy-authorization": true,
	"cookie":              true,
	"cookie2":             true,
	"set-cookie":          true,
	"dpop":                true, // a proof bound to a token
	"x-api-key":           true,
	"api-key":             true,
}

// IsSecretName reports whether a header or environment variable name looks
// like it carries a credential.
func IsSecretName(name string) bool {
	n := strings.ToLower(name)
	if sensitiveHeaders[n] {
		return true
	}
	for _, w := range []string{"token", "secret", "password", "passwd", "apikey", "api_key", "api-key", "auth", "credential", "private"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// RedactHeader returns the value to record for a header: credentials keep
// their scheme ("Bearer") and lose the rest.
func RedactHeader(name, value string) string {
	if !IsSecretName(name) {
		return value
	}
	if i := strings.IndexByte(value, ' '); i > 0 && i < 16 {
		return value[:i] + " [redacted]"
	}
	return "[redacted]"
}
