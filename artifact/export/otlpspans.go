package export

import (
	"encoding/hex"
	"strconv"
	"time"
	"unicode/utf8"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"mcpscope/artifact/scan"
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
// each span as it ends (on the caller's goroutine: Frame, Flush, Finish).
func NewSpans(h journal.Header, version string, emit func(*tracepb.Span)) *Spans {
	return &Spans{version: version, header: h, t: newTracer(h, nil, func(s *otlpSpan) error {
		emit(s.proto())
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

// Resource is what made the spans: mcpscope, and the session's journal.
func (s *Spans) Resource() *resourcepb.Resource {
	return &resourcepb.Resource{Attributes: protoAttrs(resourceAttrs(s.header, s.version))}
}

// Scope is the instrumentation scope the spans belong to.
func (s *Spans) Scope() *commonpb.InstrumentationScope {
	return &commonpb.InstrumentationScope{Name: "mcpscope", Version: s.version}
}

// proto is the span as OTLP's protobuf has it.
func (s *otlpSpan) proto() *tracepb.Span {
	p := &tracepb.Span{
		TraceId: hexID(s.TraceID), SpanId: hexID(s.SpanID), ParentSpanId: hexID(s.ParentSpanID),
		TraceState: s.TraceState, Name: utf8Text(s.Name), Kind: tracepb.Span_SpanKind(s.Kind),
		StartTimeUnixNano: uint64(s.StartTimeUnixNano), EndTimeUnixNano: uint64(s.EndTimeUnixNano),
		Attributes: protoAttrs(s.Attributes), DroppedEventsCount: s.DroppedEventsCount,
		Status: &tracepb.Status{Message: utf8Text(s.Status.Message), Code: tracepb.Status_StatusCode(s.Status.Code)},
	}
	for _, e := range s.Events {
		p.Events = append(p.Events, &tracepb.Span_Event{TimeUnixNano: uint64(e.TimeUnixNano), Name: utf8Text(e.Name), Attributes: protoAttrs(e.Attributes)})
	}
	for _, l := range s.Links {
		p.Links = append(p.Links, &tracepb.Span_Link{TraceId: hexID(l.TraceID), SpanId: hexID(l.SpanID), Attributes: protoAttrs(l.Attributes)})
	}
	return p
}

func protoAttrs(kvs []otlpKV) []*commonpb.KeyValue {
	out := make([]*commonpb.KeyValue, 0, len(kvs))
	for _, kv := range kvs {
		v := &commonpb.AnyValue{}
		switch x := kv.Value; {
		case x.StringValue != nil:
			v.Value = &commonpb.AnyValue_StringValue{StringValue: utf8Text(*x.StringValue)}
		case x.IntValue != nil:
			n, _ := strconv.ParseInt(*x.IntValue, 10, 64)
			v.Value = &commonpb.AnyValue_IntValue{IntValue: n}
		case x.DoubleValue != nil:
			v.Value = &commonpb.AnyValue_DoubleValue{DoubleValue: *x.DoubleValue}
		case x.BoolValue != nil:
			v.Value = &commonpb.AnyValue_BoolValue{BoolValue: *x.BoolValue}
		}
		out = append(out, &commonpb.KeyValue{Key: utf8Text(kv.Key), Value: v})
	}
	return out
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
