package journal

import (
	"bytes"
	"strconv"
	"sync"
	"sync/atomic"

	"mcpscope/transport"
)

// Bits of fastMeta's seen set: one per field, to send a repeated field
// to encoding/json.
const (
	mEvent = 1 << iota
	mDetail
	mMethod
	mURL
	mStatus
	mHeaders
	mStream
	mResumes
	mEventID
	mEventType
	mRetry
	mPID
	mExitCode
	mSignal
	mVia
)

// fastMeta reads the meta layout mcpscope writes, from sc.i (its '{') to
// just after the object, with the scanner's own member walk; false for
// anything else (m is then partly filled and must be dropped). With
// shared, the headers come redacted (as redactMeta would leave them) and
// may be a map other frames hold too, which no reader writes to.
func fastMeta(sc *scanner, m *transport.Meta, shared bool) bool {
	if !sc.enter() {
		return false
	}
	seen := 0
	for first := true; ; first = false {
		key, done, ok := sc.metaMember(first)
		if !ok {
			return false
		}
		if done {
			return true
		}
		var bit int
		var s *string
		var n *int
		switch string(key) {
		case "event":
			bit, s = mEvent, &m.Event
		case "detail":
			bit, s = mDetail, &m.Detail
		case "httpMethod":
			bit, s = mMethod, &m.HTTPMethod
		case "url":
			bit, s = mURL, &m.URL
		case "status":
			bit, n = mStatus, &m.Status
		case "headers":
			bit = mHeaders
		case "stream":
			bit, s = mStream, &m.Stream
		case "resumes":
			bit, s = mResumes, &m.Resumes
		case "eventId":
			bit, s = mEventID, &m.EventID
		case "eventType":
			bit, s = mEventType, &m.EventType
		case "retryMs":
			bit, n = mRetry, &m.Retry
		case "pid":
			bit, n = mPID, &m.PID
		case "exitCode":
			bit = mExitCode
		case "signal":
			bit, s = mSignal, &m.Signal
		case "via":
			bit, s = mVia, &m.Via
		default:
			return false // unknown, or a name in another case: encoding/json decides
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		switch {
		case bit == mURL:
			ok = sc.metaStringAs(s, metaURL)
		case bit == mStream || bit == mResumes:
			ok = sc.metaStringAs(s, recentWord) // a call's stream: no list names it
		case bit == mEventID:
			ok = sc.metaStringAs(s, newString) // one per event: no use looking it up
		case s != nil:
			ok = sc.metaString(s)
		case n != nil:
			ok = sc.metaInt(n)
		case bit == mExitCode:
			var code int
			if ok = sc.metaInt(&code); ok {
				m.ExitCode = &code
			}
		case shared:
			ok = sc.sharedHeaders(&m.Headers)
		default:
			ok = sc.metaHeaders(&m.Headers)
		}
		if !ok {
			return false
		}
	}
}

// metaString reads a string value (not null) as encoding/json does. The
// words journals repeat on every frame come back without an allocation.
func (sc *scanner) metaString(dst *string) bool {
	return sc.metaStringAs(dst, metaWord)
}

// metaStringAs is metaString with the text of a plain string made by as.
func (sc *scanner) metaStringAs(dst *string, as func([]byte) string) bool {
	if sc.peek() != '"' {
		return false
	}
	start := sc.i
	plain, ok := sc.str()
	if !ok {
		return false
	}
	if plain {
		*dst = as(sc.b[start+1 : sc.i-1])
		return true
	}
	*dst = unquote(sc.b[start:sc.i], plain)
	return true
}

func newString(b []byte) string { return string(b) }

// metaMember is the scanner's member for a meta object, with the layout
// mcpscope writes (no space, a key without escapes) read in place and
// anything else left to member. A key it returns is its bytes as they
// stand, which is its text when it names a field.
func (sc *scanner) metaMember(first bool) (key []byte, done, ok bool) {
	i := sc.i
	if !first {
		if i >= len(sc.b) || sc.b[i] != ',' {
			return sc.member(first)
		}
		i++
	}
	if i < len(sc.b) && sc.b[i] == '"' {
		// One byte loop, not two IndexByte calls: keys are a few bytes,
		// shorter than a call's setup.
		for j, end := i+1, min(len(sc.b), i+32); j < end; j++ {
			if c := sc.b[j]; c == '"' {
				if j+1 < len(sc.b) && sc.b[j+1] == ':' {
					sc.i = j + 2
					return sc.b[i+1 : j], false, true
				}
				break
			} else if c == '\\' {
				break
			}
		}
	}
	return sc.member(first)
}

// lastMetaURL is the URL the last meta read held: a session's frames all
// name the same one, so it is one string, not one per frame.
var lastMetaURL atomic.Pointer[string]

// metaWord is b as a string: one of the words journals repeat (word), the
// session's URL shared, anything else a copy.
func metaWord(b []byte) string {
	if len(b) > 8 && (string(b[:7]) == "http://" || string(b[:8]) == "https://") {
		return metaURL(b)
	}
	return word(b)
}

// metaURL is b, a URL, as a string: the last one read when it is the same.
func metaURL(b []byte) string {
	if u := lastMetaURL.Load(); u != nil && *u == string(b) {
		return *u
	}
	u := string(b)
	lastMetaURL.Store(&u)
	return u
}

// redactedURL is transport.RedactURL(u), worked out once for the URL a
// journal's frames repeat.
func redactedURL(u string) string {
	if r := lastRedactedURL.Load(); r != nil && r[0] == u {
		return r[1]
	}
	r := &[2]string{u, transport.RedactURL(u)}
	lastRedactedURL.Store(r)
	return r[1]
}

var lastRedactedURL atomic.Pointer[[2]string]

// word is b as a string, without an allocation when it is one of the words
// every journal repeats: the JSON-RPC version, MCP's methods, HTTP methods,
// header names and values.
func word(b []byte) string {
	switch string(b) { // no allocation: the compiler compares in place
	case "2.0":
		return "2.0"
	case "POST":
		return "POST"
	case "GET":
		return "GET"
	case "DELETE":
		return "DELETE"
	case "message":
		return "message"
	case "Content-Type":
		return "Content-Type"
	case "Accept":
		return "Accept"
	case "Authorization":
		return "Authorization"
	case "Mcp-Session-Id":
		return "Mcp-Session-Id"
	case "Mcp-Protocol-Version":
		return "Mcp-Protocol-Version"
	case "application/json":
		return "application/json"
	case "text/event-stream":
		return "text/event-stream"
	case "application/json, text/event-stream":
		return "application/json, text/event-stream"
	case "Bearer [redacted]":
		return "Bearer [redacted]"
	case "initialize":
		return "initialize"
	case "ping":
		return "ping"
	case "server/discover":
		return "server/discover"
	case "tools/call":
		return "tools/call"
	case "tools/list":
		return "tools/list"
	case "resources/list":
		return "resources/list"
	case "resources/read":
		return "resources/read"
	case "resources/templates/list":
		return "resources/templates/list"
	case "resources/subscribe":
		return "resources/subscribe"
	case "prompts/list":
		return "prompts/list"
	case "prompts/get":
		return "prompts/get"
	case "completion/complete":
		return "completion/complete"
	case "logging/setLevel":
		return "logging/setLevel"
	case "tasks/get":
		return "tasks/get"
	case "tasks/result":
		return "tasks/result"
	case "subscriptions/listen":
		return "subscriptions/listen"
	case "notifications/initialized":
		return "notifications/initialized"
	case "notifications/progress":
		return "notifications/progress"
	case "notifications/message":
		return "notifications/message"
	case "notifications/cancelled":
		return "notifications/cancelled"
	case "notifications/resources/updated":
		return "notifications/resources/updated"
	case "notifications/tasks/status":
		return "notifications/tasks/status"
	case "notifications/tools/list_changed":
		return "notifications/tools/list_changed"
	}
	return recentWord(b)
}

// recentWords holds the short strings read last, by a hash of their bytes: a
// journal repeats many that no list names (a call's stream on each of its
// frames, tool names, progress messages), and each found here is one
// allocation fewer for the collector to chase.
var recentWords struct {
	sync.Mutex
	s [512]string
}

// recentWord is b as a string, the one read last when it is the same.
func recentWord(b []byte) string {
	if len(b) == 0 || len(b) > 48 {
		return string(b)
	}
	h := uint32(2166136261) // FNV-1a
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	slot := &recentWords.s[h%uint32(len(recentWords.s))]
	recentWords.Lock()
	if *slot == string(b) {
		s := *slot
		recentWords.Unlock()
		return s
	}
	s := string(b)
	*slot = s
	recentWords.Unlock()
	return s
}

// metaInt reads an integer value: digits with an optional minus that fit
// an int (a fraction, an exponent or null: false).
func (sc *scanner) metaInt(dst *int) bool {
	start := sc.i
	if sc.peek() == '-' {
		sc.i++
	}
	digits := sc.i
	for sc.i < len(sc.b) && sc.b[sc.i] >= '0' && sc.b[sc.i] <= '9' {
		sc.i++
	}
	if sc.i == digits || (sc.b[digits] == '0' && sc.i-digits > 1) {
		return false
	}
	if c := sc.peek(); c == '.' || c == 'e' || c == 'E' {
		return false
	}
	if sc.i-digits <= strconv.IntSize/4 {
		// Fits an int whatever its digits: added up here, not parsed
		// from a string (a pid on every stdio frame).
		v := 0
		for _, c := range sc.b[digits:sc.i] {
			v = v*10 + int(c-'0')
		}
		if digits > start {
			v = -v
		}
		*dst = v
		return true
	}
	v, err := strconv.Atoi(string(sc.b[start:sc.i]))
	if err != nil {
		return false
	}
	*dst = v
	return true
}

// metaHeaders reads a flat object of strings into a new map.
func (sc *scanner) metaHeaders(dst *map[string]string) bool {
	if !sc.enter() {
		return false
	}
	h := make(map[string]string, 4)
	*dst = h
	for first := true; ; first = false {
		key, done, ok := sc.member(first)
		if !ok {
			return false
		}
		if done {
			return true
		}
		var v string
		if !sc.metaString(&v) {
			return false
		}
		h[metaWord(key)] = v
	}
}

// headerSet is a headers object as it stands in a journal and the map it
// reads as, redacted.
type headerSet struct {
	raw []byte
	h   map[string]string
}

// headerSets are the headers objects read last: an HTTP journal repeats
// a handful on every frame (the same Accept, Content-Type and session id),
// so one read there is one comparison, not a map built and redacted again.
var (
	headerSets    [8]atomic.Pointer[headerSet]
	headerSetNext atomic.Uint32
)

// maxHeaderSet bounds the headers objects kept.
const maxHeaderSet = 1024

// sharedHeaders reads a flat object of strings, redacted, into a map it
// may share with other frames: one read before when the bytes are the
// same. A valid object that starts where a kept one's bytes stand ends
// where they end, so comparing them is the whole read.
func (sc *scanner) sharedHeaders(dst *map[string]string) bool {
	rest := sc.b[sc.i:]
	for i := range headerSets {
		if s := headerSets[i].Load(); s != nil && len(rest) >= len(s.raw) && string(rest[:len(s.raw)]) == string(s.raw) {
			sc.i += len(s.raw)
			*dst = s.h
			return true
		}
	}
	start := sc.i
	if !sc.metaHeaders(dst) {
		return false
	}
	redactHeaders(*dst)
	if n := sc.i - start; n <= maxHeaderSet {
		s := &headerSet{raw: bytes.Clone(sc.b[start:sc.i]), h: *dst}
		headerSets[headerSetNext.Add(1)%uint32(len(headerSets))].Store(s)
	}
	return true
}
