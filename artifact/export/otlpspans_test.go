package export

import (
	"bytes"
	"math"
	"strconv"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"mcpscope/journal"
)

// TestSpanProtoMatchesMarshal: the hand-written protobuf of a span, a
// resource and a scope is the bytes proto.Marshal gives for the same
// messages built with OTLP's generated types, as the live exporter built
// them before it wrote them by hand.
func TestSpanProtoMatchesMarshal(t *testing.T) {
	hostile := "a\"b\\c\b\n\x01\x7f\xff\xc3 é 😀"
	spans := []otlpSpan{
		{},
		{TraceID: "0af7651916cd43dd8448eb211c80319c", SpanID: "b7ad6b7169203331", ParentSpanID: "00f067aa0ba902b7", TraceState: "k=v",
			Name: "tools/call fetch", Kind: spanKindClient, StartTimeUnixNano: 1, EndTimeUnixNano: -5, Attributes: []otlpKV{}},
		{TraceID: "0af7", SpanID: "zz", Name: hostile, Kind: -1, StartTimeUnixNano: math.MaxInt64, EndTimeUnixNano: math.MinInt64,
			Attributes: []otlpKV{str(hostile, hostile), str("", ""), integer("n", -42), integer("z", 0), double("d", 0), double("e", 1e21),
				double("nan", math.NaN()), double("inf", math.Inf(-1)), {Key: "b", Value: otlpValue{BoolValue: new(bool)}},
				{Key: "t", Value: otlpValue{BoolValue: &[]bool{true}[0]}}, {Key: "empty"}, {Key: "bad int", Value: otlpValue{IntValue: &[]string{"x"}[0]}},
				{Key: "all", Value: otlpValue{StringValue: new(string), IntValue: new(string), DoubleValue: new(float64), BoolValue: new(bool)}}},
			Events:             []otlpEvent{{TimeUnixNano: 7, Name: hostile}, {Name: "x", Attributes: []otlpKV{double("p", 0.25)}}, {}},
			DroppedEventsCount: 4294967295,
			Links:              []otlpLink{{TraceID: "0af7651916cd43dd8448eb211c80319c", SpanID: hostile}, {Attributes: []otlpKV{str("mcpscope.link", "continues")}}},
			Status:             otlpStatus{Message: hostile, Code: statusCodeError}},
		{Status: otlpStatus{Code: statusCodeError}, Events: []otlpEvent{}, Links: []otlpLink{}},
		{Status: otlpStatus{Message: "only words", Code: -3}, Kind: 1 << 40},
	}
	for i := range spans {
		want, err := proto.Marshal(generatedSpan(&spans[i]))
		if err != nil {
			t.Fatal(err)
		}
		if got := spans[i].appendProto(nil); !bytes.Equal(got, want) {
			t.Errorf("span %d:\n got %x\nwant %x", i, got, want)
		}
	}
	s := NewSpans(journal.Header{Format: journal.Format, Started: time.Unix(1700000000, 5), Target: hostile, PID: 42}, "1.2.3", func([]byte) {})
	want, err := proto.Marshal(&resourcepb.Resource{Attributes: generatedAttrs(resourceAttrs(s.header, s.version))})
	if err != nil || !bytes.Equal(s.Resource(), want) {
		t.Errorf("resource:\n got %x\nwant %x (%v)", s.Resource(), want, err)
	}
	want, err = proto.Marshal(&commonpb.InstrumentationScope{Name: "mcpscope", Version: s.version})
	if err != nil || !bytes.Equal(s.Scope(), want) {
		t.Errorf("scope:\n got %x\nwant %x (%v)", s.Scope(), want, err)
	}
}

// generatedSpan is the span as OTLP's generated types have it.
func generatedSpan(s *otlpSpan) *tracepb.Span {
	p := &tracepb.Span{
		TraceId: hexID(s.TraceID), SpanId: hexID(s.SpanID), ParentSpanId: hexID(s.ParentSpanID),
		TraceState: s.TraceState, Name: utf8Text(s.Name), Kind: tracepb.Span_SpanKind(s.Kind),
		StartTimeUnixNano: uint64(s.StartTimeUnixNano), EndTimeUnixNano: uint64(s.EndTimeUnixNano),
		Attributes: generatedAttrs(s.Attributes), DroppedEventsCount: s.DroppedEventsCount,
		Status: &tracepb.Status{Message: utf8Text(s.Status.Message), Code: tracepb.Status_StatusCode(s.Status.Code)},
	}
	for _, e := range s.Events {
		p.Events = append(p.Events, &tracepb.Span_Event{TimeUnixNano: uint64(e.TimeUnixNano), Name: utf8Text(e.Name), Attributes: generatedAttrs(e.Attributes)})
	}
	for _, l := range s.Links {
		p.Links = append(p.Links, &tracepb.Span_Link{TraceId: hexID(l.TraceID), SpanId: hexID(l.SpanID), Attributes: generatedAttrs(l.Attributes)})
	}
	return p
}

func generatedAttrs(kvs []otlpKV) []*commonpb.KeyValue {
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
