package export

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"

	"mcpscope/internal/termsafe"
)

// TestAppendSpanJSONMatchesMarshal: the hand-written span JSON is the
// bytes json.Marshal gives, for spans with every field set or left out and
// strings that need escaping; a double JSON cannot hold still fails.
func TestAppendSpanJSONMatchesMarshal(t *testing.T) {
	hostile := "a\"b\\c\b\f\n\r\t\x01\x7f<>&\u2028\u2029\xff\xc3 é 😀 \u202e"
	spans := []otlpSpan{
		{},
		{TraceID: "0af7651916cd43dd8448eb211c80319c", SpanID: "b7ad6b7169203331", Name: "tools/call fetch", Kind: spanKindClient,
			StartTimeUnixNano: 1, EndTimeUnixNano: -5, Attributes: []otlpKV{}},
		{TraceID: hostile, SpanID: hostile, TraceState: hostile, ParentSpanID: hostile, Name: hostile, Kind: -1,
			StartTimeUnixNano: math.MaxInt64, EndTimeUnixNano: math.MinInt64,
			Attributes: []otlpKV{str(hostile, hostile), integer("n", -42), double("d", 0), double("e", 1e21), double("f", 1e-7),
				double("g", -0.5), double("h", 123456789.125), double("i", math.SmallestNonzeroFloat64), double("j", math.MaxFloat64),
				{Key: "b", Value: otlpValue{BoolValue: new(bool)}}, {Key: "empty"},
				{Key: "all", Value: otlpValue{StringValue: new(string), IntValue: new(string), DoubleValue: new(float64), BoolValue: new(bool)}}},
			Events:             []otlpEvent{{TimeUnixNano: 7, Name: hostile}, {Name: "x", Attributes: []otlpKV{double("p", 0.25)}}},
			DroppedEventsCount: 4294967295,
			Links:              []otlpLink{{TraceID: "t", SpanID: hostile}, {Attributes: []otlpKV{str("mcpscope.link", "continues")}}},
			Status:             otlpStatus{Message: hostile, Code: statusCodeError}},
		{Status: otlpStatus{Code: statusCodeError}, Events: []otlpEvent{}, Links: []otlpLink{}},
		{Status: otlpStatus{Message: "only words"}},
	}
	for i := range spans {
		want, err := json.Marshal(&spans[i])
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendSpanJSON([]byte("keep"), &spans[i])
		if err != nil || !bytes.Equal(got, append([]byte("keep"), want...)) {
			t.Errorf("span %d:\n got %s (%v)\nwant keep%s", i, got, err, want)
		}
		checkPlain(t, &spans[i])
	}
	if _, plain, _ := appendSpanJSONPlain(nil, &spans[2]); plain {
		t.Error("a span with DEL, C1 and non-ASCII strings: said plain")
	}
	if _, plain, _ := appendSpanJSONPlain(nil, &spans[1]); !plain {
		t.Error("an ASCII span: not said plain")
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		s := otlpSpan{Events: []otlpEvent{{Attributes: []otlpKV{double("p", bad)}}}}
		if _, err := appendSpanJSON(nil, &s); err == nil {
			t.Errorf("a span with %v: no error, as json.Marshal gives", bad)
		}
	}
}

// FuzzAppendSpanJSON: any strings and numbers give json.Marshal's bytes.
func FuzzAppendSpanJSON(f *testing.F) {
	f.Add("tools/call", "\x00<\xff", int64(5), 0.5, uint32(0), 2)
	f.Fuzz(func(t *testing.T, a, b string, n int64, d float64, dropped uint32, code int) {
		s := otlpSpan{TraceID: a, SpanID: b, TraceState: b, Name: a + b, Kind: code,
			StartTimeUnixNano: unixNano(n), Attributes: []otlpKV{str(a, b), integer(b, n), double(a, d)},
			Events:             []otlpEvent{{TimeUnixNano: unixNano(-n), Name: b, Attributes: []otlpKV{double("x", d)}}},
			DroppedEventsCount: dropped, Status: otlpStatus{Message: a, Code: code}}
		want, werr := json.Marshal(&s)
		got, gerr := appendSpanJSON(nil, &s)
		if (werr != nil) != (gerr != nil) || (werr == nil && !bytes.Equal(got, want)) {
			t.Fatalf("got %s (%v), want %s (%v)", got, gerr, want, werr)
		}
		checkPlain(t, &s)
	})
}

// checkPlain: a span said plain is JSON that termsafe.JSON leaves as it
// is, so the export may skip it.
func checkPlain(t *testing.T, s *otlpSpan) {
	t.Helper()
	got, plain, err := appendSpanJSONPlain([]byte("keep"), s)
	if err == nil && plain && !bytes.Equal(termsafe.JSON(got[4:]), got[4:]) {
		t.Fatalf("said plain, but termsafe.JSON changes %q", got[4:])
	}
}

// TestAppendHAREntryMatchesMarshal: the hand-written HAR entry is the
// bytes json.Marshal gives, empty and full, with strings that need escaping.
func TestAppendHAREntryMatchesMarshal(t *testing.T) {
	hostile := "a\"b\\c\b\f\n\r\t\x01\x7f<>&\u2028\u2029\xff\xc3 é 😀 \u202e"
	full := harEntry{StartedDateTime: hostile, Time: 1.5e-7,
		Request: harRequest{Method: "POST", URL: hostile, HTTPVersion: "HTTP/1.1", Cookies: []harNV{}, Headers: []harNV{{hostile, hostile}, {"Accept", "x"}},
			QueryString: []harNV{}, PostData: &harPostData{MimeType: "application/json", Text: hostile}, HeadersSize: -1, BodySize: 12, Comment: hostile},
		Response: harResponse{Status: 200, StatusText: hostile, HTTPVersion: "HTTP/1.1", Headers: []harNV{{"n", "v"}},
			Content: harContent{Size: 3, MimeType: "text/event-stream", Text: "mcpscope-body-00"}, RedirectURL: "", HeadersSize: -1, BodySize: -1, Comment: "c"},
		Timings:    harTimings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1, Send: 0, Wait: 12.345, Receive: 1e21},
		Connection: hostile, Comment: hostile, MCP: harMCP{Stream: hostile, Resumes: "post:1", Seqs: [2]uint64{1, 1<<64 - 1}, SSEEvents: 7}}
	for i, e := range []harEntry{{}, full, {MCP: harMCP{Resumes: "r"}}} {
		want, err := json.Marshal(&e)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendHAREntry([]byte("keep"), &e)
		if err != nil || !bytes.Equal(got, append([]byte("keep"), want...)) {
			t.Errorf("entry %d:\n got %s (%v)\nwant keep%s", i, got, err, want)
		}
	}
	if _, err := appendHAREntry(nil, &harEntry{Time: math.NaN()}); err == nil {
		t.Error("a NaN time: no error, as json.Marshal gives")
	}
}

// TestMayHoldKey: params are read for a span's links and parent only
// when they may hold one of the names, as encoding/json matches them.
func TestMayHoldKey(t *testing.T) {
	keys := []string{"inputResponses", "requestState", "traceparent"}
	for in, want := range map[string]bool{
		`{"name":"fetch","_meta":{"progressToken":1}}`:   false,
		`{"_meta":{"traceparent":"00-x"}}`:               true,
		`{"_meta":{"TRACEPARENT":"00-x"}}`:               true,
		`{"inputresponses":{}}`:                          true,
		`{"requestState":"x"}`:                           true,
		`{"_meta":{"tr\u0061ceparent":"00-x"}}`:          true, // an escape: decoded to know
		`{"requeſtState":"x"}`:                           true, // ſ folds to s in encoding/json
		`{"name":"é"}`:                                   true,
		``:                                               false,
		`{"query":"what is a traceparent"}`:              false, // only where a name can start
		`{"query":"x","n":1,"t":"requestStateful"}`:      true,  // a value that starts like one: decoded to know
		`{"query":"x","n":1,"t":"requestState"`:          true,
		`"traceparent`:                                   true,
		`"tracepar`:                                      false,
		`{"query":"a long ASCII value, then é"}`:         true, // non-ASCII past the first words
		`{"query":"a long ASCII value, then \u00e9"}`:    true,
		`{"query":"a long ASCII value"`:                  false,
		`{"query":"a long ASCII value","Traceparent":1}`: true,
	} {
		if got := mayHoldKey([]byte(in), keys...); got != want {
			t.Errorf("mayHoldKey(%s) = %v, want %v", in, got, want)
		}
		// Whenever it says no, decoding finds none of them.
		var p struct {
			InputResponses json.RawMessage `json:"inputResponses"`
			RequestState   json.RawMessage `json:"requestState"`
			Meta           struct {
				TraceParent string `json:"traceparent"`
			} `json:"_meta"`
		}
		if !mayHoldKey([]byte(in), keys...) && json.Unmarshal([]byte(in), &p) == nil && (p.InputResponses != nil || p.RequestState != nil || p.Meta.TraceParent != "") {
			t.Errorf("mayHoldKey(%s) said no, json.Unmarshal found one", in)
		}
	}
}

// TestPlainWord: a word said plain holds only bytes otlpPlain allows, for
// every byte in every place and pairs of bytes around the limits.
func TestPlainWord(t *testing.T) {
	check := func(w []byte) {
		all := true
		for _, c := range w {
			all = all && otlpPlain[c]
		}
		if plainWord(binary.LittleEndian.Uint64(w)) && !all {
			t.Fatalf("plainWord(%q) = true", w)
		}
		if all && !plainWord(binary.LittleEndian.Uint64(w)) {
			t.Errorf("plainWord(%q) = false for plain bytes", w)
		}
	}
	for c := 0; c < 256; c++ {
		for i := 0; i < 8; i++ {
			w := []byte("abcdefgh")
			w[i] = byte(c)
			check(w)
			for d := 0; d < 256; d += 7 {
				w[(i+3)%8] = byte(d)
				check(w)
			}
		}
	}
}

// TestNetworkProtocolVersion: network.protocol.version is the HTTP version
// when it is known (plain http: HTTP/1.1), and not set when it is not
// (https negotiates it, the journal does not say) nor for a pipe.
func TestNetworkProtocolVersion(t *testing.T) {
	for _, c := range []struct{ transport, url, want string }{
		{"http", "http://127.0.0.1:8080/mcp", "1.1"},
		{"sse", "http://example.com/sse", "1.1"},
		{"http", "https://example.com/mcp", ""},
		{"stdio", "", ""},
	} {
		ox := &tracer{}
		ox.info.Transport, ox.info.URL = c.transport, c.url
		got := ""
		for _, kv := range ox.network() {
			if kv.Key == "network.protocol.version" {
				got = *kv.Value.StringValue
			}
		}
		if got != c.want {
			t.Errorf("%s %s: network.protocol.version %q, want %q", c.transport, c.url, got, c.want)
		}
	}
}

// appendSpanJSON is appendSpanJSONPlain without the plain-ASCII flag.
func appendSpanJSON(buf []byte, s *otlpSpan) ([]byte, error) {
	b, _, err := appendSpanJSONPlain(buf, s)
	return b, err
}
