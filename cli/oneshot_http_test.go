package cli

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"mcpscope/testkit/testservers"
)

// countingFront passes every request to the server at target and counts
// them: "GET", "DELETE", and each POSTed JSON-RPC method.
type countingFront struct {
	mu   sync.Mutex
	seen map[string]int
}

func (c *countingFront) count(what string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[what]
}

func startCountingFront(t *testing.T, target string) (*countingFront, string) {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	c := &countingFront{seen: map[string]int{}}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		what := r.Method
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if _, m, ok := strings.Cut(string(body), `"method":"`); ok {
				what, _, _ = strings.Cut(m, `"`)
			}
		}
		c.mu.Lock()
		c.seen[what]++
		c.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return c, front.URL + u.Path
}

// A one-shot command that reads only its own answers opens no standalone
// GET stream on a 2025 server (a second connection for nothing), and the
// server's refusal of server/discover is remembered: the second run asks
// initialize at once. A call keeps its stream: the server may ask things
// on it while the call runs.
func TestOneShotHTTPAsksOnlyWhatItNeeds(t *testing.T) {
	c, target := startCountingFront(t, testservers.StartHTTP(t, testservers.HTTPOpts{}))
	state := t.TempDir()
	for i, argv := range [][]string{
		{"tools"},
		{"ping"},
		{"read", "demo://readme"},
		{"prompt", "greeting", "name=Ada"},
		{"resources"},
	} {
		code, out, errs := runIn(t, state, append(argv, "--no-journal", target)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s%s", argv, code, out, errs)
		}
		if n := c.count("GET"); n != 0 {
			t.Fatalf("%v opened %d GET streams, want none", argv, n)
		}
		if n := c.count("server/discover"); n != 1 {
			t.Fatalf("after %d runs the server was asked server/discover %d times, want once (the first run)", i+1, n)
		}
	}
	if code, out, errs := runIn(t, state, "call", "echo", "message=hi", "--no-journal", target); code != exitOK || c.count("GET") != 1 {
		t.Fatalf("call: exit %d, %d GET streams (want 1)\n%s%s", code, c.count("GET"), out, errs)
	}
	if n := c.count("initialize"); n != 6 {
		t.Fatalf("%d initialize requests for 6 runs", n)
	}
}
