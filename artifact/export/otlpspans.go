package export

import (
	"encoding/hex"
	"strconv"
	"time"
	"unicode/utf8"

	"mcpscope/artifact/scan"
	"mcpscope/internal/pbwire"
	"mcpscope/journal"
)

// Spans builds a session's spans while it runs, frame by frame, with the
// tracer behind export --format otlp, and hands each one over as protobuf
// as soon as it is done: the live exporter's half of the one code path,
// so that what a collector receives live is what the export of the same
// journal writes.
type Spans struct {
	t       *tracer
	version string
	header  journal.Header
}

// NewSpans starts the spans of the session journaled under h; emit gets
// each span as it ends, encoded as OTLP's Span message (on the caller's
// goroutine: Frame, Flush, Finish).
func NewSpans(h journal.Header, version string, emit func(span []byte)) *Spans {
	return &Spans{version: version, header: h, t: newTracer(h, nil, func(s *otlpSpan) error {
		emit(s.appendProto(nil))
		return nil
	})}
}

// Frame reads the next frame of the session.
func (s *Spans) Frame(fr *scan.Frame) { _ = s.t.frame(fr) }

// Flush hands over the ended spans whose wait for late frames was over by
// now (a session that goes quiet still gets its last spans out).
func (s *Spans) Flush(now time.Time) { _ = s.t.flushClosing(now, false) }

// Finish hands over every span left: the session is over, and a call
// still unanswered ends with its last frame.
func (s *Spans) Finish() { _ = s.t.finish() }

// Resource is what made the spans, mcpscope and the session's journal,
// encoded as OTLP's Resource message.
func (s *Spans) Resource() []byte {
	return appendAttrs(nil, 1, resourceAttrs(s.header, s.version))
}

// Scope is the instrumentation scope the spans belong to, encoded as
// OTLP's InstrumentationScope message.
func (s *Spans) Scope() []byte {
	b := appendString(nil, 1, "mcpscope")
	return appendString(b, 2, s.version)
}

// The protobuf encoding below is written by hand (pbwire says why) and
// gives the bytes proto.Marshal gives for the same message (a test holds
// it to that): fields in number order, proto3's zero values left out
// except a oneof's, every string UTF-8 (utf8Text; the tracestate is ASCII
// by validTraceState).

// appendProto appends the span as OTLP's Span message.
func (s *otlpSpan) appendProto(b []byte) []byte {
	b = appendBytes(b, 1, hexID(s.TraceID))
	b = appendBytes(b, 2, hexID(s.SpanID))
	b = appendString(b, 3, s.TraceState)
	b = appendBytes(b, 4, hexID(s.ParentSpanID))
	b = appendString(b, 5, utf8Text(s.Name))
	b = appendEnum(b, 6, s.Kind)
	b = appendFixed64(b, 7, uint64(s.StartTimeUnixNano))
	b = appendFixed64(b, 8, uint64(s.EndTimeUnixNano))
	b = appendAttrs(b, 9, s.Attributes)
	for _, e := range s.Events {
		m := appendFixed64(nil, 1, uint64(e.TimeUnixNano))
		m = appendString(m, 2, utf8Text(e.Name))
		b = pbwire.AppendMessage(b, 11, appendAttrs(m, 3, e.Attributes))
	}
	b = appendUint(b, 12, uint64(s.DroppedEventsCount))
	for _, l := range s.Links {
		m := appendBytes(nil, 1, hexID(l.TraceID))
		m = appendBytes(m, 2, hexID(l.SpanID))
		b = pbwire.AppendMessage(b, 13, appendAttrs(m, 4, l.Attributes))
	}
	st := appendString(nil, 2, utf8Text(s.Status.Message))
	return pbwire.AppendMessage(b, 15, appendEnum(st, 3, s.Status.Code))
}

// appendAttrs appends each of kvs as a KeyValue, field num.
func appendAttrs(b []byte, num int32, kvs []otlpKV) []byte {
	for _, kv := range kvs {
		var v []byte // AnyValue: a oneof, written even when zero
		switch x := kv.Value; {
		case x.StringValue != nil:
			v = pbwire.AppendString(pbwire.AppendTag(v, 1, pbwire.BytesType), utf8Text(*x.StringValue))
		case x.IntValue != nil:
			n, _ := strconv.ParseInt(*x.IntValue, 10, 64)
			v = pbwire.AppendVarint(pbwire.AppendTag(v, 3, pbwire.VarintType), uint64(n))
		case x.DoubleValue != nil:
			v = pbwire.AppendDouble(pbwire.AppendTag(v, 4, pbwire.Fixed64Type), *x.DoubleValue)
		case x.BoolValue != nil:
			var t uint64
			if *x.BoolValue {
				t = 1
			}
			v = pbwire.AppendVarint(pbwire.AppendTag(v, 2, pbwire.VarintType), t)
		}
		m := appendString(nil, 1, utf8Text(kv.Key))
		b = pbwire.AppendMessage(b, num, pbwire.AppendMessage(m, 2, v))
	}
	return b
}

func appendBytes(b []byte, num int32, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	return pbwire.AppendBytes(pbwire.AppendTag(b, num, pbwire.BytesType), v)
}

func appendString(b []byte, num int32, v string) []byte {
	if v == "" {
		return b
	}
	return pbwire.AppendString(pbwire.AppendTag(b, num, pbwire.BytesType), v)
}

func appendFixed64(b []byte, num int32, v uint64) []byte {
	if v == 0 {
		return b
	}
	return pbwire.AppendFixed64(pbwire.AppendTag(b, num, pbwire.Fixed64Type), v)
}

// appendUint appends an unsigned varint field (left out when 0).
func appendUint(b []byte, num int32, v uint64) []byte {
	if v == 0 {
		return b
	}
	return pbwire.AppendVarint(pbwire.AppendTag(b, num, pbwire.VarintType), v)
}

// appendEnum appends an enum: an int32, negative ones sign-extended.
func appendEnum(b []byte, num int32, v int) []byte {
	return appendUint(b, num, uint64(int64(int32(v))))
}

func hexID(s string) []byte {
	if s == "" {
		return nil
	}
	b, _ := hex.DecodeString(s)
	return b
}

// utf8Text is s as the JSON export writes it: each byte that is not UTF-8
// becomes U+FFFD (protobuf refuses strings that are not UTF-8).
func utf8Text(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}
