package proxy

import (
	"bytes"
	"encoding/json"
	"mcpscope/internal/jsonscan"
	"strconv"
)

// A fast look at a JSON-RPC message: the proxy routes every line the server
// writes (an answer to a viewer's request stays away from the host, a late
// answer to a cancelled call is dropped), so it reads only the top-level
// members it needs and never decodes params. It does not validate: a line
// that is not a JSON object is simply not a response.

// envelope is what routing needs of one message. Slices point into the line.
type envelope struct {
	id        []byte // raw JSON of "id"; nil when absent
	method    []byte // raw JSON string of "method"; nil when absent
	params    []byte // raw JSON of "params"
	hasResult bool
	hasError  bool
}

// isResponse reports whether the message answers a request.
func (e *envelope) isResponse() bool {
	return e.method == nil && e.id != nil && (e.hasResult || e.hasError)
}

// isRequest reports whether the message is a request (it has an id).
func (e *envelope) isRequest() bool { return e.method != nil && e.id != nil && !isNull(e.id) }

// methodIs compares the method with name (method names carry no escapes).
func (e *envelope) methodIs(name string) bool {
	return len(e.method) == len(name)+2 && string(e.method[1:len(e.method)-1]) == name
}

// scanEnvelope reads the top-level members of a JSON object. ok is false
// when b does not look like one.
func scanEnvelope(b []byte) (e envelope, ok bool) { return scanMembers(b, true) }

// scanMembers is scanEnvelope; unless all is set, it stops at the first
// method (a string), which is enough to know the message is no response:
// e then holds what came before it, and ok says that much was an object.
func scanMembers(b []byte, all bool) (e envelope, ok bool) {
	ok = members(b, func(k, v []byte) bool {
		switch string(k) {
		case `"id"`:
			e.id = v
		case `"method"`:
			if len(v) > 0 && v[0] == '"' {
				e.method = v
				return all
			}
		case `"params"`:
			e.params = v
		case `"result"`:
			e.hasResult = true
		case `"error"`:
			e.hasError = true
		}
		return true
	})
	return e, ok
}

// member returns the raw value of key (given as raw JSON, `"name"`) in the
// object b.
func member(b []byte, key string) ([]byte, bool) {
	var out []byte
	found := false
	members(b, func(k, v []byte) bool {
		if string(k) == key {
			out, found = v, true
			return false
		}
		return true
	})
	return out, found
}

// members calls fn with each member's raw key (quotes included) and raw
// value, in order, until fn returns false. It returns false when b is not
// a well-formed object as far as it read.
func members(b []byte, fn func(k, v []byte) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true
	}
	for i < len(b) {
		if b[i] != '"' {
			return false
		}
		ke := jsonscan.SkipString(b, i)
		if ke < 0 {
			return false
		}
		k := b[i:ke]
		i = skipSpace(b, ke)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		ve := skipValue(b, i)
		if ve < 0 {
			return false
		}
		if !fn(k, b[i:ve]) {
			return true
		}
		i = skipSpace(b, ve)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return true
		default:
			return false
		}
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return jsonscan.SkipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e := jsonscan.SkipString(b, j)
				if e < 0 {
					return -1
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

func isNull(v []byte) bool { return string(v) == "null" }

// idKey is a request id as a map key, the same for every spelling a peer
// may echo back: strings by their text, numbers by their value.
func idKey(raw []byte) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return "", false
	}
	if raw[0] == '"' {
		if bytes.IndexByte(raw, '\\') < 0 && len(raw) >= 2 {
			return "s" + string(raw[1:len(raw)-1]), true
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return "s" + s, true
	}
	if _, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return "n" + string(raw), true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return "", false
	}
	return "n" + strconv.FormatFloat(f, 'g', -1, 64), true
}

// replaceSpan returns b with b[start:end] replaced by with, in a new slice.
func replaceSpan(b []byte, start, end int, with []byte) []byte {
	out := make([]byte, 0, len(b)-(end-start)+len(with))
	out = append(out, b[:start]...)
	out = append(out, with...)
	return append(out, b[end:]...)
}

// spanOf locates sub (a slice of b) inside b.
func spanOf(b, sub []byte) (int, int) {
	if len(sub) == 0 {
		return -1, -1
	}
	start := cap(b) - cap(sub)
	return start, start + len(sub)
}
