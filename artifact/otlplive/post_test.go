package otlplive

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"mcpscope/transport"
)

// testSpans is a request of one resource's n spans.
func testSpans(n int) []byte {
	var spans [][]byte
	for i := range n {
		b, err := proto.Marshal(&tracepb.Span{Name: "s", TraceId: make([]byte, 16), SpanId: []byte{0, 0, 0, 0, 0, 0, 0, byte(i + 1)}})
		if err != nil {
			panic(err)
		}
		spans = append(spans, b)
	}
	return EncodeRequest(nil, nil, spans)
}

// TestEncodeRequest: the request written by hand is the bytes
// proto.Marshal gives for the same ResourceSpans (TracesData has the
// request's one field).
func TestEncodeRequest(t *testing.T) {
	res := &resourcepb.Resource{Attributes: []*commonpb.KeyValue{{Key: "service.name", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "mcpscope"}}}}}
	scope := &commonpb.InstrumentationScope{Name: "mcpscope", Version: "1.2.3"}
	var spans []*tracepb.Span
	var encoded [][]byte
	for i := range 3 {
		sp := &tracepb.Span{Name: "s", TraceId: make([]byte, 16), SpanId: []byte{0, 0, 0, 0, 0, 0, 0, byte(i + 1)}, Status: &tracepb.Status{}}
		spans = append(spans, sp)
		b, err := proto.Marshal(sp)
		if err != nil {
			t.Fatal(err)
		}
		encoded = append(encoded, b)
	}
	r, _ := proto.Marshal(res)
	s, _ := proto.Marshal(scope)
	want, err := proto.Marshal(&tracepb.TracesData{ResourceSpans: []*tracepb.ResourceSpans{{Resource: res, ScopeSpans: []*tracepb.ScopeSpans{{Scope: scope, Spans: spans}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := EncodeRequest(r, s, encoded); !bytes.Equal(got, want) {
		t.Errorf("got  %x\nwant %x", got, want)
	}
}

// readRequest decodes an ExportTraceServiceRequest body. TracesData has
// the same one field (repeated ResourceSpans resource_spans = 1), so it
// reads the request without the collector package (which links gRPC).
func readRequest(t *testing.T, r *http.Request) *tracepb.TracesData {
	t.Helper()
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			t.Errorf("gzip: %v", err)
			return nil
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Errorf("read the request: %v", err)
		return nil
	}
	var td tracepb.TracesData
	if err := proto.Unmarshal(b, &td); err != nil {
		t.Errorf("the request is not an ExportTraceServiceRequest: %v", err)
		return nil
	}
	return &td
}

func countSpans(td *tracepb.TracesData) int {
	n := 0
	for _, rs := range td.GetResourceSpans() {
		for _, ss := range rs.ScopeSpans {
			n += len(ss.Spans)
		}
	}
	return n
}

// partialResponse is an ExportTraceServiceResponse with partial_success.
func partialResponse(rejected int64, msg string) []byte {
	var ps []byte
	ps = protowire.AppendTag(ps, 1, protowire.VarintType)
	ps = protowire.AppendVarint(ps, uint64(rejected))
	ps = protowire.AppendTag(ps, 2, protowire.BytesType)
	ps = protowire.AppendString(ps, msg)
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	return protowire.AppendBytes(b, ps)
}

// statusBody is a google.rpc.Status { int32 code = 1; string message = 2 }.
func statusBody(code int, msg string) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(code))
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	return protowire.AppendString(b, msg)
}

func writeProto(w http.ResponseWriter, code int, b []byte) {
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(code)
	w.Write(b)
}

func testEndpoint(t *testing.T, url string, env map[string]string) Endpoint {
	t.Helper()
	if env == nil {
		env = map[string]string{}
	}
	env["OTEL_EXPORTER_OTLP_ENDPOINT"] = url
	ep, ok, err := Resolve("", func(k string) string { return env[k] })
	if err != nil || !ok {
		t.Fatalf("resolve %s: %v", url, err)
	}
	return ep
}

func postCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestPostSuccess: a POST of protobuf to the traces URL, with the
// endpoint's headers, that the collector answers 200.
func TestPostSuccess(t *testing.T) {
	for _, gz := range []bool{false, true} {
		var got atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" ||
				r.Header.Get("X-Api-Key") != "k" || !strings.HasPrefix(r.Header.Get("User-Agent"), "mcpscope/") ||
				(r.Header.Get("Content-Encoding") == "gzip") != gz {
				t.Errorf("request %s %s %v", r.Method, r.URL.Path, r.Header)
			}
			got.Add(int32(countSpans(readRequest(t, r))))
			writeProto(w, http.StatusOK, nil)
		}))
		env := map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=k"}
		if gz {
			env["OTEL_EXPORTER_OTLP_COMPRESSION"] = "gzip"
		}
		p := newPoster(testEndpoint(t, srv.URL, env), "test")
		if err := p.Post(postCtx(t, time.Minute), testSpans(3)); err != nil {
			t.Fatalf("gzip %v: %v", gz, err)
		}
		if got.Load() != 3 {
			t.Fatalf("gzip %v: the collector got %d spans, want 3", gz, got.Load())
		}
		p.close()
		srv.Close()
	}
}

// TestPostPartialSuccess: rejected spans come back as a *PartialSuccess,
// and the exporter counts them as dropped, the others as sent.
func TestPostPartialSuccess(t *testing.T) {
	// Only the first upload has a span rejected: how the exporter splits
	// three spans into uploads depends on scheduling, the counts must not.
	var uploads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := countSpans(readRequest(t, r))
		if uploads.Add(1) == 1 {
			writeProto(w, http.StatusOK, partialResponse(int64(min(n, 1)), "span 1 has no name"))
			return
		}
		writeProto(w, http.StatusOK, nil)
	}))
	defer srv.Close()
	ep := testEndpoint(t, srv.URL, nil)
	err := newPoster(ep, "test").Post(postCtx(t, time.Minute), testSpans(3))
	var ps *PartialSuccess
	if !errors.As(err, &ps) || ps.Rejected != 1 || ps.Message != "span 1 has no name" {
		t.Fatalf("got %v, want a partial success of 1 rejected span with the message", err)
	}
	uploads.Store(0)
	e, err := Start(ep, Options{Version: "test", Target: "stdio: test"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i := 1; i <= 3; i++ {
		id := []byte{byte('0' + i)}
		e.Frame(uint64(2*i-1), transport.Frame{Time: now, Dir: transport.Out, Kind: transport.Message, Data: append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"method":"ping"}`...)})
		e.Frame(uint64(2*i), transport.Frame{Time: now, Dir: transport.In, Kind: transport.Message, Data: append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"result":{}}`...)})
	}
	st := e.Close(time.Minute)
	if st.Sent != 2 || st.Dropped != 1 || !strings.Contains(st.LastError, "span 1 has no name") {
		t.Fatalf("stats %+v: want the one rejected span counted as dropped, the other 2 sent, and the message", st)
	}
}

// TestPostRetries: 503 with Retry-After is retried after it; one whose
// Retry-After is past the upload's timeout is not waited for.
func TestPostRetries(t *testing.T) {
	var calls atomic.Int32
	var first, second time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if calls.Add(1) == 1 {
			first = time.Now()
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		second = time.Now()
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	p := newPoster(testEndpoint(t, srv.URL, nil), "test")
	if err := p.Post(postCtx(t, time.Minute), testSpans(1)); err != nil {
		t.Fatalf("after a 503 and a 200: %v", err)
	}
	if calls.Load() != 2 || second.Sub(first) < 900*time.Millisecond {
		t.Fatalf("%d requests, %s apart: want 2, a second apart (Retry-After: 1)", calls.Load(), second.Sub(first))
	}

	calls.Store(0)
	late := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer late.Close()
	start := time.Now()
	err := newPoster(testEndpoint(t, late.URL, nil), "test").Post(postCtx(t, 5*time.Second), testSpans(1))
	if err == nil || !strings.Contains(err.Error(), "429") || calls.Load() != 1 || time.Since(start) > 4*time.Second {
		t.Fatalf("429 with Retry-After past the timeout: %v after %d request(s), %s", err, calls.Load(), time.Since(start))
	}
}

// TestPostPermanent: a 400 is not retried, and says the Status message
// of its body (the status line alone when the body is not a Status).
func TestPostPermanent(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Query().Get("text") != "" {
			http.Error(w, "plain words", http.StatusBadRequest)
			return
		}
		writeProto(w, http.StatusBadRequest, statusBody(3, "invalid trace id"))
	}))
	defer srv.Close()
	ep := testEndpoint(t, srv.URL, nil)
	err := newPoster(ep, "test").Post(postCtx(t, time.Minute), testSpans(1))
	if err == nil || !strings.Contains(err.Error(), "400 Bad Request: invalid trace id") || calls.Load() != 1 {
		t.Fatalf("400: %v after %d request(s), want the Status message, once", err, calls.Load())
	}
	ep.URL += "?text=1"
	err = newPoster(ep, "test").Post(postCtx(t, time.Minute), testSpans(1))
	if err == nil || !strings.HasSuffix(err.Error(), "400 Bad Request") || calls.Load() != 2 {
		t.Fatalf("400 in text: %v, want the status line alone", err)
	}
}

// TestPostErrorsRedacted: a header value (a credential) never shows in an
// error, even when the collector echoes it, nor does the URL's password.
func TestPostErrorsRedacted(t *testing.T) {
	const secret = "s3cr3t-value"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		echo := "your key " + r.Header.Get("X-Api-Key") + " is wrong"
		switch r.URL.Query().Get("as") {
		case "partial":
			writeProto(w, http.StatusOK, partialResponse(1, echo))
		case "retry":
			w.Header().Set("Retry-After", "3600")
			writeProto(w, http.StatusServiceUnavailable, statusBody(14, echo))
		default:
			writeProto(w, http.StatusUnauthorized, statusBody(16, echo))
		}
	}))
	defer srv.Close()
	env := map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=" + secret}
	for _, as := range []string{"", "partial", "retry"} {
		ep := testEndpoint(t, srv.URL, env)
		ep.URL += "?as=" + as
		err := newPoster(ep, "test").Post(postCtx(t, time.Minute), testSpans(1))
		if err == nil || strings.Contains(err.Error(), secret) || (as != "retry" && !strings.Contains(err.Error(), "your key [redacted] is wrong")) {
			t.Errorf("as %q: error %v: want one without the header's value", as, err)
		}
	}
	// Nothing listens: the transport's error would name the URL.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ep := testEndpoint(t, "http://user:"+secret+"@"+addr, env)
	err = newPoster(ep, "test").Post(postCtx(t, time.Minute), testSpans(1))
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Fatalf("refused connection: error %v: want one without the secret", err)
	}
}
