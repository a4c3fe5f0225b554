package proxy

import (
	"bufio"
	"context"
	"io"
	"mcpscope/testkit/testservers"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// mcpscopeBinary is the real binary (without -race: the figures are the
// product's), built once per test run.
func mcpscopeBinary(t testing.TB) string {
	t.Helper()
	return testservers.BuildMCPScope(t)
}

// pipeServer is a server process the test talks to as a host would.
type pipeServer struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startPipe(t testing.TB, argv []string, env ...string) *pipeServer {
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
func roundTrips(t testing.TB, p *pipeServer, n int) []time.Duration {
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
func flood(t testing.TB, p *pipeServer, n int) time.Duration {
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

// cpuTime is the user and system CPU time a live process has used so far,
// in clock ticks of 10 ms.
func cpuTime(pid int) (user, sys time.Duration) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1, -1
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return -1, -1
	}
	u, _ := strconv.Atoi(f[11])
	s, _ := strconv.Atoi(f[12])
	return time.Duration(u) * 10 * time.Millisecond, time.Duration(s) * 10 * time.Millisecond
}

// peakRSS is a live process's peak resident set in kB (VmHWM), -1 if
// unknown.
func peakRSS(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				return -1
			}
			return kb
		}
	}
	return -1
}

// BenchmarkOverhead prints what the proxy costs, as ratios against the same
// servers run direct in the same run (the figures are the real binary's,
// built without -race):
//
//   - latency: one request+response at a time through cat; added-p50-µs and
//     added-p99-µs are the proxy's p50/p99 less the direct ones.
//   - flood: a server writing 1M notifications (MCPSCOPE_PROXY_FLOOD sets
//     how many) as fast as it can; ratio is direct time / proxy time (1 =
//     as fast as direct), peak-RSS-MB the proxy's VmHWM and cpu-ns/line the
//     CPU time the proxy used (from its start, 10 ms ticks) per line.
//
// Each iteration measures direct and proxied afresh; the metrics are the
// medians over the iterations (-benchtime=3x for three). Figures, never
// assertions:
//
//	go test -run '^$' -bench Overhead -benchtime 3x ./proxy
func BenchmarkOverhead(b *testing.B) {
	bin := mcpscopeBinary(b)
	dir := shortTemp(b)
	env := []string{"XDG_STATE_HOME=" + dir, "XDG_RUNTIME_DIR=" + dir}

	b.Run("latency", func(b *testing.B) {
		const trips = 3000
		var p50, p99 []float64
		for range b.N {
			direct := roundTrips(b, startPipe(b, []string{"cat"}), trips)
			proxied := roundTrips(b, startPipe(b, []string{bin, "proxy", "--name", "bench", "--", "cat"}, env...), trips)
			b.Logf("latency per request+response through cat, %d round trips: direct p50 %v p99 %v; proxy p50 %v p99 %v; added p50 %v p99 %v",
				trips, pct(direct, .5), pct(direct, .99), pct(proxied, .5), pct(proxied, .99),
				pct(proxied, .5)-pct(direct, .5), pct(proxied, .99)-pct(direct, .99))
			p50 = append(p50, micros(pct(proxied, .5)-pct(direct, .5)))
			p99 = append(p99, micros(pct(proxied, .99)-pct(direct, .99)))
		}
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(median(p50), "added-p50-µs")
		b.ReportMetric(median(p99), "added-p99-µs")
	})

	n := 1_000_000
	if s := os.Getenv("MCPSCOPE_PROXY_FLOOD"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	server := floodServer(n)
	for _, journal := range []bool{true, false} {
		name := "flood-journal"
		args := []string{bin, "proxy", "--name", "flood"}
		if !journal {
			name = "flood-nojournal"
			args = append(args, "--no-journal")
		}
		b.Run(name, func(b *testing.B) {
			var ratio, rate, rss, cpu []float64
			for range b.N {
				dt := flood(b, startPipe(b, server), n)
				p := startPipe(b, append(append(args, "--"), server...), env...)
				pt := flood(b, p, n)
				kb := peakRSS(p.cmd.Process.Pid)
				user, sys := cpuTime(p.cmd.Process.Pid)
				used := user + sys
				// End it and drop its journal, so that the next run does not
				// wait on the writeback of this one's hundreds of MB.
				p.in.Close()
				p.cmd.Wait()
				os.RemoveAll(filepath.Join(dir, "mcpscope", "journal"))
				b.Logf("flood of %d notifications (%d bytes each): direct %v (%.0f/s); proxy with journal=%v %v (%.0f/s): %.2f of direct; proxy peak RSS %d kB, CPU %v user + %v system",
					n, len(floodNote)+1, dt.Round(time.Millisecond), float64(n)/dt.Seconds(), journal, pt.Round(time.Millisecond), float64(n)/pt.Seconds(),
					dt.Seconds()/pt.Seconds(), kb, user, sys)
				ratio = append(ratio, dt.Seconds()/pt.Seconds())
				rate = append(rate, float64(n)/pt.Seconds())
				rss = append(rss, float64(kb)/1024)
				cpu = append(cpu, float64(used)/float64(n))
			}
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(median(ratio), "ratio")
			b.ReportMetric(median(rate), "proxy-lines/s")
			b.ReportMetric(median(rss), "peak-RSS-MB")
			b.ReportMetric(median(cpu), "cpu-ns/line")
		})
	}
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

const floodNote = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"flood","data":"a log line of some length, as servers send them"}}`

// floodServer is a server that waits for one line, then writes n
// notifications as fast as it can.
func floodServer(n int) []string {
	return []string{"sh", "-c", "read l; yes '" + floodNote + "' | head -n " + strconv.Itoa(n)}
}

// countLines reads r to its end line by line, as the host in BenchmarkOverhead
// does, and returns the lines it held.
func countLines(r io.Reader) int {
	br := bufio.NewReaderSize(r, 1<<20)
	n := 0
	for {
		_, err := br.ReadSlice('\n')
		if err != nil {
			return n
		}
		n++
	}
}

// BenchmarkStdioFloodInProcess runs RunStdio in this process (so -cpuprofile
// and -memprofile see the proxy) over a flood of b.N notifications.
func BenchmarkStdioFloodInProcess(b *testing.B) {
	for _, journal := range []bool{true, false} {
		name := "journal"
		if !journal {
			name = "nojournal"
		}
		b.Run(name, func(b *testing.B) {
			dir, err := os.MkdirTemp("", "mpb")
			if err != nil {
				b.Fatal(err)
			}
			defer os.RemoveAll(dir)
			inR, inW, _ := os.Pipe()
			outR, outW, _ := os.Pipe()
			argv := floodServer(b.N)
			c := StdioConfig{Name: "bench", Command: argv[0], Args: argv[1:], SocketDir: dir,
				In: inR, Out: outW, Err: io.Discard}
			if journal {
				c.Journal = filepath.Join(dir, "j.jsonl")
			}
			counted := make(chan int, 1)
			go func() { counted <- countLines(outR) }()
			done := make(chan struct{})
			ready := make(chan struct{})
			c.Ready = func(Hello) { close(ready) }
			go func() {
				defer close(done)
				RunStdio(context.Background(), c)
				outW.Close()
			}()
			<-ready
			b.SetBytes(int64(len(floodNote) + 1))
			b.ResetTimer()
			inW.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"go\"}\n")) // a call in flight: every line is routed
			got := <-counted
			b.StopTimer()
			inW.Close()
			<-done
			inR.Close()
			outR.Close()
			if got != b.N {
				b.Fatalf("host got %d lines, want %d", got, b.N)
			}
		})
	}
}
