package cli

import (
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"mcpscope/testkit/otlptest"
	"mcpscope/testkit/peers"
	"mcpscope/testkit/testservers"
)

// TestOTLPLiveCollector: a headless call with --otlp sends a real
// OpenTelemetry Collector (official components: OTLP receiver, file
// exporter) the very spans export --format otlp writes for its journal:
// same trace and span ids, names, times, attributes, events and status.
func TestOTLPLiveCollector(t *testing.T) {
	col := peers.StartCollector(t)
	bin := testservers.BuildStdio(t)
	dir := t.TempDir()
	journal := filepath.Join(dir, "call.jsonl")
	code, out, errs := runIn(t, dir, "call", "echo", "message=traced", "--otlp", col.Endpoint, "--journal", journal, "--", bin)
	if code != exitOK || !strings.Contains(out, "traced") {
		t.Fatalf("call: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if strings.Contains(errs, "OpenTelemetry") {
		t.Fatalf("the collector was up, yet stderr reports on OpenTelemetry: %s", errs)
	}
	got := otlptest.Read(t, col.Received(t))
	code, exported, errs := runIn(t, dir, "export", "--format", "otlp", journal)
	if code != exitOK {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	want := otlptest.Read(t, []byte(exported))
	if d := otlptest.Diff(got, want); d != "" {
		t.Fatalf("the collector received other spans than the export writes:\n%s", d)
	}
	names := map[string]bool{}
	for _, s := range got.Spans {
		names[s.Name] = true
	}
	if !names["tools/call echo"] || len(got.Spans) < 2 {
		t.Fatalf("spans %v: want the handshake's and tools/call echo", names)
	}
}

// TestOTLPCollectorDown: a collector that is not there changes nothing
// for the session: the call succeeds, and stderr says how many spans were
// dropped and why.
func TestOTLPCollectorDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	bin := testservers.BuildStdio(t)
	code, out, errs := runIn(t, t.TempDir(), "call", "echo", "message=hi", "--otlp", "http://"+addr, "--no-journal", "--", bin)
	if code != exitOK || !strings.Contains(out, "hi") {
		t.Fatalf("call: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if n := droppedOf(t, errs); n < 2 {
		t.Fatalf("want the handshake's and the call's spans counted as dropped, got %d: %s", n, errs)
	}
	if !strings.Contains(errs, "connection refused") {
		t.Fatalf("stderr does not say why: %s", errs)
	}
}

// TestOTLPCollectorSlow: a collector that takes connections and never
// answers does not hold the session, nor its end, for its timeout (an
// hour here): the last spans get a bounded moment, then count as dropped.
func TestOTLPCollectorSlow(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		var held []net.Conn // never read, never answered
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", strconv.Itoa(int(time.Hour/time.Millisecond)))
	bin := testservers.BuildStdio(t)
	start := time.Now()
	code, out, errs := runIn(t, t.TempDir(), "call", "echo", "message=hi", "--otlp", "http://"+ln.Addr().String(), "--no-journal", "--", bin)
	took := time.Since(start)
	if code != exitOK || !strings.Contains(out, "hi") {
		t.Fatalf("call: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	// Far below the collector's hour: the hang guard of a loaded machine.
	if took > 2*time.Minute {
		t.Fatalf("the call took %s with a collector that never answers", took)
	}
	if n := droppedOf(t, errs); n < 2 {
		t.Fatalf("want the spans counted as dropped, got %d: %s", n, errs)
	}
}

// TestOTLPHeadersStayWithTheirEndpoint: the environment's headers are
// credentials for the environment's endpoint; --otlp to another origin does
// not get them, and nothing prints them.
func TestOTLPHeadersStayWithTheirEndpoint(t *testing.T) {
	const secret = "s3cr3t-token-value"
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key="+secret)
	bin := testservers.BuildStdio(t)
	code, out, errs := runIn(t, t.TempDir(), "call", "echo", "message=hi", "--otlp", "http://127.0.0.2:1", "--no-journal", "--", bin)
	if code != exitOK {
		t.Fatalf("call: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if strings.Contains(out+errs, secret) {
		t.Fatalf("the header's value was printed: %s", errs)
	}
	if !strings.Contains(errs, "not sent to http://127.0.0.2:1") {
		t.Fatalf("stderr does not say the headers were left out: %s", errs)
	}
}

var droppedRE = regexp.MustCompile(`(\d+) dropped`)

// droppedOf is the count of dropped spans stderr reports (0: none).
func droppedOf(t *testing.T, stderr string) int {
	t.Helper()
	m := droppedRE.FindStringSubmatch(stderr)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
