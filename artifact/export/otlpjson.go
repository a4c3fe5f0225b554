package export

import (
	"encoding/json"
	"math"
	"strconv"

	"mcpscope/internal/jsonscan"
)

// spanWriter appends a span's JSON and notes whether every string in it
// was plain ASCII (no DEL, nothing ≥ 0x80): then the JSON is already
// what termsafe.JSON returns, and the writer need not check it again.
type spanWriter struct {
	buf    []byte
	plain  bool
	finite bool
}

// str appends s quoted as encoding/json does.
func (w *spanWriter) str(s string) {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if !plainWord(uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56) {
			break
		}
	}
	for ; i < len(s); i++ {
		if !otlpPlain[s[i]] {
			w.plain = w.plain && asciiNoDEL(s[i:])
			w.buf = jsonscan.AppendMarshalString(w.buf, s)
			return
		}
	}
	w.buf = append(w.buf, '"')
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '"')
}

// plainWord reports whether the 8 bytes of w (little-endian) are all ones otlpPlain
// allows, a word at a time: false may be wrong (the bytes are then looked
// at one by one), true never is.
func plainWord(w uint64) bool {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	// A byte's high bit is set in (x-ones)&^x when that byte of x may be
	// 0 (always when it is); x is w xor a byte not allowed, with the one
	// bit masked off in which '"' and '&', or '<' and '>', differ.
	qa, lg, b, del := w&^(4*ones)^('"'*ones), w&^(2*ones)^('<'*ones), w^('\\'*ones), w^(0x7f*ones)
	bad := w | ^(w&^high + 0x60*ones) // ≥ 0x80, or < 0x20 (+0x60 carries into the high bit from 0x20 up)
	bad |= (qa-ones)&^qa | (lg-ones)&^lg | (b-ones)&^b | (del-ones)&^del
	return bad&high == 0
}

func asciiNoDEL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// otlpPlain: the bytes that jsonscan.AppendMarshalString writes as they are and
// termsafe leaves alone.
var otlpPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = jsonscan.MarshalSafe(byte(c))
	}
	return t
}()

// appendSpanJSONPlain appends s as json.Marshal writes it, byte for byte
// (a test compares the two), without its reflection: writing spans was a
// fifth of export --format otlp's CPU. A double that JSON cannot hold
// (NaN, ±Inf) is left to json.Marshal, which fails on it as before. It
// also says whether the JSON it appended holds only plain ASCII.
func appendSpanJSONPlain(buf []byte, s *otlpSpan) ([]byte, bool, error) {
	start := len(buf)
	w := spanWriter{buf: buf, plain: true, finite: true}
	w.span(s)
	if !w.finite {
		b, err := json.Marshal(s)
		return append(w.buf[:start], b...), false, err
	}
	return w.buf, w.plain, nil
}

func (w *spanWriter) span(s *otlpSpan) {
	w.buf = append(w.buf, `{"traceId":`...)
	w.str(s.TraceID)
	w.buf = append(w.buf, `,"spanId":`...)
	w.str(s.SpanID)
	if s.TraceState != "" {
		w.buf = append(w.buf, `,"traceState":`...)
		w.str(s.TraceState)
	}
	if s.ParentSpanID != "" {
		w.buf = append(w.buf, `,"parentSpanId":`...)
		w.str(s.ParentSpanID)
	}
	w.buf = append(w.buf, `,"name":`...)
	w.str(s.Name)
	w.buf = append(w.buf, `,"kind":`...)
	w.buf = strconv.AppendInt(w.buf, int64(s.Kind), 10)
	w.buf = append(w.buf, `,"startTimeUnixNano":`...)
	w.buf = appendNanos(w.buf, s.StartTimeUnixNano)
	w.buf = append(w.buf, `,"endTimeUnixNano":`...)
	w.buf = appendNanos(w.buf, s.EndTimeUnixNano)
	w.buf = append(w.buf, `,"attributes":`...)
	w.kvs(s.Attributes)
	if len(s.Events) > 0 {
		w.buf = append(w.buf, `,"events":[`...)
		for i := range s.Events {
			e := &s.Events[i]
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.buf = append(w.buf, `{"timeUnixNano":`...)
			w.buf = appendNanos(w.buf, e.TimeUnixNano)
			w.buf = append(w.buf, `,"name":`...)
			w.str(e.Name)
			if len(e.Attributes) > 0 {
				w.buf = append(w.buf, `,"attributes":`...)
				w.kvs(e.Attributes)
			}
			w.buf = append(w.buf, '}')
		}
		w.buf = append(w.buf, ']')
	}
	if s.DroppedEventsCount != 0 {
		w.buf = append(w.buf, `,"droppedEventsCount":`...)
		w.buf = strconv.AppendUint(w.buf, uint64(s.DroppedEventsCount), 10)
	}
	if len(s.Links) > 0 {
		w.buf = append(w.buf, `,"links":[`...)
		for i := range s.Links {
			l := &s.Links[i]
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.buf = append(w.buf, `{"traceId":`...)
			w.str(l.TraceID)
			w.buf = append(w.buf, `,"spanId":`...)
			w.str(l.SpanID)
			if len(l.Attributes) > 0 {
				w.buf = append(w.buf, `,"attributes":`...)
				w.kvs(l.Attributes)
			}
			w.buf = append(w.buf, '}')
		}
		w.buf = append(w.buf, ']')
	}
	w.buf = append(w.buf, `,"status":{`...)
	if s.Status.Message != "" {
		w.buf = append(w.buf, `"message":`...)
		w.str(s.Status.Message)
	}
	if s.Status.Code != 0 {
		if s.Status.Message != "" {
			w.buf = append(w.buf, ',')
		}
		w.buf = append(w.buf, `"code":`...)
		w.buf = strconv.AppendInt(w.buf, int64(s.Status.Code), 10)
	}
	w.buf = append(w.buf, '}', '}')
}

// kvs appends attributes as json.Marshal does (nil is null), and notes a
// double JSON cannot hold (json.Marshal fails on it).
func (w *spanWriter) kvs(kvs []otlpKV) {
	if kvs == nil {
		w.buf = append(w.buf, "null"...)
		return
	}
	w.buf = append(w.buf, '[')
	for i := range kvs {
		kv := &kvs[i]
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.buf = append(w.buf, `{"key":`...)
		w.str(kv.Key)
		w.buf = append(w.buf, `,"value":{`...)
		v := &kv.Value
		sep := false
		if v.StringValue != nil {
			w.buf = append(w.buf, `"stringValue":`...)
			w.str(*v.StringValue)
			sep = true
		}
		if v.IntValue != nil {
			if sep {
				w.buf = append(w.buf, ',')
			}
			w.buf = append(w.buf, `"intValue":`...)
			w.str(*v.IntValue)
			sep = true
		}
		if v.DoubleValue != nil {
			if sep {
				w.buf = append(w.buf, ',')
			}
			w.buf = append(w.buf, `"doubleValue":`...)
			if d := *v.DoubleValue; math.IsNaN(d) || math.IsInf(d, 0) {
				w.finite = false
			} else {
				w.buf = appendMarshalFloat(w.buf, d)
			}
			sep = true
		}
		if v.BoolValue != nil {
			if sep {
				w.buf = append(w.buf, ',')
			}
			w.buf = append(w.buf, `"boolValue":`...)
			w.buf = strconv.AppendBool(w.buf, *v.BoolValue)
		}
		w.buf = append(w.buf, '}', '}')
	}
	w.buf = append(w.buf, ']')
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
