// Package otlptest reads OTLP/JSON traces back for tests: the export's
// file, and what a collector's file exporter wrote (one request a line),
// so that the two can be compared span for span.
package otlptest

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"testing"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Trace is what a set of OTLP/JSON requests held.
type Trace struct {
	Resources []*commonpb.KeyValue // of the first resource (all must agree)
	Spans     []*tracepb.Span      // every span, by span id
}

// Read decodes OTLP/JSON requests, one per line (a pretty-printed single
// request also reads: blank lines are skipped only between requests).
func Read(t testing.TB, b []byte) Trace {
	t.Helper()
	var out Trace
	dec := json.NewDecoder(bytes.NewReader(b))
	for dec.More() {
		var doc any
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("otlptest: not JSON: %v\n%.300s", err, b)
		}
		req := decode(t, doc)
		for _, rs := range req.ResourceSpans {
			if out.Resources == nil {
				out.Resources = rs.GetResource().GetAttributes()
			} else if !proto.Equal(&commonpb.KeyValueList{Values: out.Resources}, &commonpb.KeyValueList{Values: rs.GetResource().GetAttributes()}) {
				t.Fatalf("otlptest: two resources: %v and %v", out.Resources, rs.GetResource().GetAttributes())
			}
			for _, ss := range rs.ScopeSpans {
				out.Spans = append(out.Spans, ss.Spans...)
			}
		}
	}
	sort.Slice(out.Spans, func(i, j int) bool { return bytes.Compare(out.Spans[i].SpanId, out.Spans[j].SpanId) < 0 })
	return out
}

// Decode reads one OTLP/JSON request (an export's file, a collector's
// line) into the official protobuf type. TracesData is, field for field,
// the ExportTraceServiceRequest (resourceSpans alone), whose package
// imports gRPC: the module needs none.
func Decode(t testing.TB, b []byte) *tracepb.TracesData {
	t.Helper()
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("otlptest: not JSON: %v\n%.300s", err, b)
	}
	return decode(t, doc)
}

// decode reads one request with protojson, after turning the hex trace
// and span ids into the base64 protobuf's JSON mapping expects (OTLP/JSON's
// documented departure from it).
func decode(t testing.TB, doc any) *tracepb.TracesData {
	t.Helper()
	var fix func(v any)
	fix = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, val := range x {
				if s, ok := val.(string); ok && (k == "traceId" || k == "spanId" || k == "parentSpanId") {
					raw, err := hex.DecodeString(s)
					if err != nil {
						t.Fatalf("otlptest: %s %q is not hex", k, s)
					}
					x[k] = base64.StdEncoding.EncodeToString(raw)
					continue
				}
				fix(val)
			}
		case []any:
			for _, e := range x {
				fix(e)
			}
		}
	}
	fix(doc)
	pb, _ := json.Marshal(doc)
	var req tracepb.TracesData
	if err := protojson.Unmarshal(pb, &req); err != nil {
		t.Fatalf("otlptest: protojson: %v", err)
	}
	return &req
}

// Diff says how got differs from want ("" when it does not): resource
// attributes, the set of spans, and each span whole (ids, name, kind,
// times, attributes, events, links, status).
func Diff(got, want Trace) string {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	if !proto.Equal(&commonpb.KeyValueList{Values: got.Resources}, &commonpb.KeyValueList{Values: want.Resources}) {
		fmt.Fprintf(w, "resource: got %v\n          want %v\n", got.Resources, want.Resources)
	}
	if len(got.Spans) != len(want.Spans) {
		fmt.Fprintf(w, "%d spans, want %d\n", len(got.Spans), len(want.Spans))
	}
	for i := 0; i < min(len(got.Spans), len(want.Spans)); i++ {
		if !proto.Equal(got.Spans[i], want.Spans[i]) {
			fmt.Fprintf(w, "span %d:\n  got  %v\n  want %v\n", i, got.Spans[i], want.Spans[i])
		}
	}
	w.Flush()
	return b.String()
}
