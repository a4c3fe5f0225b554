package otlplive

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"mcpscope/internal/pbwire"
	"mcpscope/transport"
)

// This file is mcpscope's own OTLP/HTTP client: a POST of protobuf, as
// the OTLP specification describes it. It replaces the SDK's otlptracehttp,
// whose configuration package links gRPC (~17 MB, dozens of package inits)
// into every start of mcpscope (open-telemetry/opentelemetry-go#2579); the
// collector service's protobuf package links it too, so the request and
// the response are written and read here with pbwire (which also keeps
// protobuf's runtime out of the binary).

// Poster sends one batch of spans to a collector. The exporter's uploads
// go through one (Options.Poster replaces it in tests).
type Poster interface {
	// Post sends an encoded ExportTraceServiceRequest (EncodeRequest)
	// within ctx. A *PartialSuccess error means the collector took the
	// request but rejected some spans (or warned); any other error means
	// none was taken.
	Post(ctx context.Context, request []byte) error
}

// PartialSuccess is the collector's answer that it rejected some of the
// spans of a request it took (ExportTracePartialSuccess). Rejected 0 with
// a message is a warning.
type PartialSuccess struct {
	Rejected int64
	Message  string
}

func (p *PartialSuccess) Error() string {
	if p.Message == "" {
		return fmt.Sprintf("the collector rejected %d span(s)", p.Rejected)
	}
	return fmt.Sprintf("the collector rejected %d span(s): %s", p.Rejected, p.Message)
}

// Bounds of one post.
const (
	// maxAttempts bounds the tries of one batch the collector asks to
	// retry (429, 502, 503, 504); the upload's timeout bounds them too.
	maxAttempts = 5
	// maxResponse is the most of a response body read.
	maxResponse = 64 << 10
	// maxMessage is the most of a collector's message an error quotes.
	maxMessage = 300
)

// httpPoster posts to an Endpoint.
type httpPoster struct {
	ep        Endpoint
	client    *http.Client
	userAgent string
}

// newPoster is the poster to ep: its headers, its timeout on every
// request, no redirect followed (the headers are credentials, for the
// endpoint alone), the proxy of the environment as net/http's default.
func newPoster(ep Endpoint, version string) *httpPoster {
	c := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), Timeout: ep.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	ua := "mcpscope"
	if version != "" {
		ua += "/" + version
	}
	return &httpPoster{ep: ep, client: c, userAgent: ua}
}

// close lets go of idle connections.
func (p *httpPoster) close() { p.client.CloseIdleConnections() }

// Post sends an ExportTraceServiceRequest (repeated ResourceSpans
// resource_spans = 1), retrying what the collector asks to have retried
// while ctx and maxAttempts allow. Its errors hold neither the header
// values nor the URL's credentials.
func (p *httpPoster) Post(ctx context.Context, body []byte) error {
	if p.ep.Gzip {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		if _, err := zw.Write(body); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		body = b.Bytes()
	}
	for attempt := 1; ; attempt++ {
		wait, err := p.once(ctx, body)
		var retry *retryable
		if !errors.As(err, &retry) {
			return p.redact(err)
		}
		if attempt >= maxAttempts {
			return p.redact(fmt.Errorf("%w (%d attempts)", err, attempt))
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return p.redact(fmt.Errorf("%w; its retry after %s is past the upload's timeout", err, wait.Round(time.Millisecond)))
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return p.redact(err)
		}
	}
}

// retryable is a response the collector asks to have retried.
type retryable struct{ status string }

func (r *retryable) Error() string { return "the collector answered " + r.status }

// once is one request: nil on 2xx (or a *PartialSuccess), a *retryable
// with how long to wait, or a permanent failure.
func (p *httpPoster) once(ctx context.Context, body []byte) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.ep.URL, bytes.NewReader(body))
	if err != nil {
		return 0, errors.New("the collector's URL does not make a request") // its text would hold the URL
	}
	for k, v := range p.ep.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", p.userAgent)
	if p.ep.Gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := p.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL
		}
		return 0, fmt.Errorf("posting to the collector: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if !isProtobuf(resp.Header.Get("Content-Type")) {
		b = nil // JSON or text: not what was asked for, and not read
	}
	status := statusLine(resp)
	switch code := resp.StatusCode; {
	case code >= 200 && code <= 299:
		return 0, decodeResponse(b)
	case code == http.StatusTooManyRequests || code == http.StatusBadGateway ||
		code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout:
		return retryAfter(resp.Header.Get("Retry-After")), &retryable{status: status}
	default:
		if msg := statusMessage(b); msg != "" {
			return 0, fmt.Errorf("the collector refused the spans: %s: %s", status, msg)
		}
		return 0, fmt.Errorf("the collector refused the spans: %s", status)
	}
}

// isProtobuf says whether a Content-Type is OTLP/HTTP's binary one.
func isProtobuf(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/x-protobuf")
}

// statusLine is "503 Service Unavailable", the code alone when the
// reason is not the standard one (a server's reason is its own text).
func statusLine(resp *http.Response) string {
	if t := http.StatusText(resp.StatusCode); t != "" {
		return strconv.Itoa(resp.StatusCode) + " " + t
	}
	return strconv.Itoa(resp.StatusCode)
}

// retryAfter reads Retry-After (seconds or an HTTP date); without one,
// retryPause.
func retryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return retryPause
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil && s >= 0 {
		if s > int64(time.Hour/time.Second) {
			return time.Hour // past any upload's timeout all the same
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return retryPause
}

// redact takes the endpoint's URL and header values out of err's text.
func (p *httpPoster) redact(err error) error {
	if err == nil {
		return nil
	}
	var ps *PartialSuccess
	if errors.As(err, &ps) {
		return &PartialSuccess{Rejected: ps.Rejected, Message: p.ep.redact(ps.Message)}
	}
	if s := p.ep.redact(err.Error()); s != err.Error() {
		return errors.New(s)
	}
	return err
}

// redact takes the endpoint's URL and header values out of s.
func (ep Endpoint) redact(s string) string {
	if ep.URL != "" {
		s = strings.ReplaceAll(s, ep.URL, transport.RedactURL(ep.URL))
	}
	for _, v := range ep.Headers {
		if v != "" {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}

// EncodeRequest writes an ExportTraceServiceRequest of one ResourceSpans
// (resource_spans = 1) holding one ScopeSpans: resource = 1, scope_spans
// = 2 { scope = 1, spans = 2 }; resource, scope and each span already
// encoded (export.Spans).
func EncodeRequest(resource, scope []byte, spans [][]byte) []byte {
	ss := pbwire.AppendMessage(nil, 1, scope)
	for _, s := range spans {
		ss = pbwire.AppendMessage(ss, 2, s)
	}
	rs := pbwire.AppendMessage(pbwire.AppendMessage(nil, 1, resource), 2, ss)
	return pbwire.AppendMessage(nil, 1, rs)
}

// decodeResponse reads an ExportTraceServiceResponse:
// partial_success = 1 { int64 rejected_spans = 1; string error_message = 2 }.
// A body that does not decode is a success all the same (the collector
// answered 2xx; it may have sent JSON or nothing).
func decodeResponse(b []byte) error {
	var ps PartialSuccess
	var found bool
	ok := eachField(b, func(num int32, typ pbwire.Type, v []byte, n uint64) bool {
		if num != 1 || typ != pbwire.BytesType {
			return true
		}
		found = true
		return eachField(v, func(num int32, typ pbwire.Type, v []byte, n uint64) bool {
			switch {
			case num == 1 && typ == pbwire.VarintType:
				ps.Rejected = int64(n)
			case num == 2 && typ == pbwire.BytesType:
				ps.Message = cleanMessage(v)
			}
			return true
		})
	})
	if !ok || !found || (ps.Rejected == 0 && ps.Message == "") {
		return nil
	}
	return &ps
}

// statusMessage is the message of a google.rpc.Status body
// (string message = 2), "" when the body is not one.
func statusMessage(b []byte) string {
	var msg string
	ok := eachField(b, func(num int32, typ pbwire.Type, v []byte, n uint64) bool {
		if num == 2 && typ == pbwire.BytesType {
			if !utf8.Valid(v) {
				return false
			}
			msg = cleanMessage(v)
		}
		return true
	})
	if !ok {
		return ""
	}
	return msg
}

// cleanMessage is a collector's text fit for one line of an error:
// printable, at most maxMessage bytes.
func cleanMessage(v []byte) string {
	s := strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == utf8.RuneError {
			return ' '
		}
		return r
	}, string(v))
	s = strings.TrimSpace(s)
	if len(s) > maxMessage {
		cut := maxMessage
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// eachField calls fn with each field of a protobuf message: its number,
// type, and value (bytes for a length-delimited field, n for a varint).
// It is false when b is not a well-formed message or fn says stop.
func eachField(b []byte, fn func(num int32, typ pbwire.Type, v []byte, n uint64) bool) bool {
	for len(b) > 0 {
		num, typ, l := pbwire.ConsumeTag(b)
		if l < 0 {
			return false
		}
		b = b[l:]
		var v []byte
		var n uint64
		switch typ {
		case pbwire.VarintType:
			n, l = pbwire.ConsumeVarint(b)
		case pbwire.BytesType:
			v, l = pbwire.ConsumeBytes(b)
		default:
			l = pbwire.ConsumeFieldValue(num, typ, b)
		}
		if l < 0 {
			return false
		}
		b = b[l:]
		if !fn(num, typ, v, n) {
			return false
		}
	}
	return true
}
