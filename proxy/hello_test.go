package proxy

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A proxy of an older build says its target as typed; what a viewer (and
// `mcpscope proxies`, attach) reads of it is redacted.
func TestDialRedactsTheTarget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.Write([]byte(`{"type":"hello","name":"old","transport":"http","target":"http: http://ada:PW-CANARY@127.0.0.1:9/mcp?api_key=KEY-CANARY"}` + "\n"))
		var b [1]byte
		c.Read(b[:]) // until the viewer hangs up
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Dial(ctx, path, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := c.Hello.Target; strings.Contains(got, "CANARY") || got != "http: http://[redacted]@127.0.0.1:9/mcp?api_key=[redacted]" {
		t.Fatalf("hello target %q", got)
	}
}
