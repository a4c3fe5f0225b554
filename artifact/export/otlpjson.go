package export

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// appendSpanJSON appends s as json.Marshal writes it, byte for byte (a
// test compares the two), without its reflection: writing spans was a
// fifth of export --format otlp's CPU. A double that JSON cannot hold
// (NaN, ±Inf) is left to json.Marshal, which fails on it as before.
func appendSpanJSON(buf []byte, s *otlpSpan) ([]byte, error) {
	if !finiteSpan(s) {
		b, err := json.Marshal(s)
		return append(buf, b...), err
	}
	buf = append(buf, `{"traceId":`...)
	buf = appendMarshalString(buf, s.TraceID)
	buf = append(buf, `,"spanId":`...)
	buf = appendMarshalString(buf, s.SpanID)
	if s.TraceState != "" {
		buf = append(buf, `,"traceState":`...)
		buf = appendMarshalString(buf, s.TraceState)
	}
	if s.ParentSpanID != "" {
		buf = append(buf, `,"parentSpanId":`...)
		buf = appendMarshalString(buf, s.ParentSpanID)
	}
	buf = append(buf, `,"name":`...)
	buf = appendMarshalString(buf, s.Name)
	buf = append(buf, `,"kind":`...)
	buf = strconv.AppendInt(buf, int64(s.Kind), 10)
	buf = append(buf, `,"startTimeUnixNano":`...)
	buf = appendNanos(buf, s.StartTimeUnixNano)
	buf = append(buf, `,"endTimeUnixNano":`...)
	buf = appendNanos(buf, s.EndTimeUnixNano)
	buf = append(buf, `,"attributes":`...)
	buf = appendKVs(buf, s.Attributes)
	if len(s.Events) > 0 {
		buf = append(buf, `,"events":[`...)
		for i := range s.Events {
			e := &s.Events[i]
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, `{"timeUnixNano":`...)
			buf = appendNanos(buf, e.TimeUnixNano)
			buf = append(buf, `,"name":`...)
			buf = appendMarshalString(buf, e.Name)
			if len(e.Attributes) > 0 {
				buf = append(buf, `,"attributes":`...)
				buf = appendKVs(buf, e.Attributes)
			}
			buf = append(buf, '}')
		}
		buf = append(buf, ']')
	}
	if s.DroppedEventsCount != 0 {
		buf = append(buf, `,"droppedEventsCount":`...)
		buf = strconv.AppendUint(buf, uint64(s.DroppedEventsCount), 10)
	}
	if len(s.Links) > 0 {
		buf = append(buf, `,"links":[`...)
		for i := range s.Links {
			l := &s.Links[i]
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, `{"traceId":`...)
			buf = appendMarshalString(buf, l.TraceID)
			buf = append(buf, `,"spanId":`...)
			buf = appendMarshalString(buf, l.SpanID)
			if len(l.Attributes) > 0 {
				buf = append(buf, `,"attributes":`...)
				buf = appendKVs(buf, l.Attributes)
			}
			buf = append(buf, '}')
		}
		buf = append(buf, ']')
	}
	buf = append(buf, `,"status":{`...)
	if s.Status.Message != "" {
		buf = append(buf, `"message":`...)
		buf = appendMarshalString(buf, s.Status.Message)
	}
	if s.Status.Code != 0 {
		if s.Status.Message != "" {
			buf = append(buf, ',')
		}
		buf = append(buf, `"code":`...)
		buf = strconv.AppendInt(buf, int64(s.Status.Code), 10)
	}
	return append(buf, '}', '}'), nil
}

// finiteSpan reports whether every double in s is one JSON can hold.
func finiteSpan(s *otlpSpan) bool {
	ok := func(kvs []otlpKV) bool {
		for _, kv := range kvs {
			if d := kv.Value.DoubleValue; d != nil && (math.IsNaN(*d) || math.IsInf(*d, 0)) {
				return false
			}
		}
		return true
	}
	if !ok(s.Attributes) {
		return false
	}
	for _, e := range s.Events {
		if !ok(e.Attributes) {
			return false
		}
	}
	for _, l := range s.Links {
		if !ok(l.Attributes) {
			return false
		}
	}
	return true
}

// appendKVs appends attributes as json.Marshal does (nil is null).
func appendKVs(buf []byte, kvs []otlpKV) []byte {
	if kvs == nil {
		return append(buf, "null"...)
	}
	buf = append(buf, '[')
	for i := range kvs {
		kv := &kvs[i]
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"key":`...)
		buf = appendMarshalString(buf, kv.Key)
		buf = append(buf, `,"value":{`...)
		v := &kv.Value
		sep := false
		field := func(name string) {
			if sep {
				buf = append(buf, ',')
			}
			sep = true
			buf = append(buf, name...)
		}
		if v.StringValue != nil {
			field(`"stringValue":`)
			buf = appendMarshalString(buf, *v.StringValue)
		}
		if v.IntValue != nil {
			field(`"intValue":`)
			buf = appendMarshalString(buf, *v.IntValue)
		}
		if v.DoubleValue != nil {
			field(`"doubleValue":`)
			buf = appendMarshalFloat(buf, *v.DoubleValue)
		}
		if v.BoolValue != nil {
			field(`"boolValue":`)
			buf = strconv.AppendBool(buf, *v.BoolValue)
		}
		buf = append(buf, '}', '}')
	}
	return append(buf, ']')
}

func appendNanos(buf []byte, n unixNano) []byte {
	buf = append(buf, '"')
	buf = strconv.AppendInt(buf, int64(n), 10)
	return append(buf, '"')
}

// appendMarshalFloat writes a finite float64 as encoding/json does.
func appendMarshalFloat(buf []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(buf)
	buf = strconv.AppendFloat(buf, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9
		if n := len(buf) - start; n >= 4 && buf[len(buf)-4] == 'e' && buf[len(buf)-3] == '-' && buf[len(buf)-2] == '0' {
			buf[len(buf)-2] = buf[len(buf)-1]
			buf = buf[:len(buf)-1]
		}
	}
	return buf
}

// appendMarshalString quotes s as encoding/json does, HTML characters
// escaped and invalid UTF-8 as U+FFFD.
func appendMarshalString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if marshalSafe[b] {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch b {
			case '\\', '"':
				buf = append(buf, '\\', b)
			case '\b':
				buf = append(buf, '\\', 'b')
			case '\f':
				buf = append(buf, '\\', 'f')
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// marshalSafe: the ASCII bytes encoding/json writes as they are (with
// HTML escaping, as json.Marshal does).
var marshalSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()
