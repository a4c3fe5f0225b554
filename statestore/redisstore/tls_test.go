package redisstore_test

import (
	"strings"
	"testing"

	"mcpscope/statestore"
	"mcpscope/statestore/redisstore"
	"mcpscope/testkit/redistest"
)

// A real redis-server that speaks TLS only and asks for a client
// certificate: reached with the CA and the certificate named by options or
// by the URL's parameters (which go-redis never sees); refused without
// them; the command line another process is given keeps them. A sealed
// record comes back sealed through it.
func TestTLSRedis(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv(statestore.EnvStateKey, "")
	srv := redistest.StartTLS(t)
	ping := func(o redisstore.Options) (*redisstore.Store, error) {
		s, err := redisstore.Open(o)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { s.Close() })
		return s, s.Ping()
	}
	if _, err := ping(redisstore.Options{URL: srv.URL(0)}); err == nil {
		t.Fatal("reached a Redis whose CA is not trusted")
	}
	if _, err := ping(redisstore.Options{URL: srv.URL(0), TLS: redisstore.TLSFiles{CA: srv.CA}}); err == nil {
		t.Fatal("reached a Redis that asks for a client certificate without one")
	}
	s, err := ping(redisstore.Options{URL: srv.URL(0), TLS: redisstore.TLSFiles{CA: srv.CA, Cert: srv.Cert, CertKey: srv.Key}})
	if err != nil {
		t.Fatalf("with the CA and the client certificate as options: %v", err)
	}
	args := strings.Join(s.StateArgs(), " ")
	if !strings.Contains(args, "ca=") || !strings.Contains(args, "cert_key=") {
		t.Fatalf("another process's --state loses the TLS files: %s", args)
	}
	byURL, err := ping(redisstore.Options{URL: s.StateArgs()[1]})
	if err != nil {
		t.Fatalf("with the files as URL parameters: %v", err)
	}
	d := statestore.Detached{Handle: "tls-1", Target: "http://127.0.0.1:1/mcp", Transport: "http", RequestID: []byte("3"), Method: "tools/call"}
	statestore.SealRecord(&d)
	if err := byURL.Put(d); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get("tls-1"); err != nil || !statestore.RecordSealed(got) {
		t.Fatalf("a sealed record read back: sealed %v, %v", statestore.RecordSealed(got), err)
	}
	for _, bad := range []redisstore.Options{
		{URL: "redis://127.0.0.1:1/0", TLS: redisstore.TLSFiles{CA: srv.CA}},
		{URL: srv.URL(0) + "?ca=" + srv.CA, TLS: redisstore.TLSFiles{CA: srv.Cert}},
		{URL: srv.URL(0), TLS: redisstore.TLSFiles{Cert: srv.Cert}},
	} {
		if _, err := redisstore.Open(bad); err == nil {
			t.Errorf("Open(%+v) took it", bad)
		}
	}
}
