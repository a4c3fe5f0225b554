package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"mcpscope/artifact/export"
	"mcpscope/connect"
	"mcpscope/filter"
	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/testkit/otlptest"
	"mcpscope/testkit/recordtest"
	"mcpscope/testkit/testservers"
	"mcpscope/transport"
)

func TestMain(m *testing.M) { recordtest.Main(m) }

// secret is in the URL and the bearer of the HTTP recordings: no export
// may carry it.
const secret = "s3cr3t-t0ken"

// recordings: the Go SDK test server over stdio, over Streamable HTTP with
// SSE answers and with JSON answers, and over HTTP+SSE (2024-11-05); the
// HTTP ones with a credential in the URL and a bearer token.
func recordings(t *testing.T) map[string]string {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	rec := func(name string, sp func() connect.Spec) string {
		return recordtest.Once(t, name, func(j string) string {
			s := sp()
			s.Journal = j
			return recordtest.Record(t, name, s, recordtest.GoScript)
		})
	}
	httpSpec := func(url, transport string) connect.Spec {
		return connect.Spec{URL: url + "?api_key=" + secret, Bearer: secret, Transport: transport}
	}
	return map[string]string{
		"stdio": rec("stdio", func() connect.Spec { return connect.Spec{Command: []string{testservers.BuildStdio(t)}} }),
		"sse-answers": rec("sse-answers", func() connect.Spec {
			return httpSpec(testservers.StartHTTP(t, testservers.HTTPOpts{}), "http")
		}),
		"json-answers": rec("json-answers", func() connect.Spec {
			return httpSpec(testservers.StartHTTP(t, testservers.HTTPOpts{JSONResponse: true}), "http")
		}),
		"http+sse": rec("http+sse", func() connect.Spec {
			return httpSpec(testservers.StartSSE(t, testservers.HTTPOpts{}).URL, "sse")
		}),
	}
}

func exportOf(t *testing.T, path, format, expr string) []byte {
	t.Helper()
	var o export.Options
	if expr != "" {
		f, err := filter.Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		o.Filter = f
	}
	o.Version = "test"
	var b bytes.Buffer
	if err := export.Write(&b, path, format, o); err != nil {
		t.Fatalf("%s %s: %v", format, path, err)
	}
	if bytes.Contains(b.Bytes(), []byte(secret)) {
		t.Fatalf("%s export of %s carries the secret", format, path)
	}
	return b.Bytes()
}

// TestJSONL: unfiltered, the export is the journal byte for byte; filtered,
// a journal of the matching frames.
func TestJSONL(t *testing.T) {
	for name, path := range recordings(t) {
		orig, _ := os.ReadFile(path)
		if bytes.Contains(orig, []byte(secret)) {
			t.Fatalf("%s: the journal itself carries the secret", name)
		}
		if got := exportOf(t, path, "jsonl", ""); !bytes.Equal(got, orig) {
			t.Errorf("%s: unfiltered JSONL is not the journal (%d bytes vs %d)", name, len(got), len(orig))
		}
		got := exportOf(t, path, "jsonl", "~t slow & ~k progress")
		n := 0
		_, err := journal.Read(bytes.NewReader(got), func(_ uint64, f transport.Frame) error {
			n++
			if !bytes.Contains(f.Data, []byte("notifications/progress")) {
				t.Errorf("%s: kept %s", name, f.Data)
			}
			return nil
		})
		if err != nil || n != 3 {
			t.Errorf("%s: %d progress frames of slow (want 3), %v", name, n, err)
		}
	}
}

func harSchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	b, err := os.ReadFile("testdata/har-1.2.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

type harDoc struct {
	Log struct {
		Entries []struct {
			Time    float64 `json:"time"`
			Request struct {
				Method   string `json:"method"`
				URL      string `json:"url"`
				PostData *struct {
					Text string `json:"text"`
				} `json:"postData"`
			} `json:"request"`
			Comment  string `json:"comment"`
			Response struct {
				Status  int    `json:"status"`
				Comment string `json:"comment"`
				Content struct {
					Size     int    `json:"size"`
					MimeType string `json:"mimeType"`
					Text     string `json:"text"`
				} `json:"content"`
			} `json:"response"`
			Timings map[string]float64 `json:"timings"`
		} `json:"entries"`
	} `json:"log"`
}

// TestHAR: every HTTP recording exports to a HAR that a HAR 1.2 schema
// (testdata, written from the spec) accepts, with each POST, its answer
// and its SSE events; a stdio journal is refused.
func TestHAR(t *testing.T) {
	rs := harSchema(t)
	recs := recordings(t)
	for _, name := range []string{"sse-answers", "json-answers", "http+sse"} {
		t.Run(name, func(t *testing.T) {
			out := exportOf(t, recs[name], "har", "")
			var inst any
			if err := json.Unmarshal(out, &inst); err != nil {
				t.Fatalf("not JSON: %v\n%.500s", err, out)
			}
			if err := rs.Validate(inst); err != nil {
				t.Fatalf("not HAR 1.2: %v", err)
			}
			// The schema is not vacuous: an entry without timings, or with
			// a field of no name the spec knows, is refused.
			for _, breakIt := range []func(e map[string]any){
				func(e map[string]any) { delete(e, "timings") },
				func(e map[string]any) { e["mcpscope"] = 1 },
				func(e map[string]any) { e["request"].(map[string]any)["headersSize"] = "x" },
			} {
				var bad map[string]any
				json.Unmarshal(out, &bad)
				breakIt(bad["log"].(map[string]any)["entries"].([]any)[0].(map[string]any))
				if rs.Validate(bad) == nil {
					t.Fatal("the HAR schema accepted a broken entry")
				}
			}
			var doc harDoc
			json.Unmarshal(out, &doc)
			posts, slow := 0, false
			for _, e := range doc.Log.Entries {
				if strings.HasPrefix(e.Response.Comment, "status assumed") && strings.Contains(e.Comment, "still open") {
					t.Errorf("an entry both answered by assumption and still open: %q / %q", e.Response.Comment, e.Comment)
				}
				sum := e.Timings["send"] + e.Timings["wait"] + e.Timings["receive"]
				if d := e.Time - sum; d > 0.01 || d < -0.01 {
					t.Errorf("time %v is not the sum of the timings %v", e.Time, e.Timings)
				}
				if !strings.HasPrefix(e.Request.URL, "http://127.0.0.1:") {
					t.Errorf("url %q", e.Request.URL)
				}
				if e.Request.Method != "POST" {
					continue
				}
				posts++
				if e.Request.PostData != nil && strings.Contains(e.Request.PostData.Text, `"name":"slow"`) {
					slow = true
					switch name {
					case "sse-answers":
						if e.Response.Status != 200 || e.Response.Content.MimeType != "text/event-stream" ||
							strings.Count(e.Response.Content.Text, "notifications/progress") != 3 ||
							e.Response.Content.Size != len(e.Response.Content.Text) {
							t.Errorf("slow's POST: %d %s, %d bytes:\n%s", e.Response.Status, e.Response.Content.MimeType,
								e.Response.Content.Size, e.Response.Content.Text)
						}
					case "json-answers":
						if e.Response.Status != 200 || !strings.HasPrefix(e.Response.Content.MimeType, "application/json") ||
							!strings.Contains(e.Response.Content.Text, `"result"`) {
							t.Errorf("slow's POST: %d %s %s", e.Response.Status, e.Response.Content.MimeType, e.Response.Content.Text)
						}
					case "http+sse":
						if e.Response.Status != 202 {
							t.Errorf("a 2024-11-05 POST: status %d, want 202 (assumed)", e.Response.Status)
						}
					}
				}
			}
			if !slow || posts < 10 {
				t.Errorf("%d POSTs, slow among them: %v", posts, slow)
			}
			// Filtered: the exchanges holding an error.
			var few harDoc
			json.Unmarshal(exportOf(t, recs[name], "har", "~e & ~k response"), &few)
			if n := len(few.Log.Entries); n == 0 || n >= len(doc.Log.Entries) {
				t.Errorf("~e kept %d of %d entries", n, len(doc.Log.Entries))
			}
		})
	}
	var b bytes.Buffer
	if err := export.HAR(&b, recs["stdio"], export.Options{}); err != export.ErrNotHTTP {
		t.Errorf("HAR of a stdio journal: %v", err)
	}
}

// TestOTLP: the OTLP/JSON export decodes with the official protobuf types
// (protojson into ExportTraceServiceRequest, once the hex ids OTLP/JSON
// uses are turned into protobuf's base64), one span per call with the MCP
// semantic conventions' attributes, progress as events.
func TestOTLP(t *testing.T) {
	for name, path := range recordings(t) {
		t.Run(name, func(t *testing.T) {
			req := decodeOTLP(t, exportOf(t, path, "otlp", ""))
			spans := req.ResourceSpans[0].ScopeSpans[0].Spans
			byName := map[string][]*tracepb.Span{}
			for _, s := range spans {
				if len(s.TraceId) != 16 || len(s.SpanId) != 8 || s.Kind != tracepb.Span_SPAN_KIND_CLIENT || s.EndTimeUnixNano < s.StartTimeUnixNano {
					t.Fatalf("span %s: trace %x span %x kind %v", s.Name, s.TraceId, s.SpanId, s.Kind)
				}
				byName[s.Name] = append(byName[s.Name], s)
			}
			attr := func(s *tracepb.Span, k string) string {
				for _, a := range s.Attributes {
					if a.Key == k {
						if iv, ok := a.Value.Value.(*commonpb.AnyValue_IntValue); ok {
							return strconv.FormatInt(iv.IntValue, 10)
						}
						if bv, ok := a.Value.Value.(*commonpb.AnyValue_BoolValue); ok {
							return strconv.FormatBool(bv.BoolValue)
						}
						return a.Value.GetStringValue()
					}
				}
				return ""
			}
			// The era probe (these servers answer it) is marked as such and
			// carries no session: it went before initialize.
			if name != "http+sse" {
				probe := one(t, byName, "server/discover")
				if attr(probe, "mcpscope.era.probe") != "true" || attr(probe, "mcpscope.era.probe.answer") != "answered" ||
					probe.Status.Code == tracepb.Status_STATUS_CODE_ERROR || attr(probe, "mcp.session.id") != "" {
					t.Errorf("era probe: %v %v", probe.Attributes, probe.Status)
				}
			}
			echo := one(t, byName, "tools/call echo")
			if attr(echo, "mcpscope.era.probe") != "" {
				t.Errorf("echo marked as the era probe: %v", echo.Attributes)
			}
			if attr(echo, "gen_ai.tool.name") != "echo" || attr(echo, "mcp.method.name") != "tools/call" ||
				attr(echo, "gen_ai.operation.name") != "execute_tool" || attr(echo, "jsonrpc.request.id") == "" ||
				attr(echo, "mcp.protocol.version") == "" || attr(echo, "error.type") != "" {
				t.Errorf("echo: %v", echo.Attributes)
			}
			if name != "stdio" && attr(echo, "mcp.session.id") == "" && name != "http+sse" {
				t.Errorf("echo over HTTP without mcp.session.id: %v", echo.Attributes)
			}
			wantTransport := map[bool]string{true: "pipe", false: "tcp"}[name == "stdio"]
			if attr(echo, "network.transport") != wantTransport {
				t.Errorf("network.transport %q, want %q", attr(echo, "network.transport"), wantTransport)
			}
			// The HTTP version (these servers are plain http: HTTP/1.1);
			// a pipe has none.
			wantVersion := map[bool]string{true: "", false: "1.1"}[name == "stdio"]
			if attr(echo, "network.protocol.version") != wantVersion {
				t.Errorf("network.protocol.version %q, want %q", attr(echo, "network.protocol.version"), wantVersion)
			}
			slow := one(t, byName, "tools/call slow")
			progress := 0
			for _, e := range slow.Events {
				if e.Name == "notifications/progress" {
					progress++
				}
			}
			if progress != 3 {
				t.Errorf("slow: %d progress events, want 3: %v", progress, slow.Events)
			}
			fail := one(t, byName, "tools/call fail")
			if attr(fail, "error.type") != "tool_error" || fail.Status.Code != tracepb.Status_STATUS_CODE_ERROR {
				t.Errorf("fail: %v %v", fail.Attributes, fail.Status)
			}
			unknown := one(t, byName, "tools/call no-such-tool")
			if attr(unknown, "error.type") == "" || attr(unknown, "rpc.response.status_code") == "" || unknown.Status.Message == "" {
				t.Errorf("no-such-tool: %v %v", unknown.Attributes, unknown.Status)
			}
			if p := one(t, byName, "prompts/get greeting"); attr(p, "gen_ai.prompt.name") != "greeting" {
				t.Errorf("prompt: %v", p.Attributes)
			}
			if r := one(t, byName, "resources/read"); attr(r, "mcp.resource.uri") != "demo://readme" {
				t.Errorf("read: %v", r.Attributes)
			}
			delay := one(t, byName, "tools/call delay")
			if attr(delay, "mcpscope.call.state") != "cancelled" || len(delay.Events) == 0 || delay.Events[0].Name != "notifications/cancelled" {
				t.Errorf("delay: %v %v", delay.Attributes, delay.Events)
			}
			// Filtered: only the calls with an error.
			few := decodeOTLP(t, exportOf(t, path, "otlp", "~e"))
			if n := len(few.ResourceSpans[0].ScopeSpans[0].Spans); n != 2 {
				t.Errorf("~e: %d spans, want the tool error and the unknown tool", n)
			}
		})
	}
}

func one(t *testing.T, by map[string][]*tracepb.Span, name string) *tracepb.Span {
	t.Helper()
	if len(by[name]) != 1 {
		t.Fatalf("%d spans named %q", len(by[name]), name)
	}
	return by[name][0]
}

// decodeOTLP reads an export's one OTLP/JSON request, which holds one
// resource with one scope.
func decodeOTLP(t *testing.T, b []byte) *tracepb.TracesData {
	t.Helper()
	req := otlptest.Decode(t, b)
	if len(req.ResourceSpans) != 1 || len(req.ResourceSpans[0].ScopeSpans) != 1 {
		t.Fatalf("resource spans: %v", req)
	}
	return req
}

// TestHARLongStream: a stream longer than the in-memory limit (its body
// goes through a temporary file) comes out whole and valid, and so does a
// server's attempt at terminal escapes in it.
func TestHARLongStream(t *testing.T) {
	j := newHTTPJournal()
	add := j.add
	m := transport.Meta{HTTPMethod: "POST", URL: "http://127.0.0.1:1/mcp", Stream: "post:1"}
	out := m
	out.Headers = map[string]string{"Content-Type": "application/json"}
	add(transport.Frame{Dir: transport.Out, Kind: transport.Message, Meta: out,
		Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"burst","_meta":{"progressToken":1}}}`)})
	opened := m
	opened.Event, opened.Status, opened.Headers = transport.EvStreamOpened, 200, map[string]string{"Content-Type": "text/event-stream"}
	add(transport.Frame{Dir: transport.Local, Kind: transport.Event, Meta: opened})
	const events = 12000
	for i := 1; i <= events; i++ {
		ev := m
		ev.EventType, ev.EventID = "message", fmt.Sprint(i)
		add(transport.Frame{Dir: transport.In, Kind: transport.Message, Meta: ev,
			Data: []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":%d,"message":"step `+"\x1b[2J\u202e"+` %d"}}`, i, i))})
	}
	ev := m
	ev.EventType = "message"
	add(transport.Frame{Dir: transport.In, Kind: transport.Message, Meta: ev, Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)})
	closed := m
	closed.Event = transport.EvStreamClosed
	add(transport.Frame{Dir: transport.Local, Kind: transport.Event, Meta: closed})
	path := filepath.Join(t.TempDir(), "long.jsonl")
	os.WriteFile(path, j.b.Bytes(), 0o600)

	har := exportOf(t, path, "har", "")
	if bytes.ContainsAny(har, "\x1b\u202e") {
		t.Fatal("a terminal escape or a bidi override reached the HAR raw")
	}
	var inst any
	if err := json.Unmarshal(har, &inst); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if err := harSchema(t).Validate(inst); err != nil {
		t.Fatalf("not HAR 1.2: %v", err)
	}
	var doc harDoc
	json.Unmarshal(har, &doc)
	c := doc.Log.Entries[0].Response.Content
	if len(doc.Log.Entries) != 1 || c.Size != len(c.Text) || c.Size < 1<<20 || strings.Count(c.Text, "event: message\n") != events+1 ||
		!strings.Contains(c.Text, "\x1b[2J\u202e 12000") {
		t.Fatalf("%d entries; body %d bytes (size says %d), %d events", len(doc.Log.Entries), len(c.Text), c.Size, strings.Count(c.Text, "event: message\n"))
	}
}

// TestHARResume: a POST stream the server closes mid-call, resumed with a
// GET and Last-Event-ID, shows as the POST with what it carried and the
// GET, with the Last-Event-ID it sent and the rest of the call.
func TestHARResume(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	url := testservers.StartHTTP(t, testservers.HTTPOpts{EventStore: true})
	path := recordtest.Record(t, "resume", connect.Spec{URL: url}, func(ctx context.Context, t testing.TB, s *session.Session) {
		if _, err := recordtest.Tool(ctx, t, s, "drop-stream", map[string]any{"steps": 3, "intervalMs": 50, "retryMs": 50}); err != nil {
			t.Fatal(err)
		}
	})
	var doc struct {
		Log struct {
			Entries []struct {
				Request struct {
					Method  string
					Headers []struct{ Name, Value string }
				}
				Response struct{ Content struct{ Text string } }
				MCP      struct{ Stream, Resumes string } `json:"_mcpscope"`
			}
		}
	}
	out := exportOf(t, path, "har", "")
	json.Unmarshal(out, &doc)
	var post, get string
	lastID := ""
	for _, e := range doc.Log.Entries {
		switch {
		case e.Request.Method == "POST" && strings.Contains(e.Response.Content.Text, "step 1/3"):
			post = e.Response.Content.Text
		case e.Request.Method == "GET" && e.MCP.Resumes != "":
			get = e.Response.Content.Text
			for _, h := range e.Request.Headers {
				if h.Name == "Last-Event-ID" {
					lastID = h.Value
				}
			}
		}
	}
	if post == "" || !strings.Contains(get, "step 3/3") || !strings.Contains(get, "drop-stream: finished") || lastID == "" ||
		!strings.Contains(post, "id: "+lastID+"\n") {
		t.Fatalf("POST\n%s\nGET (Last-Event-ID %q)\n%s", post, lastID, get)
	}
}

// TestOTLPEraProbeRefused: a 2025 server that refuses the era probe
// with an error gives it its answer (legacy), not a failure: the probe's
// span is marked as the probe, refused, not an error span, and carries
// neither the session id nor the protocol version of the initialize that
// follows; the spans after it do.
func TestOTLPEraProbeRefused(t *testing.T) {
	j := newHTTPJournal()
	add := func(f transport.Frame) {
		if f.Meta.URL == "" {
			f.Meta.URL = "http://127.0.0.1:1/mcp"
		}
		j.add(f)
	}
	msg := func(dir transport.Dir, stream string, status int, data string) {
		add(transport.Frame{Dir: dir, Kind: transport.Message, Meta: transport.Meta{HTTPMethod: "POST", Stream: stream, Status: status}, Data: []byte(data)})
	}
	msg(transport.Out, "post:1", 0, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	msg(transport.In, "post:1", 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: Server not initialized"}}`)
	msg(transport.Out, "post:2", 0, `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	msg(transport.In, "post:2", 200, `{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`)
	add(transport.Frame{Dir: transport.Local, Kind: transport.Event, Meta: transport.Meta{Event: transport.EvSessionID, Detail: "sess-1"}})
	msg(transport.Out, "post:3", 0, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}`)
	msg(transport.In, "post:3", 200, `{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`)
	path := filepath.Join(t.TempDir(), "refused.jsonl")
	if err := os.WriteFile(path, j.b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	req := decodeOTLP(t, exportOf(t, path, "otlp", ""))
	by := map[string][]*tracepb.Span{}
	for _, sp := range req.ResourceSpans[0].ScopeSpans[0].Spans {
		by[sp.Name] = append(by[sp.Name], sp)
	}
	attrs := func(sp *tracepb.Span) map[string]string {
		m := map[string]string{}
		for _, a := range sp.Attributes {
			switch v := a.Value.Value.(type) {
			case *commonpb.AnyValue_BoolValue:
				m[a.Key] = strconv.FormatBool(v.BoolValue)
			case *commonpb.AnyValue_IntValue:
				m[a.Key] = strconv.FormatInt(v.IntValue, 10)
			default:
				m[a.Key] = a.Value.GetStringValue()
			}
		}
		return m
	}
	probe := one(t, by, "server/discover")
	p := attrs(probe)
	if probe.Status.Code == tracepb.Status_STATUS_CODE_ERROR || p["mcpscope.era.probe"] != "true" || p["mcpscope.era.probe.answer"] != "refused" ||
		p["rpc.response.status_code"] != "-32600" || p["error.type"] != "" || p["mcpscope.call.state"] != "legacy" {
		t.Errorf("refused probe: %v %v", p, probe.Status)
	}
	if _, ok := p["mcp.session.id"]; ok {
		t.Errorf("the probe carries the session id of the initialize after it: %v", p)
	}
	if _, ok := p["mcp.protocol.version"]; ok {
		t.Errorf("the refused probe carries the version initialize agreed: %v", p)
	}
	for _, name := range []string{"initialize", "tools/call echo"} {
		sp := one(t, by, name)
		a := attrs(sp)
		if a["mcp.session.id"] != "sess-1" || a["mcp.protocol.version"] != "2025-11-25" || a["mcpscope.era.probe"] != "" ||
			sp.Status.Code == tracepb.Status_STATUS_CODE_ERROR {
			t.Errorf("%s: %v %v", name, a, sp.Status)
		}
	}
}

// TestOTLPLateProgress: over HTTP a call's last progress can come on the
// listen stream after its response on the POST. It is still an event of
// the call's span (marked late) when it comes within lateWindow; one that
// comes later than that is not.
func TestOTLPLateProgress(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"format":"mcpscope-journal/1","started":"2026-01-01T00:00:00Z","target":"http: http://127.0.0.1:1/mcp","pid":1}` + "\n")
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	seq := uint64(0)
	add := func(after time.Duration, dir transport.Dir, stream, data string) {
		seq++
		at = at.Add(after)
		m := transport.Meta{HTTPMethod: "POST", URL: "http://127.0.0.1:1/mcp", Stream: stream}
		if stream == "get:1" {
			m.HTTPMethod = "GET"
		}
		b.Write(journal.AppendRecord(nil, seq, transport.Frame{Time: at, Dir: dir, Kind: transport.Message, Meta: m, Data: []byte(data)}))
	}
	progress := func(token, n int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%d,"progress":%d,"total":2}}`, token, n)
	}
	for id := 1; id <= 2; id++ {
		add(time.Millisecond, transport.Out, fmt.Sprintf("post:%d", id),
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow%d","_meta":{"progressToken":%d}}}`, id, id, id))
		add(time.Millisecond, transport.In, "get:1", progress(id, 1))
		add(time.Millisecond, transport.In, fmt.Sprintf("post:%d", id), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}`, id))
	}
	add(3*time.Millisecond, transport.In, "get:1", progress(1, 2)) // slow1's last step, late
	add(3*time.Second, transport.In, "get:1", progress(2, 2))      // slow2's, far too late
	add(time.Millisecond, transport.Out, "post:3", `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	path := filepath.Join(t.TempDir(), "late.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	req := decodeOTLP(t, exportOf(t, path, "otlp", ""))
	by := map[string][]*tracepb.Span{}
	for _, sp := range req.ResourceSpans[0].ScopeSpans[0].Spans {
		by[sp.Name] = append(by[sp.Name], sp)
	}
	steps := func(sp *tracepb.Span) (n, late int) {
		for _, e := range sp.Events {
			if e.Name != "notifications/progress" {
				continue
			}
			n++
			for _, a := range e.Attributes {
				if a.Key == "mcpscope.late" {
					late++
				}
			}
		}
		return n, late
	}
	if n, late := steps(one(t, by, "tools/call slow1")); n != 2 || late != 1 {
		t.Errorf("slow1: %d progress events (%d late), want 2 (1 late)", n, late)
	}
	if n, late := steps(one(t, by, "tools/call slow2")); n != 1 || late != 0 {
		t.Errorf("slow2: %d progress events (%d late), want 1: a step 3 s after the response is not the span's", n, late)
	}
}

// httpJournal is a journal of an HTTP session written by hand: the
// frames added are numbered in order, a millisecond apart.
type httpJournal struct {
	b   bytes.Buffer
	at  time.Time
	seq uint64
}

func newHTTPJournal() *httpJournal {
	j := &httpJournal{at: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	j.b.WriteString(`{"format":"mcpscope-journal/1","started":"2026-01-01T00:00:00Z","target":"http: http://127.0.0.1:1/mcp","pid":1}` + "\n")
	return j
}

func (j *httpJournal) add(f transport.Frame) {
	j.seq++
	j.at = j.at.Add(time.Millisecond)
	f.Time = j.at
	j.b.Write(journal.AppendRecord(nil, j.seq, f))
}
