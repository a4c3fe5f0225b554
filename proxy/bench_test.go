package proxy

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// mcpscopeBinary builds the real binary (without -race: the figures are
// the product's) once per test run.
func mcpscopeBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		_, self, _, _ := runtime.Caller(0)
		root := filepath.Dir(filepath.Dir(self))
		dir, err := os.MkdirTemp("", "mcpscope-proxy-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "mcpscope")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatalf("build mcpscope: %v", binErr)
	}
	return binPath
}

// pipeServer is a server process the test talks to as a host would.
type pipeServer struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startPipe(t *testing.T, argv []string, env ...string) *pipeServer {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &pipeServer{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	return p
}

// roundTrips sends n one-line requests one at a time through cat and
// returns each round trip's time, sorted.
func roundTrips(t *testing.T, p *pipeServer, n int) []time.Duration {
	t.Helper()
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + strings.Repeat("x", 200) + "\"}}}\n")
	d := make([]time.Duration, 0, n)
	for i := 0; i < n+100; i++ {
		start := time.Now()
		p.in.Write(line)
		if _, err := p.out.ReadSlice('\n'); err != nil {
			t.Fatal(err)
		}
		if i >= 100 { // warm-up
			d = append(d, time.Since(start))
		}
	}
	slices.Sort(d)
	return d
}

func pct(d []time.Duration, p float64) time.Duration { return d[int(float64(len(d)-1)*p)] }

// flood reads n lines the server writes after one line of input, and
// returns how long it took.
func flood(t *testing.T, p *pipeServer, n int) time.Duration {
	t.Helper()
	start := time.Now()
	p.in.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"go\"}\n"))
	for i := 0; i < n; i++ {
		if _, err := p.out.ReadSlice('\n'); err != nil {
			t.Fatalf("after %d lines: %v", i, err)
		}
	}
	return time.Since(start)
}

func peakRSS(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			return strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:"))
		}
	}
	return "?"
}

// TestOverheadFigures prints what the proxy costs, measured in one run
// against the same servers direct: added latency per message (p50, p99)
// through cat, and the throughput of a notification flood (1M lines with
// MCPSCOPE_PROXY_FLOOD unset) with the proxy's peak RSS. Figures, never
// assertions.
func TestOverheadFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("figures: skipped in -short mode")
	}
	bin := mcpscopeBinary(t)
	dir := shortTemp(t)
	env := []string{"XDG_STATE_HOME=" + dir, "XDG_RUNTIME_DIR=" + dir}
	const trips = 3000
	direct := roundTrips(t, startPipe(t, []string{"cat"}), trips)
	prox := startPipe(t, []string{bin, "proxy", "--name", "bench", "--", "cat"}, env...)
	proxied := roundTrips(t, prox, trips)
	t.Logf("latency per request+response through cat, %d round trips: direct p50 %v p99 %v; proxy p50 %v p99 %v; added p50 %v p99 %v",
		trips, pct(direct, .5), pct(direct, .99), pct(proxied, .5), pct(proxied, .99),
		pct(proxied, .5)-pct(direct, .5), pct(proxied, .99)-pct(direct, .99))

	n := 1_000_000
	if s := os.Getenv("MCPSCOPE_PROXY_FLOOD"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"flood","data":"a log line of some length, as servers send them"}}`
	server := []string{"sh", "-c", "read l; yes '" + note + "' | head -n " + strconv.Itoa(n)}
	dt := flood(t, startPipe(t, server), n)
	for _, journal := range []bool{true, false} {
		args := []string{bin, "proxy", "--name", "flood"}
		if !journal {
			args = append(args, "--no-journal")
		}
		p := startPipe(t, append(append(args, "--"), server...), env...)
		pt := flood(t, p, n)
		rss := peakRSS(p.cmd.Process.Pid)
		t.Logf("flood of %d notifications (%d bytes each): direct %v (%.0f/s); proxy with journal=%v %v (%.0f/s): %.2f of direct; proxy peak RSS %s",
			n, len(note)+1, dt.Round(time.Millisecond), float64(n)/dt.Seconds(), journal, pt.Round(time.Millisecond), float64(n)/pt.Seconds(),
			dt.Seconds()/pt.Seconds(), rss)
	}
}
