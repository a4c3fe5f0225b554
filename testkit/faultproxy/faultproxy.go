// Package faultproxy is a reverse proxy for resilience tests: it sits between
// mcpscope and a real MCP server and cuts response streams at chosen or
// seeded-random points, delays requests and answers some with 500, while
// counting every fault so a test can prove the faults really happened.
//
// Randomness is per request: request n (1-based, in arrival order among the
// requests Faults.Match accepts) draws from a generator seeded by (Seed, n), so
// a sequential test sees the same faults on every run.
package faultproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Faults says what to do to the traffic. The zero value forwards everything
// untouched.
type Faults struct {
	// Seed makes the random choices (cut points, jitter) repeatable.
	Seed int64

	// CutAfterBytes, when set, decides each response's cut: return n >= 0 to
	// let the client have n body bytes and then drop the connection, or a
	// negative number to leave the response whole. nth is the request's
	// 1-based number. It overrides CutProbability.
	CutAfterBytes func(req *http.Request, nth int) int
	// CutProbability is the chance that a response is cut, at a point drawn
	// uniformly from [0, MaxCutBytes) body bytes (MaxCutBytes 0 means 4096).
	// A response shorter than its cut point ends normally; one that reaches
	// it is cut even at its very end (every byte, but no clean end).
	CutProbability float64
	MaxCutBytes    int

	// Delay holds each request back before forwarding it, plus a random extra
	// in [0, Jitter).
	Delay  time.Duration
	Jitter time.Duration

	// Fail500Every answers every Nth request with 500 without forwarding it
	// (0 = never).
	Fail500Every int

	// Match limits the faults to the requests it accepts (nil = all). Other
	// requests are forwarded untouched and do not advance the count.
	Match func(*http.Request) bool
}

// Stats counts what the proxy did.
type Stats struct {
	Requests       int     // requests received
	Forwarded      int     // requests sent upstream
	Fail500        int     // answered 500 without forwarding
	Delayed        int     // requests held back before forwarding
	Cuts           int     // responses dropped mid-body (seeded, chosen, or Cut/CutAll)
	CutAt          []int64 // body bytes the client had at each cut, in the order cuts happened
	UpstreamErrors int     // upstream unreachable: answered 502
}

// Proxy is a running fault proxy.
type Proxy struct {
	f        Faults
	upstream *url.URL
	tr       *http.Transport
	srv      *httptest.Server
	ctx      context.Context // cancelled at cleanup: ends every exchange
	stop     context.CancelFunc

	mu    sync.Mutex
	seq   int // numbers the requests Match accepts
	live  map[*exchange]struct{}
	stats Stats
}

// exchange is one request in flight.
type exchange struct {
	req    *http.Request
	method string             // the JSON-RPC request's method, when the body is one
	cancel context.CancelFunc // ends the upstream request
	cut    atomic.Bool        // set by Cut: drop the client connection
}

// Start runs a proxy for upstream (an MCP endpoint such as
// http://127.0.0.1:N/mcp) on 127.0.0.1 and returns the same endpoint through
// the proxy: paths and queries are forwarded as they come, so relative URLs a
// server hands out (an HTTP+SSE endpoint event) stay behind the proxy too.
// The proxy is closed by t.Cleanup.
func Start(t testing.TB, upstream string, f Faults) (string, *Proxy) {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		t.Fatalf("faultproxy: bad upstream URL %q", upstream)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true // pass bytes and Accept-Encoding through as they are
	p := &Proxy{f: f, upstream: u, tr: tr, live: map[*exchange]struct{}{}}
	p.ctx, p.stop = context.WithCancel(context.Background())
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.close)
	front := *u
	base, _ := url.Parse(p.srv.URL)
	front.Scheme, front.Host, front.User = base.Scheme, base.Host, nil
	return front.String(), p
}

func (p *Proxy) close() {
	p.stop() // every upstream request ends, so every handler returns
	p.srv.Close()
	p.tr.CloseIdleConnections()
}

// Stats returns a copy of the counts so far.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.CutAt = append([]int64(nil), s.CutAt...)
	return s
}

// CutAll drops every response in flight now, as a network failure would:
// clients see their connection close mid-body and upstream sees its client go.
func (p *Proxy) CutAll() int { return p.Cut(nil) }

// Cut drops the in-flight responses whose requests match (nil = all) and
// returns how many it cut, e.g. only the GET stream:
//
//	p.Cut(func(r *http.Request) bool { return r.Method == http.MethodGet })
func (p *Proxy) Cut(match func(*http.Request) bool) int {
	return p.cut(func(x *exchange) bool { return match == nil || match(x.req) })
}

// CutCall drops the in-flight responses to JSON-RPC requests with this
// method (the stream of a tools/call, not the POSTs of notifications or
// answers that may still be finishing beside it) and returns how many.
func (p *Proxy) CutCall(method string) int {
	return p.cut(func(x *exchange) bool { return x.method == method })
}

func (p *Proxy) cut(match func(*exchange) bool) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for x := range p.live {
		if match(x) {
			if !x.cut.Swap(true) {
				n++
			}
			x.cancel()
		}
	}
	return n
}

// plan is what happens to one request.
type plan struct {
	nth   int
	fail  bool
	delay time.Duration
	cutAt int // -1 = never
}

func (p *Proxy) plan(r *http.Request) plan {
	p.mu.Lock()
	p.stats.Requests++
	if p.f.Match != nil && !p.f.Match(r) {
		p.mu.Unlock()
		return plan{cutAt: -1}
	}
	p.seq++
	pl := plan{nth: p.seq, cutAt: -1}
	p.mu.Unlock()

	// Draws happen in a fixed order so a seed always means the same faults.
	rng := rand.New(rand.NewPCG(uint64(p.f.Seed), uint64(pl.nth)))
	pl.fail = p.f.Fail500Every > 0 && pl.nth%p.f.Fail500Every == 0
	pl.delay = p.f.Delay
	if p.f.Jitter > 0 {
		pl.delay += time.Duration(rng.Int64N(int64(p.f.Jitter)))
	}
	switch {
	case p.f.CutAfterBytes != nil:
		pl.cutAt = p.f.CutAfterBytes(r, pl.nth)
	case p.f.CutProbability > 0 && rng.Float64() < p.f.CutProbability:
		maxBytes := p.f.MaxCutBytes
		if maxBytes <= 0 {
			maxBytes = 4096
		}
		pl.cutAt = rng.IntN(maxBytes)
	}
	return pl
}

func (p *Proxy) count(fn func(*Stats)) {
	p.mu.Lock()
	fn(&p.stats)
	p.mu.Unlock()
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	// The request's body is read whole before anything is forwarded. Handed
	// to the upstream request as it was, the transport's writer could still
	// be reading it (for the EOF after its last byte) when the response's
	// headers go out here, at which point the server closes it: the writer
	// then failed, and the transport closed the upstream connection under
	// a stream nobody had cut.
	reqBody, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client left mid-request
	}
	pl := p.plan(r)
	if pl.fail {
		p.count(func(s *Stats) { s.Fail500++ })
		http.Error(w, fmt.Sprintf("faultproxy: injected 500 (request %d)", pl.nth), http.StatusInternalServerError)
		return
	}

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stopWithProxy := context.AfterFunc(p.ctx, cancel)
	defer stopWithProxy()
	x := &exchange{req: r, method: rpcMethod(reqBody), cancel: cancel}
	p.mu.Lock()
	p.live[x] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.live, x)
		p.mu.Unlock()
	}()

	if pl.delay > 0 {
		p.count(func(s *Stats) { s.Delayed++ })
		timer := time.NewTimer(pl.delay)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			p.abortIfCut(x, 0)
			return
		}
	}

	out, err := http.NewRequestWithContext(ctx, r.Method, p.target(r), bytes.NewReader(reqBody))
	if err != nil {
		http.Error(w, "faultproxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	copyHeaders(out.Header, r.Header)
	p.count(func(s *Stats) { s.Forwarded++ })
	resp, err := p.tr.RoundTrip(out)
	if err != nil {
		p.abortIfCut(x, 0)
		if r.Context().Err() != nil {
			return // the client left
		}
		p.count(func(s *Stats) { s.UpstreamErrors++ })
		http.Error(w, "faultproxy: upstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	copyHeaders(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	flush(w)
	p.relay(w, resp.Body, x, pl.cutAt)
}

// rpcMethod is the method of the JSON-RPC request in body ("" for anything
// else: a notification, a response, a batch).
func rpcMethod(body []byte) string {
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &m) != nil || len(m.ID) == 0 || string(m.ID) == "null" {
		return ""
	}
	return m.Method
}

// relay streams the body with a flush per read (SSE must not be buffered)
// and drops the connection at the cut point or when Cut says so.
func (p *Proxy) relay(w http.ResponseWriter, body io.Reader, x *exchange, cutAt int) {
	var sent int64
	if cutAt == 0 {
		p.cutNow(x, 0)
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			cutHere := cutAt >= 0 && sent+int64(n) >= int64(cutAt)
			if cutHere {
				chunk = chunk[:int64(cutAt)-sent]
			}
			if _, werr := w.Write(chunk); werr != nil {
				x.cancel() // the client left: so does our upstream request
				return
			}
			flush(w)
			sent += int64(len(chunk))
			if cutHere {
				p.cutNow(x, sent)
			}
		}
		if err != nil {
			p.abortIfCut(x, sent)
			if !errors.Is(err, io.EOF) {
				panic(http.ErrAbortHandler) // upstream broke: so does the client's stream
			}
			return
		}
	}
}

// abortIfCut drops the client connection when Cut marked the exchange.
func (p *Proxy) abortIfCut(x *exchange, sent int64) {
	if x.cut.Load() {
		p.cutNow(x, sent)
	}
}

// cutNow records a cut and closes the client connection without ending the
// body properly (no final chunk), which is what a network drop looks like.
func (p *Proxy) cutNow(x *exchange, sent int64) {
	x.cut.Store(true)
	x.cancel()
	p.count(func(s *Stats) { s.Cuts++; s.CutAt = append(s.CutAt, sent) })
	panic(http.ErrAbortHandler)
}

func (p *Proxy) target(r *http.Request) string {
	u := *p.upstream
	u.Path, u.RawPath, u.RawQuery = r.URL.Path, r.URL.RawPath, r.URL.RawQuery
	return u.String()
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// hopHeaders belong to one connection, not to the message (RFC 9110 §7.6.1).
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func copyHeaders(dst, src http.Header) {
	skip := map[string]bool{}
	for _, h := range hopHeaders {
		skip[h] = true
	}
	for _, v := range src.Values("Connection") {
		for _, name := range strings.Split(v, ",") {
			skip[http.CanonicalHeaderKey(strings.TrimSpace(name))] = true
		}
	}
	for k, vs := range src {
		if !skip[http.CanonicalHeaderKey(k)] {
			dst[k] = append([]string(nil), vs...)
		}
	}
}
