package faultproxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// upstream is a tiny server with the shapes MCP traffic has: streamed bytes,
// an SSE stream gated by the test, a stream held open until its client goes,
// and an echo of what arrived.
type upstream struct {
	URL   string
	gate  chan struct{} // /sse sends its second event once this is released
	once  sync.Once
	gone  chan string // /hold reports its ?name when its client went away
	posts atomic.Int64
	gets  atomic.Int64
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{gate: make(chan struct{}), gone: make(chan string, 8)}
	mux := http.NewServeMux()
	mux.HandleFunc("/bytes", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		for i := 0; i < n; i += 10 { // several writes: cuts land across reads
			io.WriteString(w, pattern(i, min(i+10, n)))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/sse", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\ndata: first\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-u.gate:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "id: 2\ndata: second\n\n")
	})
	mux.HandleFunc("/hold", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: hello\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		u.gone <- r.URL.Query().Get("name")
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			u.posts.Add(1)
		} else {
			u.gets.Add(1)
		}
		body, _ := io.ReadAll(r.Body)
		h := w.Header()
		h.Set("Mcp-Session-Id", "srv-1")
		h.Set("X-Saw-Method", r.Method)
		h.Set("X-Saw-Query", r.URL.RawQuery)
		h.Set("X-Saw-Session", r.Header.Get("Mcp-Session-Id"))
		h.Set("X-Saw-Last-Event-Id", r.Header.Get("Last-Event-ID"))
		h.Set("X-Saw-Auth", r.Header.Get("Authorization"))
		h.Set("X-Saw-Hop", r.Header.Get("X-Hop"))
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		w.Write(body)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	t.Cleanup(u.release) // before ts.Close, which waits for /sse
	u.URL = ts.URL
	return u
}

func (u *upstream) release() { u.once.Do(func() { close(u.gate) }) }

func pattern(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		b.WriteByte('a' + byte(i%26))
	}
	return b.String()
}

func client(t *testing.T) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}
}

// get returns the body bytes that arrived and the error that ended them.
func get(t *testing.T, c *http.Client, url string) (int, []byte, error) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func TestHeadersPassThroughBothWays(t *testing.T) {
	up := newUpstream(t)
	pu, p := Start(t, up.URL+"/echo?sessionId=abc", Faults{})
	if !strings.HasSuffix(pu, "/echo?sessionId=abc") || strings.HasPrefix(pu, up.URL) {
		t.Fatalf("proxy URL %q should be the upstream endpoint behind the proxy", pu)
	}
	c := client(t)
	req, _ := http.NewRequest(http.MethodPost, pu, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Mcp-Session-Id", "c-1")
	req.Header.Set("Last-Event-ID", "ev-7")
	req.Header.Set("Authorization", "Bearer t")
	req.Header.Set("Connection", "X-Hop") // names a hop-by-hop header: it must not pass
	req.Header.Set("X-Hop", "1")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	h := resp.Header
	want := map[string]string{"Mcp-Session-Id": "srv-1", "X-Saw-Method": "POST", "X-Saw-Query": "sessionId=abc",
		"X-Saw-Session": "c-1", "X-Saw-Last-Event-Id": "ev-7", "X-Saw-Auth": "Bearer t", "X-Saw-Hop": "",
		"Content-Type": "application/json"}
	for k, v := range want {
		if h.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, h.Get(k), v)
		}
	}
	if resp.StatusCode != http.StatusAccepted || string(body) != `{"jsonrpc":"2.0","id":1,"method":"ping"}` {
		t.Errorf("answer %d %q", resp.StatusCode, body)
	}
	if s := p.Stats(); s.Requests != 1 || s.Forwarded != 1 || s.Cuts+s.Fail500+s.Delayed != 0 {
		t.Errorf("stats %+v", s)
	}
}

func TestStreamsWithoutBuffering(t *testing.T) {
	up := newUpstream(t)
	pu, _ := Start(t, up.URL+"/sse", Faults{})
	resp, err := client(t).Get(pu)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	first := make(chan string, 1)
	go func() {
		var ev strings.Builder
		for {
			line, err := br.ReadString('\n')
			ev.WriteString(line)
			if err != nil || line == "\n" {
				first <- ev.String()
				return
			}
		}
	}()
	// The upstream holds its second event until the first is seen here: a
	// buffering proxy would never deliver the first.
	select {
	case ev := <-first:
		if ev != "id: 1\ndata: first\n\n" {
			t.Fatalf("first event %q", ev)
		}
	case <-time.After(2 * time.Minute): // a hang guard
		t.Fatal("the first event did not arrive while the upstream was still streaming")
	}
	up.release()
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "id: 2\ndata: second\n\n" {
		t.Fatalf("rest %q, %v", rest, err)
	}
}

func TestCutAtConfiguredPoints(t *testing.T) {
	up := newUpstream(t)
	cuts := map[int]int{1: 25, 2: -1, 3: 0, 4: 199, 5: 200, 6: 201}
	pu, p := Start(t, up.URL+"/bytes?n=200", Faults{CutAfterBytes: func(_ *http.Request, nth int) int { return cuts[nth] }})
	c := client(t)
	for nth := 1; nth <= 6; nth++ {
		status, b, err := get(t, c, pu)
		if status != 200 || string(b) != pattern(0, len(b)) {
			t.Fatalf("request %d: status %d, body %q", nth, status, b)
		}
		switch at := cuts[nth]; {
		case at < 0 || at > 200: // never, or past the end: the body is whole
			if err != nil || len(b) != 200 {
				t.Errorf("request %d: %d bytes, %v; want all 200", nth, len(b), err)
			}
		default: // at 200 every byte arrives, but the body never ends cleanly
			if !errors.Is(err, io.ErrUnexpectedEOF) || len(b) != at {
				t.Errorf("request %d: %d bytes, %v; want a cut after %d", nth, len(b), err, at)
			}
		}
	}
	s := p.Stats()
	if s.Cuts != 4 || !slices.Equal(s.CutAt, []int64{25, 0, 199, 200}) || s.Requests != 6 || s.Forwarded != 6 {
		t.Errorf("stats %+v", s)
	}
}

// run makes n sequential requests and describes each outcome.
func seededRun(t *testing.T, seed int64) ([]string, Stats) {
	up := newUpstream(t)
	pu, p := Start(t, up.URL+"/bytes?n=200", Faults{Seed: seed, CutProbability: 0.5, MaxCutBytes: 300})
	c := client(t)
	var got []string
	for range 16 {
		_, b, err := get(t, c, pu)
		if err != nil {
			got = append(got, fmt.Sprintf("cut@%d", len(b)))
		} else {
			got = append(got, fmt.Sprintf("whole:%d", len(b)))
		}
	}
	return got, p.Stats()
}

func TestSeededCutsAreDeterministic(t *testing.T) {
	a, sa := seededRun(t, 42)
	b, _ := seededRun(t, 42)
	c, _ := seededRun(t, 7)
	if !slices.Equal(a, b) {
		t.Errorf("same seed, different faults:\n%v\n%v", a, b)
	}
	if slices.Equal(a, c) {
		t.Errorf("seeds 42 and 7 gave the same faults: %v", a)
	}
	var cutAt []int64
	for _, o := range a {
		if n, ok := strings.CutPrefix(o, "cut@"); ok {
			v, _ := strconv.Atoi(n)
			cutAt = append(cutAt, int64(v))
		}
	}
	if len(cutAt) == 0 || len(cutAt) == len(a) {
		t.Errorf("want some cut and some whole responses: %v", a)
	}
	// Stats agree with what the client saw, byte for byte.
	if sa.Cuts != len(cutAt) || !slices.Equal(sa.CutAt, cutAt) {
		t.Errorf("stats %+v, client saw cuts at %v", sa, cutAt)
	}
}

func TestFail500EveryNthMatching(t *testing.T) {
	up := newUpstream(t)
	onlyPOST := func(r *http.Request) bool { return r.Method == http.MethodPost }
	pu, p := Start(t, up.URL+"/echo", Faults{Fail500Every: 3, Match: onlyPOST})
	c := client(t)
	var failed []int
	for i := 1; i <= 9; i++ {
		resp, err := c.Post(pu, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusInternalServerError {
			failed = append(failed, i)
		}
		if status, _, err := get(t, c, pu); status != http.StatusAccepted || err != nil { // never faulted
			t.Errorf("GET %d: %d %v", i, status, err)
		}
	}
	if !slices.Equal(failed, []int{3, 6, 9}) {
		t.Errorf("500s on POSTs %v, want 3, 6, 9", failed)
	}
	if up.posts.Load() != 6 || up.gets.Load() != 9 {
		t.Errorf("upstream saw %d POSTs and %d GETs; a 500 must not be forwarded", up.posts.Load(), up.gets.Load())
	}
	if s := p.Stats(); s.Fail500 != 3 || s.Requests != 18 || s.Forwarded != 15 {
		t.Errorf("stats %+v", s)
	}
}

// hold opens a held stream named name through the proxy at pu: a GET, or a
// POST of body when there is one; it returns once the first event is in.
func hold(t *testing.T, c *http.Client, pu, name, body string) *bufio.Reader {
	t.Helper()
	method, rd := http.MethodGet, io.Reader(nil)
	if body != "" {
		method, rd = http.MethodPost, strings.NewReader(body)
	}
	req, err := http.NewRequest(method, pu+"?name="+name, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); line != "data: hello\n" || err != nil {
		t.Fatalf("%s: first line %q, %v", name, line, err)
	}
	return br
}

// waitGone waits for the next held stream the upstream saw its client
// leave, and checks it is the one named want.
func (u *upstream) waitGone(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-u.gone:
		if got != want {
			t.Errorf("upstream saw %q go, want %q", got, want)
		}
	case <-time.After(2 * time.Minute): // a hang guard
		t.Fatalf("upstream never saw %s go", want)
	}
}

func TestCutOneThenAll(t *testing.T) {
	up := newUpstream(t)
	pu, p := Start(t, up.URL+"/hold", Faults{})
	c := client(t)
	a, b := hold(t, c, pu, "a", ""), hold(t, c, pu, "b", "")

	if n := p.Cut(func(r *http.Request) bool { return r.URL.Query().Get("name") == "b" }); n != 1 {
		t.Fatalf("Cut matched %d", n)
	}
	if _, err := io.ReadAll(b); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("b after cut: %v", err)
	}
	up.waitGone(t, "b")
	select {
	case name := <-up.gone:
		t.Fatalf("%s went too", name)
	default:
	}

	if n := p.CutAll(); n != 1 {
		t.Fatalf("CutAll matched %d", n)
	}
	if _, err := io.ReadAll(a); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a after CutAll: %v", err)
	}
	up.waitGone(t, "a")
	if s := p.Stats(); s.Cuts != 2 || !slices.Equal(s.CutAt, []int64{13, 13}) {
		t.Errorf("stats %+v", s)
	}
}

// CutCall cuts the stream of a request with that method and leaves a
// notification's POST and another request's stream alone.
func TestCutCall(t *testing.T) {
	up := newUpstream(t)
	pu, p := Start(t, up.URL+"/hold", Faults{})
	c := client(t)
	call := hold(t, c, pu, "call", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}`)
	hold(t, c, pu, "note", `{"jsonrpc":"2.0","method":"tools/call"}`) // no id: not a request
	hold(t, c, pu, "ping", `{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	if n := p.CutCall("tools/call"); n != 1 {
		t.Fatalf("CutCall matched %d", n)
	}
	if _, err := io.ReadAll(call); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("the call after the cut: %v", err)
	}
	up.waitGone(t, "call")
	if n := p.CutAll(); n != 2 {
		t.Errorf("CutAll after CutCall matched %d, want the two left", n)
	}
}

func TestDelay(t *testing.T) {
	up := newUpstream(t)
	pu, p := Start(t, up.URL+"/echo", Faults{Delay: 40 * time.Millisecond, Jitter: 20 * time.Millisecond, Seed: 1})
	start := time.Now()
	if status, _, err := get(t, client(t), pu); status != http.StatusAccepted || err != nil {
		t.Fatalf("%d %v", status, err)
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Errorf("answered after %v, before the 40ms delay", d)
	}
	if s := p.Stats(); s.Delayed != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestUpstreamDown(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	down := ts.URL + "/mcp"
	ts.Close()
	pu, p := Start(t, down, Faults{})
	status, body, _ := get(t, client(t), pu)
	if status != http.StatusBadGateway || !strings.Contains(string(body), "faultproxy: upstream") {
		t.Errorf("%d %q", status, body)
	}
	if s := p.Stats(); s.UpstreamErrors != 1 {
		t.Errorf("stats %+v", s)
	}
}
