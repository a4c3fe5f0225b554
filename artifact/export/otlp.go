package export

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"mcpscope/artifact/scan"
	"mcpscope/filter"
	"mcpscope/internal/ascii"
	"mcpscope/internal/render"
	"mcpscope/internal/termsafe"
	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/transport"
)

// OTLP/JSON (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding):
// protobuf's JSON mapping with lowerCamelCase names, enums as numbers,
// 64-bit integers as strings, and trace and span ids as hex (not base64:
// OTLP's one departure from protobuf's mapping).
type (
	otlpSpan struct {
		TraceID            string      `json:"traceId"`
		SpanID             string      `json:"spanId"`
		TraceState         string      `json:"traceState,omitempty"`
		ParentSpanID       string      `json:"parentSpanId,omitempty"`
		Name               string      `json:"name"`
		Kind               int         `json:"kind"`
		StartTimeUnixNano  unixNano    `json:"startTimeUnixNano"`
		EndTimeUnixNano    unixNano    `json:"endTimeUnixNano"`
		Attributes         []otlpKV    `json:"attributes"`
		Events             []otlpEvent `json:"events,omitempty"`
		DroppedEventsCount uint32      `json:"droppedEventsCount,omitempty"`
		Links              []otlpLink  `json:"links,omitempty"`
		Status             otlpStatus  `json:"status"`
	}
	otlpKV struct {
		Key   string    `json:"key"`
		Value otlpValue `json:"value"`
	}
	otlpValue struct {
		StringValue *string  `json:"stringValue,omitempty"`
		IntValue    *string  `json:"intValue,omitempty"`
		DoubleValue *float64 `json:"doubleValue,omitempty"`
		BoolValue   *bool    `json:"boolValue,omitempty"`
	}
	otlpEvent struct {
		TimeUnixNano unixNano `json:"timeUnixNano"`
		Name         string   `json:"name"`
		Attributes   []otlpKV `json:"attributes,omitempty"`
	}
	otlpLink struct {
		TraceID    string   `json:"traceId"`
		SpanID     string   `json:"spanId"`
		Attributes []otlpKV `json:"attributes,omitempty"`
	}
	otlpStatus struct {
		Message string `json:"message,omitempty"`
		Code    int    `json:"code,omitempty"`
	}
)

const (
	spanKindClient  = 3
	statusCodeError = 2
	// maxSpanEvents bounds the events one span keeps (a call that streams a
	// million progress notifications); the rest are counted as dropped.
	maxSpanEvents = 1000
	// lateWindow is how long (journal time) an ended span waits for its
	// call's late frames before it is written: over HTTP a progress
	// notification on the listen stream can arrive after the response on
	// the POST, which the server sent after it.
	lateWindow = time.Second
	// maxClosing bounds the ended spans waiting; past it the oldest is
	// written at once.
	maxClosing = 1024
)

func str(k, v string) otlpKV { return otlpKV{Key: k, Value: otlpValue{StringValue: &v}} }

func integer(k string, v int64) otlpKV {
	s := strconv.FormatInt(v, 10)
	return otlpKV{Key: k, Value: otlpValue{IntValue: &s}}
}

func double(k string, v float64) otlpKV { return otlpKV{Key: k, Value: otlpValue{DoubleValue: &v}} }

func boolean(k string, v bool) otlpKV { return otlpKV{Key: k, Value: otlpValue{BoolValue: &v}} }

// unixNano is a time as OTLP/JSON writes it: nanoseconds since the epoch,
// as a string (a 64-bit integer).
type unixNano int64

func (n unixNano) MarshalJSON() ([]byte, error) {
	return strconv.AppendQuote(nil, strconv.FormatInt(int64(n), 10)), nil
}

func nanos(t time.Time) unixNano { return unixNano(t.UnixNano()) }

// span is a call being read.
type span struct {
	s       otlpSpan
	index   int // the call's index: its place in tracer.open
	key     string
	method  string
	name    string
	matched bool
	retry   bool      // carries inputResponses or requestState: an MRTR round after the first
	probe   bool      // the era probe (server/discover before anything else)
	refused bool      // the era probe, answered with an error: the server's era is 2025
	ended   time.Time // when the call ended; the span waits lateWindow to be written
}

// OTLP writes one trace for the journal, a CLIENT span per client request
// (the OpenTelemetry semantic conventions for MCP: span name "{method}
// {tool or prompt}", mcp.method.name, mcp.protocol.version,
// mcp.session.id, jsonrpc.request.id, gen_ai.tool.name, error.type…),
// with span events for what happened during the call: progress, log and
// other notifications on its stream, server requests made on its behalf
// (sampling, elicitation), its cancellation, a late answer. An MRTR round
// that continues an input_required one links to it; a request that
// carries a W3C traceparent in its _meta joins that trace as its child.
// Spans are written as calls end (after lateWindow, so that a call's late
// frames are its events too). With a filter, the calls holding a frame it
// matches. The live exporter (package otlplive) builds its spans with the
// same tracer.
func OTLP(w io.Writer, path string, o Options) error {
	h, err := scan.Header(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	written := 0
	var b []byte // one buffer for every span's JSON
	ox := newTracer(h, o.Filter, func(s *otlpSpan) error {
		var err error
		var plain bool
		b, plain, err = appendSpanJSONPlain(b[:0], s)
		if err != nil {
			return err
		}
		if written > 0 {
			bw.WriteByte(',')
		}
		written++
		bw.WriteByte('\n')
		if !plain {
			b = termsafe.JSON(b)
		}
		_, err = bw.Write(b)
		return err
	})
	res, _ := json.Marshal(resourceAttrs(h, o.Version))
	scope, _ := json.Marshal(map[string]string{"name": "mcpscope", "version": o.Version})
	bw.WriteString(`{"resourceSpans":[{"resource":{"attributes":`)
	bw.Write(termsafe.JSON(res))
	bw.WriteString(`},"scopeSpans":[{"scope":`)
	bw.Write(termsafe.JSON(scope))
	bw.WriteString(`,"spans":[`)
	// A span reads its request's params from the request's own frame; a
	// call keeps them only for a filter to read, so without one a huge
	// request is never cloned.
	_, err = scan.File(path, scan.Options{Final: ox.m.final(), Borrow: true, NoParams: ox.m.f == nil}, ox.frame)
	if ferr := ox.finish(); ferr != nil && err == nil {
		err = ferr
	}
	bw.WriteString("\n]}]}]}\n")
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

// traceID is the journal's trace: the same for the same journal, whoever
// reads it (export, or the live exporter as it is written).
func traceID(h journal.Header) string {
	sum := sha256.Sum256([]byte(h.Started.Format(time.RFC3339Nano) + "\x00" + strconv.Itoa(h.PID) + "\x00" + h.Target))
	return hex.EncodeToString(sum[:16])
}

// resourceAttrs describe what made the trace: mcpscope, and the journal.
func resourceAttrs(h journal.Header, version string) []otlpKV {
	return []otlpKV{str("service.name", "mcpscope"), str("service.version", version),
		str("mcpscope.journal.target", transport.RedactTarget(h.Target)), str("mcpscope.journal.started", h.Started.Format(time.RFC3339Nano))}
}

// tracer builds a journal's spans from its frames as they stream by and
// hands each to emit as it is done.
type tracer struct {
	emit    func(*otlpSpan) error
	m       *matcher
	trace   string
	info    scan.Info
	open    map[int]*span       // by call index, ended ones included until written
	closing []*span             // ended, waiting for late frames, oldest first
	byKey   map[string]int      // call key → index, for server requests on a call's stream
	rounds  map[string]otlpLink // method+name → the last input_required round
	last    time.Time
	// net is network's answer for netFor (the transport and URL it was
	// worked out from): the same for nearly every span.
	net    []otlpKV
	netFor [2]string
	// version and session are the last mcp.protocol.version and
	// mcp.session.id attributes, shared by the spans that carry the same.
	version, session otlpKV
	// free holds the attribute slices of written spans, for the next
	// spans to fill (nothing keeps a span once emit has returned).
	free [][]otlpKV
}

func newTracer(h journal.Header, f *filter.Filter, emit func(*otlpSpan) error) *tracer {
	return &tracer{emit: emit, m: newMatcher(f), trace: traceID(h), open: map[int]*span{}, byKey: map[string]int{},
		rounds: map[string]otlpLink{}}
}

// frame reads one frame.
func (ox *tracer) frame(fr *scan.Frame) error {
	ox.last = fr.Time
	ox.info.Observe(fr)
	return ox.step(fr)
}

// finish writes every span left: the ended ones, and the calls still
// unanswered when the journal ended, which end with its last frame, lost,
// as journal and open say (session.RecordingEnded).
func (ox *tracer) finish() error {
	err := ox.flushClosing(time.Time{}, true)
	var rest []int
	for i := range ox.open {
		rest = append(rest, i)
	}
	sort.Ints(rest)
	for _, i := range rest {
		sp := ox.open[i]
		sp.s.Attributes = append(sp.s.Attributes, str("mcpscope.call.state", lostWord(session.RecordingEnded)))
		sp.s.Status = otlpStatus{Code: statusCodeError, Message: session.RecordingEnded}
		if werr := ox.write(sp, ox.last); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}

func (ox *tracer) spanID(i int) string {
	var b [64]byte // the trace (32 hex digits, longer only in tests) and i, on the stack
	in := append(b[:0], ox.trace...)
	in = binary.BigEndian.AppendUint64(in, uint64(i))
	sum := sha256.Sum256(in)
	return hex.EncodeToString(sum[:8])
}

// flushClosing writes the ended spans whose window closed before now (all
// of them with all).
func (ox *tracer) flushClosing(now time.Time, all bool) error {
	n := 0
	for _, sp := range ox.closing {
		if !all && !sp.ended.Add(lateWindow).Before(now) {
			break
		}
		n++
		if err := ox.write(sp, sp.ended); err != nil {
			return err
		}
	}
	ox.closing = ox.closing[n:]
	return nil
}

func (ox *tracer) step(fr *scan.Frame) error {
	if err := ox.flushClosing(fr.Time, false); err != nil {
		return err
	}
	if fr.Call == nil {
		if fr.Meta.Event == transport.EvClosed || fr.Meta.Event == transport.EvExited {
			return ox.lost(fr)
		}
		// A server request made on a call's own HTTP stream is a round of
		// that call (the 2025 era's sampling and elicitation).
		if fr.Dir == transport.In && fr.Env != nil && fr.Env.Class() == journal.ClassRequest {
			if key, ok := strings.CutPrefix(fr.Meta.Stream, "post:"); ok {
				if i, ok := ox.byKey[key]; ok {
					sp := ox.open[i]
					ox.event(sp, fr.Time, fr.Env.Method, integer("mcpscope.seq", int64(fr.Seq)), str("jsonrpc.request.id", idText(fr.Env.Key())))
					if !sp.matched && ox.m.match(fr) {
						sp.matched = true
					}
				}
			}
		}
		return nil
	}
	i := fr.CallIndex
	sp := ox.open[i]
	if sp == nil {
		if fr.Dir != transport.Out || fr.Env == nil || fr.Env.Class() != journal.ClassRequest {
			return nil // a late frame of a call already written
		}
		sp = ox.start(fr)
		ox.open[i] = sp
		ox.byKey[sp.key] = i
	}
	if !sp.matched && ox.m.match(fr) {
		sp.matched = true
	}
	e := fr.Env
	if !sp.ended.IsZero() {
		// A frame of the call after it ended: an event of its span, marked.
		if e != nil && (e.Method != "" || e.Result != nil || e.Error != nil) {
			name := e.Method
			if name == "" {
				name = "late response"
			}
			ox.event(sp, fr.Time, name, integer("mcpscope.seq", int64(fr.Seq)), str("mcpscope.late", "after the call ended"))
		}
		return nil
	}
	switch {
	case e == nil:
		if _, _, ok := journal.DetachedNote(&fr.Meta); ok && fr.Call.State == session.StateDetached {
			return ox.end(sp, fr) // left running on the server, to rejoin: not lost
		}
	case fr.Dir == transport.Out && e.Method == "notifications/cancelled":
		// The span ends with the cancellation: a late answer, if any, is
		// not waited for.
		ox.event(sp, fr.Time, e.Method, integer("mcpscope.seq", int64(fr.Seq)))
		return ox.end(sp, fr)
	case fr.Dir == transport.In && e.Method == "notifications/progress":
		var p struct {
			Progress float64 `json:"progress"`
			Total    float64 `json:"total"`
			Message  string  `json:"message"`
		}
		if _, v, total, msg, ok := e.ProgressParams(); ok {
			// The decoding pass read them, as json.Unmarshal would.
			p.Progress, p.Total, p.Message = v, total, msg
		} else {
			_ = json.Unmarshal(e.Params, &p) // what fields it fills before it fails
		}
		attrs := make([]otlpKV, 2, 4)
		attrs[0], attrs[1] = integer("mcpscope.seq", int64(fr.Seq)), double("mcpscope.progress", p.Progress)
		if p.Total != 0 {
			attrs = append(attrs, double("mcpscope.progress.total", p.Total))
		}
		if p.Message != "" {
			attrs = append(attrs, str("mcpscope.progress.message", p.Message))
		}
		ox.event(sp, fr.Time, e.Method, attrs...)
	case fr.Dir == transport.In && e.Method != "":
		ox.event(sp, fr.Time, e.Method, integer("mcpscope.seq", int64(fr.Seq)))
	case fr.Dir == transport.In && (e.Result != nil || e.Error != nil):
		if fr.Late {
			return nil
		}
		return ox.end(sp, fr)
	}
	return nil
}

// lost ends the spans of the calls a closed transport left unanswered.
func (ox *tracer) lost(fr *scan.Frame) error {
	var open []int
	for i := range ox.open {
		open = append(open, i)
	}
	sort.Ints(open)
	for _, i := range open {
		sp := ox.open[i]
		if !sp.ended.IsZero() {
			continue // it ended before: it is written when its window closes
		}
		sp.s.Attributes = append(sp.s.Attributes, str("error.type", "transport_closed"), str("mcpscope.call.state", lostWord(fr.Meta.Detail)))
		sp.s.Status = otlpStatus{Code: statusCodeError, Message: fr.Meta.Event + ": " + fr.Meta.Detail}
		if err := ox.write(sp, fr.Time); err != nil {
			return err
		}
	}
	return nil
}

// lostWord is the state word of a call its transport or recording left
// unanswered for reason: session.StateWord's, which journal and open show.
func lostWord(reason string) string {
	return session.StateWord(&session.CallSnapshot{State: session.StateError,
		Failure: &session.Failure{Reason: reason, Kind: session.ErrClosed}})
}

// start opens the span of a request.
func (ox *tracer) start(fr *scan.Frame) *span {
	c := fr.Call
	sp := &span{index: fr.CallIndex, key: c.Key, method: c.Method, name: c.Name}
	name := c.Method
	// Room for what a span is given as it starts, ends and is written.
	var attrs []otlpKV
	if n := len(ox.free); n > 0 {
		attrs, ox.free = ox.free[n-1][:1], ox.free[:n-1]
	} else {
		attrs = make([]otlpKV, 1, 16)
	}
	attrs[0] = str("mcp.method.name", c.Method)
	if id := idText(c.Key); id != "" {
		attrs = append(attrs, str("jsonrpc.request.id", id))
	}
	switch c.Method {
	case "tools/call":
		name += " " + c.Name
		attrs = append(attrs, str("gen_ai.tool.name", c.Name), str("gen_ai.operation.name", "execute_tool"))
	case "prompts/get":
		name += " " + c.Name
		attrs = append(attrs, str("gen_ai.prompt.name", c.Name))
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		attrs = append(attrs, str("mcp.resource.uri", c.Name))
	}
	if c.Probe {
		// The era probe: sent before initialize, under no session.
		sp.probe = true
		attrs = append(attrs, boolean("mcpscope.era.probe", true))
	}
	attrs = append(attrs, integer("mcpscope.seq", int64(fr.Seq)))
	sp.s = otlpSpan{TraceID: ox.trace, SpanID: ox.spanID(fr.CallIndex), Name: name, Kind: spanKindClient,
		StartTimeUnixNano: nanos(fr.Time), Attributes: attrs}
	var p struct {
		InputResponses json.RawMessage `json:"inputResponses"`
		RequestState   json.RawMessage `json:"requestState"`
		Meta           struct {
			TraceParent string `json:"traceparent"`
			TraceState  string `json:"tracestate"`
		} `json:"_meta"`
	}
	if params := fr.Env.Params; mayHoldKey(params, "inputResponses", "requestState", "traceparent") && json.Unmarshal(params, &p) == nil {
		sp.retry = p.InputResponses != nil || p.RequestState != nil
		if trace, parent, ok := parseTraceParent(p.Meta.TraceParent); ok {
			// The host traces this call: the span is its child, in its trace.
			sp.s.TraceID, sp.s.ParentSpanID = trace, parent
			if validTraceState(p.Meta.TraceState) {
				sp.s.TraceState = p.Meta.TraceState
			}
		}
	}
	if sp.retry {
		if prev, ok := ox.rounds[c.Method+" "+c.Name]; ok {
			prev.Attributes = []otlpKV{str("mcpscope.link", "continues the input_required round")}
			sp.s.Links = append(sp.s.Links, prev)
		}
	}
	return sp
}

// parseTraceParent reads a W3C traceparent (version-traceid-parentid-flags,
// https://www.w3.org/TR/trace-context/#traceparent-header): its trace and
// parent span ids, lower-case hex, when it is well formed.
func parseTraceParent(v string) (trace, parent string, ok bool) {
	parts := strings.Split(strings.TrimSpace(v), "-")
	if len(parts) < 4 || len(parts[0]) != 2 || parts[0] == "ff" || (parts[0] == "00" && len(parts) != 4) {
		return "", "", false
	}
	trace, parent = parts[1], parts[2]
	if !lowerHex(parts[0]) || !lowerHex(trace) || len(trace) != 32 || !lowerHex(parent) || len(parent) != 16 ||
		!lowerHex(parts[3]) || len(parts[3]) != 2 || strings.Trim(trace, "0") == "" || strings.Trim(parent, "0") == "" {
		return "", "", false
	}
	return trace, parent, true
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return s != ""
}

// validTraceState keeps a tracestate that W3C's limits allow: at most 512
// printable ASCII characters.
func validTraceState(v string) bool {
	if v == "" || len(v) > 512 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

// end closes a span with how its call ended and writes it.
func (ox *tracer) end(sp *span, fr *scan.Frame) error {
	c := fr.Call
	s := &sp.s
	state := session.StateWord(c)
	switch {
	case sp.probe && fr.Env != nil && fr.Env.Error != nil:
		// The era probe refused: the server's answer (it speaks the 2025
		// era, initialize comes next), not a failure. Its code is kept,
		// its status is not an error.
		sp.refused = true
		code := strconv.FormatInt(fr.Env.Error.Code, 10)
		s.Attributes = append(s.Attributes, str("mcpscope.era.probe.answer", "refused"), str("rpc.response.status_code", code))
		s.Status = otlpStatus{Message: "era probe refused: " + fr.Env.Error.Message}
	case sp.probe && fr.Env != nil && fr.Env.Result != nil:
		// A DiscoverResult: the era is the versions it lists (scan.Info).
		s.Attributes = append(s.Attributes, str("mcpscope.era.probe.answer", "answered"))
	case fr.Env != nil && fr.Env.Error != nil:
		code := strconv.FormatInt(fr.Env.Error.Code, 10)
		s.Attributes = append(s.Attributes, str("error.type", code), str("rpc.response.status_code", code))
		s.Status = otlpStatus{Code: statusCodeError, Message: fr.Env.Error.Message}
	case c.IsError && fr.Env != nil && fr.Env.Result != nil:
		s.Attributes = append(s.Attributes, str("error.type", "tool_error"))
		var res json.RawMessage
		if fr.Env != nil {
			res = fr.Env.Result
		}
		s.Status = otlpStatus{Code: statusCodeError, Message: render.FirstText(res, 200)}
	case fr.Env != nil && fr.Env.Method == "notifications/cancelled":
		s.Status = otlpStatus{Message: "cancelled by the client"}
		state = "cancelled"
	case c.State == session.StateDetached && c.Handle != "":
		s.Attributes = append(s.Attributes, str("mcpscope.call.handle", c.Handle))
		s.Status = otlpStatus{Message: "detached as " + c.Handle + ": left running on the server, to rejoin"}
	}
	if state == "input" {
		ox.rounds[sp.method+" "+sp.name] = otlpLink{TraceID: s.TraceID, SpanID: s.SpanID}
		ox.event(sp, fr.Time, "input_required", integer("mcpscope.seq", int64(fr.Seq)))
	}
	s.Attributes = append(s.Attributes, str("mcpscope.call.state", state))
	if fr.Env != nil && (fr.Env.Result != nil || fr.Env.Error != nil) {
		s.Attributes = append(s.Attributes, integer("mcpscope.response.seq", int64(fr.Seq)))
	}
	sp.ended = fr.Time
	ox.closing = append(ox.closing, sp)
	if len(ox.closing) > maxClosing {
		sp := ox.closing[0]
		ox.closing = ox.closing[1:]
		return ox.write(sp, sp.ended)
	}
	return nil
}

// write emits the span (when the filter kept it) and forgets it.
func (ox *tracer) write(sp *span, end time.Time) error {
	if ox.open[sp.index] == sp {
		delete(ox.open, sp.index)
	}
	delete(ox.byKey, sp.key)
	defer ox.recycle(sp)
	if !sp.matched {
		return nil
	}
	s := &sp.s
	s.EndTimeUnixNano = nanos(end)
	// The era probe went before any session, and a refused one was not
	// asked in the version the session later agreed: it carries neither.
	if ox.info.ProtocolVersion != "" && !sp.refused {
		if ox.version.Value.StringValue == nil || *ox.version.Value.StringValue != ox.info.ProtocolVersion {
			ox.version = str("mcp.protocol.version", ox.info.ProtocolVersion)
		}
		s.Attributes = append(s.Attributes, ox.version)
	}
	if ox.info.SessionID != "" && !sp.probe {
		if ox.session.Value.StringValue == nil || *ox.session.Value.StringValue != ox.info.SessionID {
			ox.session = str("mcp.session.id", ox.info.SessionID)
		}
		s.Attributes = append(s.Attributes, ox.session)
	}
	if k := [2]string{ox.info.Transport, ox.info.URL}; k != ox.netFor || ox.net == nil {
		ox.net, ox.netFor = ox.network(), k
	}
	s.Attributes = append(s.Attributes, ox.net...)
	return ox.emit(s)
}

// recycle keeps a written span's attribute slice for a later span.
func (ox *tracer) recycle(sp *span) {
	if a := sp.s.Attributes; cap(a) >= 16 && len(ox.free) < 64 {
		clear(a[:cap(a)]) // drop what it points to
		ox.free = append(ox.free, a[:0])
	}
	sp.s.Attributes = nil
}

// network is where the server was: a pipe (stdio) or an HTTP endpoint.
func (ox *tracer) network() []otlpKV {
	switch ox.info.Transport {
	case "stdio":
		return []otlpKV{str("network.transport", "pipe")}
	case "":
		return nil
	}
	out := []otlpKV{str("network.transport", "tcp"), str("network.protocol.name", "http")}
	u, err := url.Parse(transport.RedactURL(ox.info.URL))
	if err == nil && u.Scheme == "http" {
		// network.protocol.version, as the conventions for MCP over HTTP
		// want it: the HTTP version. Over plain http mcpscope's client
		// speaks HTTP/1.1 (no h2c); over https the version is negotiated
		// (ALPN) and the journal does not record it, so it is not set.
		out = append(out, str("network.protocol.version", "1.1"))
	}
	if err == nil && u.Host != "" {
		host, port, err := net.SplitHostPort(u.Host)
		if err != nil {
			host, port = u.Host, map[string]string{"https": "443"}[u.Scheme]
			if port == "" {
				port = "80"
			}
		}
		out = append(out, str("server.address", host))
		if n, err := strconv.Atoi(port); err == nil {
			out = append(out, integer("server.port", int64(n)))
		}
	}
	return out
}

func (ox *tracer) event(sp *span, at time.Time, name string, attrs ...otlpKV) {
	if len(sp.s.Events) >= maxSpanEvents {
		sp.s.DroppedEventsCount++
		return
	}
	sp.s.Events = append(sp.s.Events, otlpEvent{TimeUnixNano: nanos(at), Name: name, Attributes: attrs})
}

// idText is a JSON-RPC id as the conventions write it: the number, or the
// string without its quotes.
func idText(key string) string {
	if s, err := strconv.Unquote(key); err == nil {
		return s
	}
	return key
}

// mayHoldKey reports whether json could hold a member named one of keys as
// encoding/json matches names (folded): false only when it is plain ASCII
// without escapes and no key appears in it, whatever the case, so that
// decoding it would find none of them.
func mayHoldKey(json []byte, keys ...string) bool {
	if bytes.IndexByte(json, '\\') >= 0 || !asciiBytes(json) {
		return true // an escaped or non-ASCII name may fold to a key
	}
	// Without escapes a member's name starts right after its opening
	// quote: only there can a key begin.
	for i := 0; ; {
		j := bytes.IndexByte(json[i:], '"')
		if j < 0 {
			return false
		}
		i += j + 1
		for _, k := range keys {
			if len(json)-i >= len(k) && (k == "" || ascii.Lower(json[i]) == ascii.Lower(k[0])) && bytes.EqualFold(json[i:i+len(k)], []byte(k)) {
				return true
			}
		}
	}
}

// asciiBytes reports whether b is all ASCII, a word at a time.
func asciiBytes(b []byte) bool {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
