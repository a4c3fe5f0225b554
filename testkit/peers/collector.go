package peers

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// EnvCollector names the OpenTelemetry Collector binary built from
// test/otelcol (scripts/test.sh builds it and sets it).
const EnvCollector = "MCPSCOPE_OTELCOL"

// Collector is a running OpenTelemetry Collector built from the official
// components: the OTLP receiver on Endpoint (OTLP/HTTP), and the file
// exporter writing what it receives as OTLP/JSON, one request a line.
type Collector struct {
	Endpoint string // http://127.0.0.1:PORT
	file     string
	p        *proc
}

// CollectorBinary is the collector's path: $MCPSCOPE_OTELCOL, else
// test/otelcol/bin/otelcol. When it is missing the test is skipped, or
// under MCPSCOPE_REQUIRE_PEERS=1 fails.
func CollectorBinary(t testing.TB) string {
	t.Helper()
	p := os.Getenv(EnvCollector)
	if p == "" {
		if root, ok := ModuleRoot(); ok {
			p = filepath.Join(root, "test", "otelcol", "bin", "otelcol")
		}
	}
	if p == "" || !executable(p) {
		missing(t, "the OpenTelemetry Collector of test/otelcol is not built: run scripts/test.sh "+
			"(or: cd test/otelcol && go build -o bin/otelcol .)")
	}
	return p
}

// StartCollector starts the collector on a free loopback port with a
// config written here; it is stopped when the test ends.
func StartCollector(t testing.TB) *Collector {
	t.Helper()
	bin := CollectorBinary(t)
	dir := t.TempDir()
	c := &Collector{file: filepath.Join(dir, "spans.jsonl")}
	ports := startOnFreePorts(t, "the OpenTelemetry Collector", "127.0.0.1", 1, func(ports []int) *proc {
		// No internal metrics: they would listen on a fixed port.
		config := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
exporters:
  file:
    path: %s
service:
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
`, ports[0], strconv.Quote(c.file))
		cfg := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
			t.Fatalf("peers: collector config: %v", err)
		}
		c.p = start(t, "otelcol", bin, []string{"--config", cfg})
		return c.p // the last one started is the one that came up
	})
	c.Endpoint = "http://127.0.0.1:" + strconv.Itoa(ports[0])
	return c
}

// Received stops the collector (which flushes the file exporter) and
// returns what it received: the file's lines, each an OTLP/JSON
// ExportTraceServiceRequest.
func (c *Collector) Received(t testing.TB) []byte {
	t.Helper()
	// SIGTERM: the collector shuts its pipeline down and the file
	// exporter flushes. The bound is a hang guard only.
	terminateGroup(c.p.cmd)
	select {
	case <-c.p.exited:
	case <-time.After(StartTimeout * 2):
		t.Fatalf("peers: the collector did not exit on SIGTERM; output:\n%s", c.p.out.String())
	}
	c.p.stop()
	b, err := os.ReadFile(c.file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatalf("peers: reading what the collector received: %v", err)
	}
	return b
}
