package httpserve

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// A stream that never ends by itself is ended by stop, and Serve returns
// nil once its context is done.
func TestServeStopsStreamsAndReturns(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	end := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-end // a long-lived stream: only stop ends it
	})
	urls := make(chan string, 1)
	stopped := make(chan struct{})
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, "", "/mcp", h, func(u string) { urls <- u }, func() { close(stopped); close(end) })
	}()
	u := <-urls
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve returned %v after its context ended, want nil", err)
		}
	case <-time.After(time.Minute): // hang guard only
		t.Fatal("Serve did not return after its context ended")
	}
	select {
	case <-stopped:
	default:
		t.Fatal("stop was not called")
	}
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Logf("stream ended with %v", err)
	}
}

func TestServeReportsListenFailure(t *testing.T) {
	if err := Serve(context.Background(), "256.0.0.1:0", "/", http.NotFoundHandler(), nil, nil); err == nil {
		t.Fatal("Serve on an impossible address returned nil")
	}
}

func TestURLShowsLoopbackForUnspecified(t *testing.T) {
	for _, c := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8080}, "http://127.0.0.1:8080/mcp"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, "http://127.0.0.1:8080/mcp"},
		{&net.TCPAddr{IP: net.ParseIP("::1"), Port: 9}, "http://[::1]:9/mcp"},
		{&net.TCPAddr{IP: net.ParseIP("10.0.0.2"), Port: 9}, "http://10.0.0.2:9/mcp"},
	} {
		if got := URL(c.addr, "/mcp"); got != c.want {
			t.Errorf("URL(%v) = %q, want %q", c.addr, got, c.want)
		}
	}
}
