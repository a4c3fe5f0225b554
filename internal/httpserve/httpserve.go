// Package httpserve runs a local HTTP server until its context ends and then
// shuts it down gracefully, in bounded time: the one lifecycle `mcpscope
// serve` (a recording) and `mcpscope demo --http` share.
package httpserve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Grace is how long a shutdown waits for open requests before cutting them.
const Grace = 2 * time.Second

// Serve listens on addr (127.0.0.1:0, loopback on a free port, when empty),
// serves h, and calls ready with the URL of path on it once it accepts
// connections (an unspecified host, 0.0.0.0 or ::, is shown as loopback).
// When ctx is done it calls stop, which must end the handler's long-lived
// streams (they do not end by themselves), then shuts the server down,
// waiting at most Grace for requests still open. A failure to serve is
// returned; a stop asked for by ctx is nil.
func Serve(ctx context.Context, addr, path string, h http.Handler, ready func(url string), stop func()) error {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if ready != nil {
		ready(URL(ln.Addr(), path))
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	if stop != nil {
		stop()
	}
	sctx, cancel := context.WithTimeout(context.Background(), Grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// URL is the http URL of path on a listener's address, as a client can use
// it: an unspecified host (0.0.0.0, ::) becomes 127.0.0.1.
func URL(a net.Addr, path string) string {
	host, port, _ := net.SplitHostPort(a.String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + path
}
