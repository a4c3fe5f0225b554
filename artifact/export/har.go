package export

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"mcpscope/artifact/scan"
	"mcpscope/internal/termsafe"
	"mcpscope/transport"
)

// ErrNotHTTP is a HAR export of a journal that holds no HTTP session.
var ErrNotHTTP = errors.New("HAR describes HTTP exchanges, and this journal recorded a stdio session: export it as jsonl or otlp")

// HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/), the fields
// mcpscope fills. Fields of our own start with an underscore, as the spec
// asks.
type (
	harLog struct {
		Version string     `json:"version"`
		Creator harCreator `json:"creator"`
		Comment string     `json:"comment,omitempty"`
	}
	harCreator struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	harEntry struct {
		StartedDateTime string      `json:"startedDateTime"`
		Time            float64     `json:"time"`
		Request         harRequest  `json:"request"`
		Response        harResponse `json:"response"`
		Cache           struct{}    `json:"cache"`
		Timings         harTimings  `json:"timings"`
		Connection      string      `json:"connection,omitempty"`
		Comment         string      `json:"comment,omitempty"`
		MCP             harMCP      `json:"_mcpscope"`
	}
	harRequest struct {
		Method      string       `json:"method"`
		URL         string       `json:"url"`
		HTTPVersion string       `json:"httpVersion"`
		Cookies     []harNV      `json:"cookies"`
		Headers     []harNV      `json:"headers"`
		QueryString []harNV      `json:"queryString"`
		PostData    *harPostData `json:"postData,omitempty"`
		HeadersSize int          `json:"headersSize"`
		BodySize    int          `json:"bodySize"`
		Comment     string       `json:"comment,omitempty"`
	}
	harPostData struct {
		MimeType string `json:"mimeType"`
		Text     string `json:"text"`
	}
	harResponse struct {
		Status      int        `json:"status"`
		StatusText  string     `json:"statusText"`
		HTTPVersion string     `json:"httpVersion"`
		Cookies     []harNV    `json:"cookies"`
		Headers     []harNV    `json:"headers"`
		Content     harContent `json:"content"`
		RedirectURL string     `json:"redirectURL"`
		HeadersSize int        `json:"headersSize"`
		BodySize    int        `json:"bodySize"`
		Comment     string     `json:"comment,omitempty"`
	}
	harContent struct {
		Size     int    `json:"size"`
		MimeType string `json:"mimeType"`
		Text     string `json:"text"`
	}
	harNV struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	harTimings struct {
		Blocked float64 `json:"blocked"`
		DNS     float64 `json:"dns"`
		Connect float64 `json:"connect"`
		Send    float64 `json:"send"`
		Wait    float64 `json:"wait"`
		Receive float64 `json:"receive"`
		SSL     float64 `json:"ssl"`
	}
	// harMCP is what mcpscope adds: the journal's stream key, the
	// sequence numbers of the exchange's first and last frame, and its SSE
	// events (messages, primes) counted.
	harMCP struct {
		Stream    string    `json:"stream,omitempty"`
		Resumes   string    `json:"resumes,omitempty"`
		Seqs      [2]uint64 `json:"seqs"`
		SSEEvents int       `json:"sseEvents,omitempty"`
	}
)

// exchange is one HTTP request and its answer while it is being read.
type exchange struct {
	e         harEntry
	start     time.Time // request sent (a GET: answered; its request is not journaled)
	headersAt time.Time
	end       time.Time
	body      spool
	post      spool // the request's body, as the response's: never held whole as a string
	matched   bool
	notes     []string
	// errBody: an HTTP error status whose JSON body follows as its own
	// frame (the transport journals both); errDetail is the status
	// event's excerpt, the body if the frame never comes.
	errBody   bool
	errDetail string
}

// HAR writes the HTTP exchanges of the journal as a HAR 1.2 log: every
// POST with its answer (a JSON body, or its SSE events as a
// text/event-stream body), every GET stream, every DELETE. With a filter,
// the exchanges holding a frame it matches. Entries are written as they
// complete; viewers order them by startedDateTime.
func HAR(w io.Writer, path string, o Options) error {
	h, err := scan.Header(path)
	if err != nil {
		return err
	}
	if scan.TransportOf(h.Target) == "stdio" {
		return ErrNotHTTP
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	hx := &harWriter{w: bw, m: newMatcher(o.Filter), open: map[string]*exchange{}, lastID: map[string]string{}}
	hx.marker, hx.postMarker = newMarker(), newMarker()
	head, _ := json.Marshal(harLog{Version: "1.2", Creator: harCreator{Name: "mcpscope", Version: o.Version},
		Comment: "exported by mcpscope from a journal of " + h.Target + " started " + h.Started.Format(time.RFC3339Nano)})
	// {"log":{...fields...,"entries":[ ... ]}}
	bw.WriteString(`{"log":`)
	bw.Write(termsafe.JSON(head[:len(head)-1]))
	bw.WriteString(`,"entries":[`)
	var last time.Time
	// Without a filter nothing reads a frame's message or call: the frames
	// go by bare, undecoded.
	so := scan.Options{Final: hx.m.final(), Borrow: true, Bare: o.Filter == nil}
	_, err = scan.File(path, so, func(fr *scan.Frame) error {
		last = fr.Time
		return hx.frame(fr)
	})
	keyless := hx.keyless // answered by assumption (its status says so): not open
	for _, x := range hx.pending() {
		if x != keyless {
			x.note("still open when the journal ended")
		}
		if x.end.IsZero() {
			x.end = last
		}
		if werr := hx.finish(x); werr != nil && err == nil {
			err = werr
		}
	}
	bw.WriteString("\n]}}\n")
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

type harWriter struct {
	w       *bufio.Writer
	m       *matcher
	open    map[string]*exchange // by stream key
	keyless *exchange            // the last POST without a stream key (a notification or response), until the next
	lastID  map[string]string    // last SSE event id per stream, for a resume's Last-Event-ID
	idOrder []string             // lastID's keys, oldest first
	written int
	marker  string
	// postMarker stands for the request's postData text in an entry's
	// JSON, which is then written a piece at a time: a huge request is
	// never quoted whole (nor made inert whole) in memory.
	postMarker string
	buf        []byte // an entry's JSON, reused
	bufs       spoolBufs
	// The last header list and query made, and what from: most exchanges
	// repeat them, and a list is only read once made.
	headers []harNV
	query   []harNV
	queryOf string
}

func newMarker() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "mcpscope-body-" + hex.EncodeToString(b)
}

// pending lists the exchanges still open, oldest first.
func (hx *harWriter) pending() []*exchange {
	var xs []*exchange
	for _, x := range hx.open {
		xs = append(xs, x)
	}
	if hx.keyless != nil {
		xs = append(xs, hx.keyless)
		hx.keyless = nil
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i].e.MCP.Seqs[0] < xs[j].e.MCP.Seqs[0] })
	hx.open = map[string]*exchange{}
	return xs
}

func (hx *harWriter) frame(fr *scan.Frame) error {
	m := &fr.Meta // redacted as read (journal.Read), whoever wrote the journal
	if fr.Dir == transport.Out && m.HTTPMethod == http.MethodPost && fr.Kind == transport.Message {
		if err := hx.flushKeyless(); err != nil {
			return err
		}
		x := hx.newExchange(fr, http.MethodPost, fr.Time)
		x.e.Request.Headers = hx.headerList(m.Headers)
		x.e.Request.PostData = &harPostData{MimeType: "application/json"}
		x.post.bufs = &hx.bufs
		x.post.writeText(fr.Data)
		x.e.Request.BodySize = len(fr.Data)
		if m.Stream != "" {
			hx.open[m.Stream] = x
		} else {
			hx.keyless = x
			x.e.Response.Status, x.e.Response.StatusText = http.StatusAccepted, http.StatusText(http.StatusAccepted)
			x.e.Response.Comment = "status assumed: mcpscope journals nothing for an empty 2xx answer to a notification or response"
			x.headersAt, x.end = fr.Time, fr.Time
		}
		return nil
	}
	if m.HTTPMethod == "" && m.Stream == "" {
		return nil // stdio, or a note about the connection
	}
	x := hx.open[m.Stream]
	if m.Stream == "" && hx.keyless != nil && m.HTTPMethod == http.MethodPost {
		x = hx.keyless
	}
	switch {
	case x == nil && (m.Event == transport.EvStreamOpened || m.Event == transport.EvStreamResumed) && m.Stream != "":
		if m.HTTPMethod == http.MethodPost && hx.keyless != nil && strings.HasPrefix(m.Stream, "post:#") {
			// A keyless POST answered with a stream: the stream is its answer.
			x, hx.keyless = hx.keyless, nil
			x.e.Response.Comment = ""
		} else {
			x = hx.newExchange(fr, m.HTTPMethod, fr.Time)
			x.e.Request.Headers = []harNV{{Name: "Accept", Value: "text/event-stream"}}
			if id := hx.lastID[m.Resumes]; id != "" {
				x.e.Request.Headers = append(x.e.Request.Headers, harNV{Name: "Last-Event-ID", Value: id})
			}
			x.e.Request.Comment = "request headers reconstructed: mcpscope journals a GET stream when it is answered"
		}
		hx.open[m.Stream] = x
	case x == nil && m.Status != 0 && m.HTTPMethod != "":
		// A GET or DELETE answered without a stream (405, 404, 204…).
		x = hx.newExchange(fr, m.HTTPMethod, fr.Time)
		x.e.Request.Comment = "request headers not journaled"
		hx.respond(x, fr)
		x.body.writeText([]byte(m.Detail))
		x.e.Response.Content.MimeType = "text/plain"
		x.end = fr.Time
		hx.see(x, fr)
		return hx.finish(x)
	case x == nil:
		return nil
	}
	hx.see(x, fr)
	switch {
	case m.Event == transport.EvStreamOpened || m.Event == transport.EvStreamResumed:
		hx.respond(x, fr)
		x.e.Response.Content.MimeType = "text/event-stream"
		if ep, ok := strings.CutPrefix(m.Detail, "endpoint "); ok && m.Stream == transport.LegacySSEStream {
			x.body.sse("", "endpoint", -1, []byte(ep)) // the HTTP+SSE handshake event, consumed by the transport
			x.e.MCP.SSEEvents++
		}
	case fr.Dir == transport.In && (fr.Kind == transport.Message || fr.Kind == transport.Garbage):
		if x.e.Response.Status == 0 || x == hx.keyless || x.errBody {
			x.errBody = false
			// A JSON body: the whole answer in one frame.
			hx.respond(x, fr)
			x.e.Response.Content.MimeType = orDefault(m.Headers["Content-Type"], "application/json")
			x.body.writeText(fr.Data)
			x.e.Response.BodySize = len(fr.Data)
			x.end = fr.Time
			if x == hx.keyless {
				hx.keyless = nil
			}
			delete(hx.open, m.Stream)
			return hx.finish(x)
		}
		x.body.sse(m.EventID, m.EventType, m.Retry, fr.Data)
		x.e.MCP.SSEEvents++
		hx.noteID(m)
	case m.Event == transport.EvPrime:
		x.body.sse(m.EventID, m.EventType, m.Retry, nil)
		x.e.MCP.SSEEvents++
		hx.noteID(m)
	case m.Event == transport.EvNote && m.Status == 0:
		if strings.HasPrefix(m.Detail, "SSE event with empty data") {
			x.body.sse(m.EventID, m.EventType, m.Retry, nil)
			x.e.MCP.SSEEvents++
		} else {
			x.note(m.Detail)
		}
	case m.Event == transport.EvRedirect:
		x.note(fmt.Sprintf("redirect %d: %s", m.Status, m.Detail))
	case m.Event == transport.EvStreamClosed || m.Event == transport.EvStreamDropped || m.Event == transport.EvSendFailed ||
		m.Event == transport.EvHTTPError || m.Status != 0:
		if m.Status != 0 && x.e.Response.Status == 0 || m.Event == transport.EvHTTPError {
			hx.respond(x, fr)
			x.e.Response.Content.MimeType = orDefault(m.Headers["Content-Type"], "text/plain")
			if m.Event == transport.EvHTTPError && errBodyFollows(m.Detail) {
				// One exchange: the JSON body comes next on the same stream.
				x.errBody, x.errDetail, x.end = true, m.Detail, fr.Time
				return nil
			}
			x.body.writeText([]byte(m.Detail))
		} else if m.Event != transport.EvStreamClosed {
			x.note(m.Event + ": " + m.Detail)
		} else if m.Detail != "" {
			x.note("stream closed " + m.Detail)
		}
		x.end = fr.Time
		if x == hx.keyless {
			hx.keyless = nil
			return hx.finish(x)
		}
		delete(hx.open, m.Stream)
		return hx.finish(x)
	}
	return nil
}

// keepIDs bounds how many streams' last event ids are kept for the
// Last-Event-ID of a resume: the most recent ones.
const keepIDs = 1024

func (hx *harWriter) noteID(m *transport.Meta) {
	if m.EventID == "" {
		return
	}
	for _, k := range []string{m.Stream, m.Resumes} {
		if k == "" {
			continue
		}
		if _, known := hx.lastID[k]; !known {
			hx.idOrder = append(hx.idOrder, k)
			if len(hx.idOrder) > keepIDs {
				delete(hx.lastID, hx.idOrder[0])
				hx.idOrder = hx.idOrder[1:]
			}
		}
		hx.lastID[k] = m.EventID
	}
}

func (hx *harWriter) newExchange(fr *scan.Frame, method string, at time.Time) *exchange {
	x := &exchange{start: at}
	x.body.bufs = &hx.bufs
	if fr.Meta.URL != hx.queryOf || hx.query == nil {
		hx.query, hx.queryOf = queryList(fr.Meta.URL), fr.Meta.URL
	}
	x.e.Request = harRequest{Method: method, URL: fr.Meta.URL, HTTPVersion: "HTTP/1.1", Cookies: []harNV{}, Headers: []harNV{},
		QueryString: hx.query, HeadersSize: -1, BodySize: 0}
	x.e.Response = harResponse{HTTPVersion: "HTTP/1.1", Cookies: []harNV{}, Headers: []harNV{}, HeadersSize: -1, BodySize: -1}
	x.e.Connection = fr.Meta.Stream
	x.e.MCP = harMCP{Stream: fr.Meta.Stream, Resumes: fr.Meta.Resumes, Seqs: [2]uint64{fr.Seq, fr.Seq}}
	hx.see(x, fr)
	return x
}

// see counts a frame as part of x: its sequence number, and the filter.
func (hx *harWriter) see(x *exchange, fr *scan.Frame) {
	x.e.MCP.Seqs[1] = fr.Seq
	if !x.matched && hx.m.match(fr) {
		x.matched = true
	}
}

// respond takes the status line and headers of x's answer from fr.
func (hx *harWriter) respond(x *exchange, fr *scan.Frame) {
	m := &fr.Meta
	if m.Status != 0 {
		x.e.Response.Status, x.e.Response.StatusText = m.Status, http.StatusText(m.Status)
	}
	if len(m.Headers) > 0 {
		x.e.Response.Headers = hx.headerList(m.Headers)
	}
	x.e.Response.Comment = ""
	if x.headersAt.IsZero() || x == hx.keyless {
		x.headersAt = fr.Time
	}
}

func (hx *harWriter) flushKeyless() error {
	x := hx.keyless
	if x == nil {
		return nil
	}
	hx.keyless = nil
	return hx.finish(x)
}

// errBodyFollows reports whether an HTTP error event's body is journaled
// as a frame of its own next: the transport does so for a JSON body, and
// then the event's detail is an excerpt of it.
func errBodyFollows(detail string) bool {
	d := strings.TrimSpace(detail)
	return d != "" && (d[0] == '{' || d[0] == '[')
}

func (x *exchange) note(s string) {
	if s != "" {
		x.notes = append(x.notes, s)
	}
}

// finish writes x (when the filter kept it) and frees its body.
func (hx *harWriter) finish(x *exchange) error {
	defer x.body.close()
	defer x.post.close()
	if x.errBody { // the error's body never came as a frame: its excerpt
		x.body.writeText([]byte(x.errDetail))
		x.errBody = false
	}
	if !x.matched {
		return nil
	}
	if x.headersAt.IsZero() {
		x.headersAt = x.start
	}
	if x.end.Before(x.headersAt) {
		x.end = x.headersAt
	}
	e := &x.e
	e.StartedDateTime = x.start.Format(time.RFC3339Nano)
	e.Timings = harTimings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1,
		Wait: ms(x.headersAt.Sub(x.start)), Receive: ms(x.end.Sub(x.headersAt))}
	e.Time = e.Timings.Send + e.Timings.Wait + e.Timings.Receive
	e.Comment = strings.Join(x.notes, "; ")
	c := &e.Response.Content
	c.Size = x.body.raw
	if c.MimeType == "" {
		c.MimeType = "x-unknown"
	}
	c.Text = hx.marker
	if p := e.Request.PostData; p != nil {
		p.Text = hx.postMarker
	}
	b, err := appendHAREntry(hx.buf[:0], e)
	if err != nil {
		return err
	}
	hx.buf = b // kept for the next entry
	i := bytes.Index(b, []byte(hx.marker))
	if hx.written > 0 {
		hx.w.WriteByte(',')
	}
	hx.written++
	hx.w.WriteByte('\n')
	if j := bytes.Index(b[:i], []byte(hx.postMarker)); e.Request.PostData != nil && j >= 0 {
		hx.w.Write(termsafe.JSON(b[:j]))
		if err := x.post.copyTo(hx.w); err != nil {
			return err
		}
		hx.w.Write(termsafe.JSON(b[j+len(hx.postMarker) : i]))
	} else {
		hx.w.Write(termsafe.JSON(b[:i]))
	}
	if err := x.body.copyTo(hx.w); err != nil {
		return err
	}
	_, err = hx.w.Write(termsafe.JSON(b[i+len(hx.marker):]))
	return err
}

func ms(d time.Duration) float64 {
	if d < 0 {
		return 0
	}
	return float64(d.Microseconds()) / 1000
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// headerList is headerList(h), the last one made when h holds the same.
func (hx *harWriter) headerList(h map[string]string) []harNV {
	if hx.headers != nil && len(hx.headers) == len(h) {
		same := true
		for _, nv := range hx.headers {
			if v, ok := h[nv.Name]; !ok || v != nv.Value {
				same = false
				break
			}
		}
		if same {
			return hx.headers
		}
	}
	hx.headers = headerList(h)
	return hx.headers
}

func headerList(h map[string]string) []harNV {
	out := make([]harNV, 0, len(h))
	for k, v := range h {
		out = append(out, harNV{Name: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func queryList(raw string) []harNV {
	out := []harNV{}
	u, err := url.Parse(raw)
	if err != nil {
		return out
	}
	for _, kv := range strings.Split(u.RawQuery, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		if uv, err := url.QueryUnescape(v); err == nil {
			v = uv
		}
		out = append(out, harNV{Name: k, Value: v})
	}
	return out
}

// spool holds a body as the inside of a JSON string, in memory up to
// spoolMem bytes and in a temporary file beyond, so that one long stream
// does not hold the export's memory.
type spool struct {
	mem  []byte
	f    *os.File
	raw  int // the body's own length, unescaped
	err  error
	bufs *spoolBufs
}

// spoolBufs are the buffers every spool of an export shares, one body
// being written at a time.
type spoolBufs struct {
	scratch []byte   // a chunk escaped
	event   []byte   // a small SSE event assembled
	free    [][]byte // bodies' memory, written out, for the next bodies
}

// keepFree bounds the bodies' buffers kept for reuse, and how big one may be.
const (
	keepFree    = 16
	keepFreeCap = 64 << 10
)

const spoolMem = 1 << 20

// spoolChunk is how much of a body writeText escapes at a time: a huge
// frame costs this much more, not a copy of itself.
const spoolChunk = 64 << 10

func (s *spool) writeText(p []byte) {
	s.raw += len(p)
	if s.f == nil && s.err == nil && len(s.mem)+6*len(p) <= spoolMem {
		// Escaped in place: at most six bytes a byte (\u00XX).
		if s.mem == nil && s.bufs != nil && len(s.bufs.free) > 0 {
			s.mem = s.bufs.free[len(s.bufs.free)-1]
			s.bufs.free = s.bufs.free[:len(s.bufs.free)-1]
		}
		s.mem = appendJSONText(s.mem, p)
		return
	}
	b := s.bufs
	if b == nil {
		b = &spoolBufs{}
	}
	for len(p) > 0 {
		n := textCut(p, spoolChunk)
		b.scratch = appendJSONText(b.scratch[:0], p[:n])
		s.put(b.scratch)
		p = p[n:]
	}
	if cap(b.scratch) > 4*spoolChunk {
		b.scratch = nil
	}
}

// textCut is where to cut p at most max bytes in without splitting a UTF-8
// character (which appendJSONText would take for invalid bytes).
func textCut(p []byte, max int) int {
	if len(p) <= max {
		return len(p)
	}
	n := max
	for n > max-utf8.UTFMax && !utf8.RuneStart(p[n]) {
		n--
	}
	if n == max-utf8.UTFMax {
		return max // not UTF-8 here anyway: each byte is its own U+FFFD
	}
	return n
}

// sse appends one event as a text/event-stream would carry it. A small
// event is assembled in a kept buffer and escaped at once; a big one's data
// goes line by line from the frame (never assembled in a copy).
func (s *spool) sse(id, typ string, retry int, data []byte) {
	if s.bufs == nil {
		s.bufs = &spoolBufs{}
	}
	b := s.bufs.event[:0]
	if id != "" {
		b = append(append(append(b, "id: "...), id...), '\n')
	}
	if typ != "" {
		b = append(append(append(b, "event: "...), typ...), '\n')
	}
	if retry > 0 {
		b = append(strconv.AppendInt(append(b, "retry: "...), int64(retry), 10), '\n')
	}
	small := len(data) <= spoolChunk
	if !small {
		s.writeText(b)
		b = b[:0]
	}
	for {
		l, rest, more := bytes.Cut(data, []byte("\n"))
		if small {
			b = append(append(append(b, "data: "...), l...), '\n')
		} else {
			s.writeText([]byte("data: "))
			s.writeText(l)
			s.writeText([]byte("\n"))
		}
		if !more {
			break
		}
		data = rest
	}
	b = append(b, '\n')
	s.writeText(b)
	if cap(b) <= 4*spoolChunk {
		s.bufs.event = b
	}
}

func (s *spool) put(p []byte) {
	if s.err != nil {
		return
	}
	if s.f == nil && len(s.mem)+len(p) <= spoolMem {
		s.mem = append(s.mem, p...)
		return
	}
	if s.f == nil {
		s.f, s.err = os.CreateTemp("", "mcpscope-har-*")
		if s.err != nil {
			return
		}
		os.Remove(s.f.Name()) // gone with the last close
		_, s.err = s.f.Write(s.mem)
		s.mem = nil
	}
	if s.err == nil {
		_, s.err = s.f.Write(p)
	}
}

func (s *spool) copyTo(w io.Writer) error {
	if s.err != nil {
		return fmt.Errorf("spooling a body: %w", s.err)
	}
	if s.f == nil {
		_, err := w.Write(s.mem)
		return err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.Copy(w, s.f)
	return err
}

func (s *spool) close() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	if b := s.bufs; b != nil && s.mem != nil && cap(s.mem) <= keepFreeCap && len(b.free) < keepFree {
		b.free = append(b.free, s.mem[:0])
	}
	s.mem = nil
}
