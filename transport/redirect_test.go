package transport

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// ---- two origins on 127.0.0.1 --------------------------------------------------

// redirServer is one origin: it records the headers of every request, sends
// the ones redirect names elsewhere, and answers the rest like a minimal MCP
// server (JSON to initialize, 202 to the rest, an HTTP+SSE stream on /sse).
type redirServer struct {
	*httptest.Server
	status   int                          // the 3xx to answer with
	redirect func(r *http.Request) string // where to send r, "" = serve it

	mu   sync.Mutex
	seen []redirSeen
}

type redirSeen struct {
	method, path string
	header       http.Header
}

func newRedirServer(t *testing.T) *redirServer {
	t.Helper()
	s := &redirServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() { s.CloseClientConnections(); s.Close() })
	return s
}

func (s *redirServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen = append(s.seen, redirSeen{r.Method, r.URL.Path, r.Header.Clone()})
	s.mu.Unlock()
	if s.redirect != nil {
		if loc := s.redirect(r); loc != "" {
			http.Redirect(w, r, loc, s.status)
			return
		}
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/sse":
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: endpoint\ndata: /message\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	case r.Method == http.MethodPost:
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		if req.Method != "initialize" {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"redir","version":"1"}}}`, req.ID)
	case r.Method == http.MethodGet:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (s *redirServer) requests() []redirSeen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]redirSeen(nil), s.seen...)
}

// redirCanary is in every credential the tests send, and nowhere else.
const redirCanary = "CANARY-7f3a"

// redirHeaders are credentials of every kind (-H Authorization is the
// bearer's job here), plus one plain header that must still travel.
func redirHeaders() map[string]string {
	return map[string]string{
		"X-Api-Key":       redirCanary + "-key",
		"Cookie":          "sid=" + redirCanary + "-cookie",
		"X-Session-Token": redirCanary + "-token",
		"X-Trace":         "plain",
	}
}

// noCredentials fails if any request s saw carried a credential.
func noCredentials(t *testing.T, s *redirServer) {
	t.Helper()
	for _, r := range s.requests() {
		for name, vs := range r.header {
			if strings.Contains(strings.Join(vs, " "), redirCanary) || strings.EqualFold(name, "Authorization") {
				t.Errorf("%s %s at the other origin carried %s: %v", r.method, r.path, name, vs)
			}
		}
	}
}

// allCredentials fails unless every request s saw carried each credential.
func allCredentials(t *testing.T, s *redirServer) {
	t.Helper()
	if len(s.requests()) == 0 {
		t.Fatal("no request arrived")
	}
	for _, r := range s.requests() {
		for _, name := range []string{"Authorization", "X-Api-Key", "Cookie", "X-Session-Token"} {
			if !strings.Contains(r.header.Get(name), redirCanary) {
				t.Errorf("%s %s lost %s on a same-origin redirect: %v", r.method, r.path, name, r.header)
			}
		}
	}
}

// plainHeaderArrived fails unless a request s saw carried X-Trace: the
// other headers were copied, so their absence is the policy's doing.
func plainHeaderArrived(t *testing.T, s *redirServer) {
	t.Helper()
	for _, r := range s.requests() {
		if r.header.Get("X-Trace") == "plain" {
			return
		}
	}
	t.Errorf("no request at %s carried X-Trace: %v", s.URL, s.requests())
}

// redirEvent waits for the redirect frame naming verdict and checks it.
func redirEvent(t *testing.T, rec *frameRec, status int, to, verdict string) Frame {
	t.Helper()
	_, f := rec.wait(t, "redirect to "+to+": "+verdict, func(f Frame) bool {
		return f.Kind == Event && f.Meta.Event == EvRedirect && strings.Contains(f.Meta.Detail, " to "+to+": ") && strings.HasSuffix(f.Meta.Detail, verdict)
	})
	if f.Meta.Status != status || f.Meta.URL == "" {
		t.Fatalf("redirect event %+v: want status %d and %s in its detail", f.Meta, status, to)
	}
	return f
}

// noCanaryInFrames fails if a credential reached the frames (the journal).
func noCanaryInFrames(t *testing.T, rec *frameRec) {
	t.Helper()
	if d := rec.dump(); strings.Contains(d, redirCanary) {
		t.Fatalf("a credential is in the frames:\n%s", d)
	}
}

// ---- Streamable HTTP -----------------------------------------------------------

func TestHTTPRedirectToAnotherOrigin(t *testing.T) {
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			other := newRedirServer(t)
			first := newRedirServer(t)
			first.status = status
			first.redirect = func(r *http.Request) string { return other.URL + "/mcp" }
			start := func(allow ...string) (*HTTP, *frameRec) {
				rec := newFrameRec()
				h := NewHTTP(HTTPOptions{URL: first.URL + "/mcp", Bearer: redirCanary + "-bearer", Headers: redirHeaders(), AllowRedirects: allow})
				if err := h.Start(rec.sink); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { h.Close() })
				return h, rec
			}

			// By default: refused, said so, journaled, and nothing reached the other origin.
			h, rec := start()
			err := httpSend(t, h, httpRequest(1, "initialize", httpInitParams))
			var re *RedirectError
			if !errors.As(err, &re) || re.Status != status || re.Origin != other.URL ||
				!strings.Contains(err.Error(), "redirected ("+fmt.Sprint(status)+") to "+other.URL+"/mcp") || !strings.Contains(err.Error(), "not followed") {
				t.Fatalf("want a refused redirect naming %s, got %v", other.URL, err)
			}
			redirEvent(t, rec, status, other.URL+"/mcp", "not followed")
			if n := len(other.requests()); n != 0 {
				t.Fatalf("the other origin got %d requests", n)
			}
			noCanaryInFrames(t, rec)

			// Allowed: followed, still without credentials.
			for _, allow := range []string{other.URL, "*"} {
				h, rec = start(allow)
				httpInitialize(t, h, rec)
				redirEvent(t, rec, status, other.URL+"/mcp", "followed without credentials")
				noCredentials(t, other)
				plainHeaderArrived(t, other)
				noCanaryInFrames(t, rec)
			}
		})
	}
}

// A redirect within the origin is followed with every credential, and is
// journaled all the same.
func TestHTTPRedirectSameOrigin(t *testing.T) {
	srv := newRedirServer(t)
	srv.status = http.StatusTemporaryRedirect
	srv.redirect = func(r *http.Request) string {
		if r.URL.Path == "/old" {
			return "/mcp"
		}
		return ""
	}
	rec := newFrameRec()
	h := NewHTTP(HTTPOptions{URL: srv.URL + "/old", Bearer: redirCanary + "-bearer", Headers: redirHeaders()})
	h.Start(rec.sink)
	defer httpClose(t, h)
	httpInitialize(t, h, rec)
	redirEvent(t, rec, http.StatusTemporaryRedirect, srv.URL+"/mcp", "same origin, followed")
	allCredentials(t, srv)
	noCanaryInFrames(t, rec)
}

// A chain that left the origin brings no credential back: A → B (allowed)
// → A again reaches A without them.
func TestHTTPRedirectBackHomeStaysStripped(t *testing.T) {
	home := newRedirServer(t)
	away := newRedirServer(t)
	home.status, away.status = http.StatusTemporaryRedirect, http.StatusTemporaryRedirect
	home.redirect = func(r *http.Request) string {
		if r.URL.Path == "/mcp" {
			return away.URL + "/bounce"
		}
		return ""
	}
	away.redirect = func(r *http.Request) string { return home.URL + "/final" }
	rec := newFrameRec()
	h := NewHTTP(HTTPOptions{URL: home.URL + "/mcp", Bearer: redirCanary + "-bearer", Headers: redirHeaders(), AllowRedirects: []string{away.URL}})
	h.Start(rec.sink)
	defer httpClose(t, h)
	httpInitialize(t, h, rec)
	for _, r := range home.requests() {
		if r.path == "/final" && strings.Contains(fmt.Sprint(r.header), redirCanary) {
			t.Fatalf("credentials came back home after leaving: %v", r.header)
		}
	}
	noCredentials(t, away)
}

// GET (listen) and DELETE (close) take the same road as POST.
func TestHTTPRedirectEveryMethod(t *testing.T) {
	other := newRedirServer(t)
	first := newRedirServer(t)
	first.status = http.StatusPermanentRedirect
	first.redirect = func(r *http.Request) string { return other.URL + "/mcp" }
	rec := newFrameRec()
	h := NewHTTP(HTTPOptions{URL: first.URL + "/mcp", Bearer: redirCanary + "-bearer", Headers: redirHeaders()})
	h.Start(rec.sink)
	h.SetSessionID("s-1")

	got := make(chan error, 1)
	h.OpenListen(func(err error) { got <- err })
	var re *RedirectError
	if err := recvWithin(t, got, "listen"); !errors.As(err, &re) {
		t.Fatalf("GET: want a refused redirect, got %v", err)
	}
	httpClose(t, h) // DELETEs session s-1
	_, del := rec.wait(t, "the DELETE's outcome", func(f Frame) bool {
		return f.Meta.HTTPMethod == http.MethodDelete && f.Meta.Event == EvNote
	})
	if !strings.Contains(del.Meta.Detail, "not followed") {
		t.Fatalf("DELETE: want a refused redirect, got %q", del.Meta.Detail)
	}
	if rec.count(func(f Frame) bool { return f.Meta.Event == EvRedirect }) != 2 {
		t.Fatalf("want one redirect event per request; frames:\n%s", rec.dump())
	}
	if n := len(other.requests()); n != 0 {
		t.Fatalf("the other origin got %d requests", n)
	}
}

// ---- HTTP+SSE ------------------------------------------------------------------

func TestLegacySSERedirectToAnotherOrigin(t *testing.T) {
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			// The GET is redirected.
			other := newRedirServer(t)
			first := newRedirServer(t)
			first.status = status
			first.redirect = func(r *http.Request) string { return other.URL + r.URL.Path }
			o := LegacySSEOptions{URL: first.URL + "/sse", Bearer: redirCanary + "-bearer", Headers: redirHeaders()}
			l := NewLegacySSE(o)
			defer l.Close()
			rec := newFrameRec()
			err := l.Start(rec.sink)
			var re *RedirectError
			if !errors.As(err, &re) || re.Status != status || !strings.Contains(err.Error(), other.URL+"/sse") {
				t.Fatalf("GET: want a refused redirect to %s, got %v", other.URL, err)
			}
			redirEvent(t, rec, status, other.URL+"/sse", "not followed")
			if n := len(other.requests()); n != 0 {
				t.Fatalf("the other origin got %d requests", n)
			}
			noCanaryInFrames(t, rec)

			// Allowed: the GET and the POSTs (sent to the first origin's
			// endpoint, redirected too) reach the other origin bare.
			o.AllowRedirects = []string{other.URL}
			l, rec = lsseStart(t, o)
			redirEvent(t, rec, status, other.URL+"/sse", "followed without credentials")
			lsseMustSend(t, l, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			redirEvent(t, rec, status, other.URL+"/message", "followed without credentials")
			noCredentials(t, other)
			plainHeaderArrived(t, other)
			noCanaryInFrames(t, rec)
		})
	}
}

// A POST to the endpoint redirected to another origin is refused, while the
// GET (same origin) carried the credentials.
func TestLegacySSEPostRedirectRefused(t *testing.T) {
	other := newRedirServer(t)
	first := newRedirServer(t)
	first.status = http.StatusTemporaryRedirect
	first.redirect = func(r *http.Request) string {
		if r.Method == http.MethodPost {
			return other.URL + "/message"
		}
		return ""
	}
	l, rec := lsseStart(t, LegacySSEOptions{URL: first.URL + "/sse", Bearer: redirCanary + "-bearer", Headers: redirHeaders()})
	err := lsseSend(t, l, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	var re *RedirectError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), other.URL+"/message") {
		t.Fatalf("POST: want a refused redirect, got %v", err)
	}
	redirEvent(t, rec, http.StatusTemporaryRedirect, other.URL+"/message", "not followed")
	if n := len(other.requests()); n != 0 {
		t.Fatalf("the other origin got %d requests", n)
	}
	allCredentials(t, first)
}

func TestLegacySSERedirectSameOrigin(t *testing.T) {
	srv := newRedirServer(t)
	srv.status = http.StatusPermanentRedirect
	srv.redirect = func(r *http.Request) string {
		if r.URL.Path == "/old-sse" {
			return "/sse"
		}
		return ""
	}
	l, rec := lsseStart(t, LegacySSEOptions{URL: srv.URL + "/old-sse", Bearer: redirCanary + "-bearer", Headers: redirHeaders()})
	redirEvent(t, rec, http.StatusPermanentRedirect, srv.URL+"/sse", "same origin, followed")
	lsseMustSend(t, l, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	allCredentials(t, srv)
	noCanaryInFrames(t, rec)
}

// ---- origins -------------------------------------------------------------------

func TestParseOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"*":                            "*",
		"https://Auth.Example.com":     "https://auth.example.com:443",
		"https://auth.example.com:443": "https://auth.example.com:443",
		"http://127.0.0.1:8080/":       "http://127.0.0.1:8080",
		"http://[::1]:9000":            "http://[::1]:9000",
		"http://example.com":           "http://example.com:80",
	} {
		if got, err := ParseOrigin(in); err != nil || got != want {
			t.Errorf("ParseOrigin(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "example.com", "ftp://example.com", "https://example.com/mcp", "https://u:SECRET@example.com", "https://e.com?x=1", "https://"} {
		_, err := ParseOrigin(bad)
		if err == nil || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("ParseOrigin(%q): want an error without the secret, got %v", bad, err)
		}
	}
}
