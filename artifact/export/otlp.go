package export

import (
	"bufio"
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

	"mcpscope/artifact/scan"
	"mcpscope/internal/render"
	"mcpscope/internal/termsafe"
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
		Name               string      `json:"name"`
		Kind               int         `json:"kind"`
		StartTimeUnixNano  string      `json:"startTimeUnixNano"`
		EndTimeUnixNano    string      `json:"endTimeUnixNano"`
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
		TimeUnixNano string   `json:"timeUnixNano"`
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

func nanos(t time.Time) string { return strconv.FormatInt(t.UnixNano(), 10) }

// span is a call being read.
type span struct {
	s       otlpSpan
	key     string
	method  string
	name    string
	matched bool
	retry   bool      // carries inputResponses or requestState: an MRTR round after the first
	ended   time.Time // when the call ended; the span waits lateWindow to be written
}

// OTLP writes one trace for the journal, a CLIENT span per client request
// (the OpenTelemetry semantic conventions for MCP: span name "{method}
// {tool or prompt}", mcp.method.name, mcp.protocol.version,
// mcp.session.id, jsonrpc.request.id, gen_ai.tool.name, error.type…),
// with span events for what happened during the call: progress, log and
// other notifications on its stream, server requests made on its behalf
// (sampling, elicitation), its cancellation, a late answer. An MRTR round
// that continues an input_required one links to it. Spans are written as
// calls end (after lateWindow, so that a call's late frames are its
// events too). With a filter, the calls holding a frame it matches.
func OTLP(w io.Writer, path string, o Options) error {
	h, err := scan.Header(path)
	if err != nil {
		return err
	}
	ox := &otlpWriter{bw: bufio.NewWriterSize(w, 1<<16), m: newMatcher(o.Filter), open: map[int]*span{}, byKey: map[string]int{},
		rounds: map[string]string{}}
	sum := sha256.Sum256([]byte(h.Started.Format(time.RFC3339Nano) + "\x00" + strconv.Itoa(h.PID) + "\x00" + h.Target))
	ox.trace = hex.EncodeToString(sum[:16])
	res, _ := json.Marshal([]otlpKV{str("service.name", "mcpscope"), str("service.version", o.Version),
		str("mcpscope.journal.target", h.Target), str("mcpscope.journal.started", h.Started.Format(time.RFC3339Nano))})
	scope, _ := json.Marshal(map[string]string{"name": "mcpscope", "version": o.Version})
	ox.bw.WriteString(`{"resourceSpans":[{"resource":{"attributes":`)
	ox.bw.Write(termsafe.JSON(res))
	ox.bw.WriteString(`},"scopeSpans":[{"scope":`)
	ox.bw.Write(termsafe.JSON(scope))
	ox.bw.WriteString(`,"spans":[`)
	_, err = scan.File(path, scan.Options{Final: ox.m.final()}, func(fr *scan.Frame) error {
		ox.last = fr.Time
		ox.info.Observe(fr)
		return ox.frame(fr)
	})
	if ferr := ox.flushClosing(time.Time{}, true); ferr != nil && err == nil {
		err = ferr
	}
	var rest []int
	for i := range ox.open {
		rest = append(rest, i)
	}
	sort.Ints(rest)
	for _, i := range rest {
		sp := ox.open[i]
		sp.s.Attributes = append(sp.s.Attributes, str("mcpscope.call.state", "unanswered"))
		sp.s.Status = otlpStatus{Message: "no answer when the journal ended"}
		if werr := ox.write(sp, ox.last); werr != nil && err == nil {
			err = werr
		}
	}
	ox.bw.WriteString("\n]}]}]}\n")
	if ferr := ox.bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

type otlpWriter struct {
	bw      *bufio.Writer
	m       *matcher
	trace   string
	info    scan.Info
	open    map[int]*span     // by call index, ended ones included until written
	closing []*span           // ended, waiting for late frames, oldest first
	byKey   map[string]int    // call key → index, for server requests on a call's stream
	rounds  map[string]string // method+name → span id of the last input_required round
	written int
	last    time.Time
}

func (ox *otlpWriter) spanID(i int) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(i))
	sum := sha256.Sum256(append([]byte(ox.trace), b[:]...))
	return hex.EncodeToString(sum[:8])
}

// flushClosing writes the ended spans whose window closed before now (all
// of them with all).
func (ox *otlpWriter) flushClosing(now time.Time, all bool) error {
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

func (ox *otlpWriter) frame(fr *scan.Frame) error {
	if err := ox.flushClosing(fr.Time, false); err != nil {
		return err
	}
	if fr.Call == nil {
		if fr.Meta.Event == transport.EvClosed || fr.Meta.Event == transport.EvExited {
			return ox.lost(fr)
		}
		// A server request made on a call's own HTTP stream is a round of
		// that call (the 2025 era's sampling and elicitation).
		if fr.Dir == transport.In && fr.Env != nil && fr.Env.Class() == session.ClassRequest {
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
		if fr.Dir != transport.Out || fr.Env == nil || fr.Env.Class() != session.ClassRequest {
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
		_ = json.Unmarshal(e.Params, &p)
		attrs := []otlpKV{integer("mcpscope.seq", int64(fr.Seq)), double("mcpscope.progress", p.Progress)}
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
func (ox *otlpWriter) lost(fr *scan.Frame) error {
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
		sp.s.Attributes = append(sp.s.Attributes, str("error.type", "transport_closed"), str("mcpscope.call.state", "lost"))
		sp.s.Status = otlpStatus{Code: statusCodeError, Message: fr.Meta.Event + ": " + fr.Meta.Detail}
		if err := ox.write(sp, fr.Time); err != nil {
			return err
		}
	}
	return nil
}

// start opens the span of a request.
func (ox *otlpWriter) start(fr *scan.Frame) *span {
	c := fr.Call
	sp := &span{key: c.Key, method: c.Method, name: c.Name}
	name := c.Method
	attrs := []otlpKV{str("mcp.method.name", c.Method)}
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
	attrs = append(attrs, integer("mcpscope.seq", int64(fr.Seq)))
	sp.s = otlpSpan{TraceID: ox.trace, SpanID: ox.spanID(fr.CallIndex), Name: name, Kind: spanKindClient,
		StartTimeUnixNano: nanos(fr.Time), Attributes: attrs}
	var p map[string]json.RawMessage
	if json.Unmarshal(c.Params, &p) == nil {
		_, a := p["inputResponses"]
		_, b := p["requestState"]
		sp.retry = a || b
	}
	if prev := ox.rounds[c.Method+" "+c.Name]; sp.retry && prev != "" {
		sp.s.Links = append(sp.s.Links, otlpLink{TraceID: ox.trace, SpanID: prev,
			Attributes: []otlpKV{str("mcpscope.link", "continues the input_required round")}})
	}
	return sp
}

// end closes a span with how its call ended and writes it.
func (ox *otlpWriter) end(sp *span, fr *scan.Frame) error {
	c := fr.Call
	s := &sp.s
	state := session.StateWord(c)
	switch {
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
	}
	if state == "input" {
		ox.rounds[sp.method+" "+sp.name] = s.SpanID
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
func (ox *otlpWriter) write(sp *span, end time.Time) error {
	for i, x := range ox.open {
		if x == sp {
			delete(ox.open, i)
			break
		}
	}
	delete(ox.byKey, sp.key)
	if !sp.matched {
		return nil
	}
	s := &sp.s
	s.EndTimeUnixNano = nanos(end)
	if ox.info.ProtocolVersion != "" {
		s.Attributes = append(s.Attributes, str("mcp.protocol.version", ox.info.ProtocolVersion))
	}
	if ox.info.SessionID != "" {
		s.Attributes = append(s.Attributes, str("mcp.session.id", ox.info.SessionID))
	}
	s.Attributes = append(s.Attributes, ox.network()...)
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if ox.written > 0 {
		ox.bw.WriteByte(',')
	}
	ox.written++
	ox.bw.WriteByte('\n')
	_, err = ox.bw.Write(termsafe.JSON(b))
	return err
}

// network is where the server was: a pipe (stdio) or an HTTP endpoint.
func (ox *otlpWriter) network() []otlpKV {
	switch ox.info.Transport {
	case "stdio":
		return []otlpKV{str("network.transport", "pipe")}
	case "":
		return nil
	}
	out := []otlpKV{str("network.transport", "tcp"), str("network.protocol.name", "http")}
	if u, err := url.Parse(transport.RedactURL(ox.info.URL)); err == nil && u.Host != "" {
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

func (ox *otlpWriter) event(sp *span, at time.Time, name string, attrs ...otlpKV) {
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
