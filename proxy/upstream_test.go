package proxy

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
)

// TestUpstreamKeepsConnections: the proxy sends a host's requests to a
// plain-HTTP upstream on kept-alive connections (one for sequential
// requests), sends a request again on a fresh connection when the server
// had closed the kept one, and forwards each answer whole.
func TestUpstreamKeepsConnections(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(len(body)) + `,"result":{}}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	h, _ := startHTTPProxy(t, srv.URL+"/mcp")
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	ping := func(i int) {
		t.Helper()
		req := []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"ping"}`)
		resp, err := c.Post(h.Listen, "application/json", bytes.NewReader(req))
		if err != nil {
			t.Fatalf("ping %d: %v", i, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := `{"jsonrpc":"2.0","id":` + strconv.Itoa(len(req)) + `,"result":{}}`
		if err != nil || resp.StatusCode != 200 || string(b) != want {
			t.Fatalf("ping %d: HTTP %d %q (%v), want %s", i, resp.StatusCode, b, err, want)
		}
	}
	for i := range 20 {
		ping(i)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("20 sequential requests took %d connections to the upstream, want 1 kept alive", n)
	}
	srv.CloseClientConnections() // the server drops the kept connection
	ping(100)
	if n := conns.Load(); n != 2 {
		t.Errorf("after the server closed the kept connection: %d connections, want a second one", n)
	}
}
