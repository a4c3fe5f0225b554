package mock

import (
	"bytes"
	"encoding/json"
)

// member finds the value of key in the JSON object raw: its byte span.
func member(raw []byte, key string) (start, end int, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, 0, false
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return 0, 0, false
		}
		k, _ := kt.(string)
		off := int(dec.InputOffset())
		for off < len(raw) && (raw[off] == ':' || raw[off] == ' ' || raw[off] == '\t' || raw[off] == '\n' || raw[off] == '\r') {
			off++
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return 0, 0, false
		}
		if k == key {
			return off, int(dec.InputOffset()), true
		}
	}
	return 0, 0, false
}

// splice returns raw with the value at path (object keys, outermost first)
// replaced by value, every other byte as it was: the recorded message with
// the client's id or progress token in it. ok is false when the path is
// not there.
func splice(raw []byte, value []byte, path ...string) ([]byte, bool) {
	lo, hi := 0, len(raw)
	for _, k := range path {
		s, e, ok := member(raw[lo:hi], k)
		if !ok {
			return raw, false
		}
		lo, hi = lo+s, lo+e
	}
	out := make([]byte, 0, len(raw)-(hi-lo)+len(value))
	out = append(out, raw[:lo]...)
	out = append(out, value...)
	return append(out, raw[hi:]...), true
}

// withResultMeta returns the response raw with key: value added to its
// result's _meta (made when there is none), every other byte as it was; an
// error response, or a result that is no object, is returned unchanged.
func withResultMeta(raw []byte, key string, value json.RawMessage) []byte {
	rs, re, ok := member(raw, "result")
	if !ok || re <= rs || raw[rs] != '{' {
		return raw
	}
	k, _ := json.Marshal(key)
	entry := append(append(k, ':'), value...)
	at, insert := rs+1, []byte(nil) // just inside the object that gets the entry
	if ms, me, ok := member(raw[rs:re], "_meta"); ok && raw[rs+ms] == '{' {
		at = rs + ms + 1
		insert = entry
		if !emptyObject(raw[rs+ms : rs+me]) {
			insert = append(insert, ',')
		}
	} else {
		insert = append(append([]byte(`"_meta":{`), entry...), '}')
		if !emptyObject(raw[rs:re]) {
			insert = append(insert, ',')
		}
	}
	out := make([]byte, 0, len(raw)+len(insert))
	out = append(out, raw[:at]...)
	out = append(out, insert...)
	return append(out, raw[at:]...)
}

// emptyObject reports whether raw is {} (blanks aside).
func emptyObject(raw []byte) bool {
	return len(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimPrefix(bytes.TrimSpace(raw), []byte("{")), []byte("}")))) == 0
}
