package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"mcpscope/internal/httpserve"
	"mcpscope/internal/loopback"
	"mcpscope/journal"
	"mcpscope/proxy"
	"mcpscope/transport"
)

// Drain is the floor client of the record row: it spawns a stdio server,
// initializes, and reads every line the server writes until it ends,
// decoding each message with the decoder mcpscope uses (a client must
// know what each message is) and printing it to out, buffered, as the
// JSONL line record prints (journal.AppendRecord: number, time, direction,
// the exact bytes escaped). That is the least a client printing what
// record prints does; record also keeps the journal, the store and the
// calls. It returns how many lines came after the handshake.
func Drain(argv []string, out io.Writer) (int, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer cmd.Wait()
	defer in.Close()
	r := bufio.NewReaderSize(stdout, 1<<16)
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"minimal","version":"1"}}}`+"\n")
	for {
		line, err := r.ReadSlice('\n')
		if bytes.Contains(line, []byte(`"id":1,`)) {
			break
		}
		if err != nil && err != bufio.ErrBufferFull {
			return 0, fmt.Errorf("no answer to initialize: %w", err)
		}
	}
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	w := bufio.NewWriterSize(out, 64<<10)
	defer w.Flush()
	n := 0
	var rec []byte
	for {
		line, err := r.ReadSlice('\n')
		switch err {
		case nil:
			if env, batch := journal.Decode(line); env == nil && batch == nil {
				return n, fmt.Errorf("line %d is not a JSON-RPC message", n+1)
			}
			n++
			f := transport.Frame{Time: time.Now(), Dir: transport.In, Kind: transport.Message, Data: line[:len(line)-1]}
			rec = journal.AppendRecord(rec[:0], uint64(n), f)
			w.Write(rec)
		case bufio.ErrBufferFull:
			return n, errors.New("a line over 64 KiB: the flood server writes none")
		case io.EOF:
			return n, nil
		default:
			return n, err
		}
	}
}

// wall runs argv to its end (exit code answer, when not 0, is not a
// failure) and returns its wall time and its CPU time (user + system, its
// children's included).
func wall(argv, env []string, answer int) (time.Duration, time.Duration, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	var c time.Duration
	if cmd.ProcessState != nil {
		c = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil && (answer == 0 || exitCode(err) != answer) {
		return d, c, &procError{argv: argv, err: err, stderr: tail(errb.String(), 2000)}
	}
	return d, c, nil
}

// RecordFloor is the record row: `mcpscope record` of a flood of n
// notifications (journal written, every frame printed to stdout, here
// /dev/null) against the floor client (Drain) reading, decoding and
// printing the same lines record prints from the same server's flood,
// wall time, paired rounds. The CPU times (the flood server's included,
// the same in both) are printed beside.
func RecordFloor(self string, n, rounds int) Row {
	row := Row{Name: fmt.Sprintf("record of a %d-notification flood", n), Goal: "≥ 80 % of the minimal client's speed"}
	dir, err := os.MkdirTemp("", "mcpscope-bench-record-")
	if err != nil {
		row.Err = err
		return row
	}
	defer os.RemoveAll(dir)
	env := []string{"XDG_STATE_HOME=" + dir, "XDG_CONFIG_HOME=" + dir}
	serve := []string{self, "bench", "serve", "--burst", strconv.Itoa(n), "--exit"}
	rec := append([]string{self, "record", "--era", "legacy", "--journal", filepath.Join(dir, "r.jsonl"), "--"}, serve...)
	floor := append([]string{self, "bench", "drain", "--"}, serve...)
	var rs, fs, rc, fc []time.Duration
	for r := 0; r < max(1, rounds); r++ {
		// record exits 3 when the server ends (the transport closed).
		d, c, err := wall(rec, env, 3)
		if err != nil {
			row.Err = err
			return row
		}
		rs, rc = append(rs, d), append(rc, c)
		os.Remove(filepath.Join(dir, "r.jsonl"))
		if d, c, err = wall(floor, env, 0); err != nil {
			row.Err = err
			return row
		}
		fs, fc = append(fs, d), append(fc, c)
	}
	lo, hi := spread(fs, rs, func(f, r time.Duration) float64 { return 100 * f.Seconds() / r.Seconds() })
	rd, fd := median(rs), median(fs)
	x := fd.Seconds() / rd.Seconds()
	row.Figure = fmt.Sprintf("%6.2f s, minimal client %6.2f s: %5.1f %% of its speed (pairs %.0f–%.0f %%; CPU %.2f s, minimal %.2f s)",
		rd.Seconds(), fd.Seconds(), 100*x, lo, hi, median(rc).Seconds(), median(fc).Seconds())
	row.Met = x >= 0.8
	return row
}

// PingServer answers every request on addr with the smallest Streamable
// HTTP answer to a ping, until ctx ends (httpserve's lifecycle, as the
// demo's): the proxy rows' upstream. It runs as a process of its own
// (bench pong), as a server does: a client and server in one Go process
// hand each exchange over without either side's thread sleeping, which no
// host and server ever do (here that made a direct exchange a third of its
// time between two processes).
func PingServer(ctx context.Context, addr string) error {
	body := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})
	return httpserve.Serve(ctx, addr, "/mcp", h, nil, nil)
}

// pings sends n pings one after the other and returns the time they took.
func pings(c *http.Client, url string, n int) (time.Duration, error) {
	req := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	start := time.Now()
	for i := 0; i < n; i++ {
		rq, _ := http.NewRequest("POST", url, bytes.NewReader(req))
		rq.Header.Set("Content-Type", "application/json")
		rq.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := c.Do(rq)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return 0, fmt.Errorf("ping %d: HTTP %d", i, resp.StatusCode)
		}
	}
	return time.Since(start), nil
}

// ProxyOverhead is the proxy rows: n sequential pings over HTTP straight
// to a server (PingServer, in a process of its own), through `mcpscope
// proxy --listen` (journaling) and through the bare TCP relay (bench
// relay: the extra hop alone), paired rounds, the time each request
// adds; and the proxy's throughput, a flood of
// flood notifications through `mcpscope proxy -- server` (stdio,
// journaling) against the same flood direct, both read by the minimal
// client (Drain). Sequential pings are latency, not throughput: their
// ratio (printed in the first row) is 1/(1 + added/direct) whatever the
// proxy does once the direct exchange takes 20 µs.
func ProxyOverhead(self string, n, flood, rounds int) []Row {
	over := Row{Name: fmt.Sprintf("proxy, %d sequential pings (HTTP)", n), Goal: "≤ +30 µs a request over a bare relay"}
	// The floor any Go proxy that speaks HTTP stands on: net/http's
	// second exchange, measured in the same rounds. The goal over the bare
	// relay asks for less than that floor on a 2-core VM (nginx's HTTP
	// proxy adds a few µs to its stream mode; net/http adds tens), so this
	// row holds the proxy's own work, journal and all, to its floor.
	floor := Row{Name: "proxy's own share, the same pings", Goal: "≤ +15 µs a request over the Go HTTP relay"}
	cpu := Row{Name: "proxy CPU a request (HTTP)", Goal: "≤ 100 µs"}
	// The CPU goal's floor, as the flood's: a Go HTTP relay that also
	// writes each request and answer as the journal's records. The 100 µs
	// asks for less than the relay without a journal spends here.
	jcpuReq := Row{Name: "proxy CPU a request over an HTTP relay journaling it", Goal: "≤ 1.2× a Go HTTP relay writing the journal's records"}
	thru, fcpu, jcpu := ProxyFlood(self, flood, rounds)
	fail := func(err error) []Row {
		over.Err, floor.Err, cpu.Err, jcpuReq.Err = err, err, err, err
		return []Row{over, floor, cpu, jcpuReq, thru, fcpu, jcpu}
	}
	dir, err := runtimeDir("proxy")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	// start runs argv --listen ADDR [upstream] on an address of its own:
	// the server, or one of the three in between.
	start := func(upstream string, argv ...string) (*listener, error) {
		addr, err := loopback.FreeAddr()
		if err != nil {
			return nil, err
		}
		argv = append(argv, "--listen", addr)
		if upstream != "" {
			argv = append(argv, upstream)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+dir, "XDG_CONFIG_HOME="+dir, "XDG_RUNTIME_DIR="+dir)
		return listening(cmd, addr, 30*time.Second)
	}
	server, err := start("", self, "bench", "pong")
	if err != nil {
		return fail(err)
	}
	defer server.stop()
	url := "http://" + server.addr + "/mcp"
	// The four in between: the proxy (journaling), the bare TCP relay
	// (the hop alone), the Go HTTP relay (the hop and a second HTTP
	// exchange, nothing else) and that relay writing the journal's records.
	var mids [4]*listener
	for i, argv := range [][]string{
		{self, "proxy", "--name", "bench", "--journal", filepath.Join(dir, "p.jsonl")},
		{self, "bench", "relay"},
		{self, "bench", "relay", "--http"},
		{self, "bench", "relay", "--http", "--journal", filepath.Join(dir, "r.jsonl")},
	} {
		up := url // the proxy takes the server's URL
		switch i {
		case 1:
			up = server.addr // the TCP relay, its address
		case 2, 3:
			up = "http://" + server.addr // the HTTP relays, its origin
		}
		if mids[i], err = start(up, argv...); err != nil {
			return fail(err)
		}
		defer mids[i].stop()
	}
	urls := [5]string{url}
	for i, m := range mids {
		urls[i+1] = "http://" + m.addr + "/mcp"
	}
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: 30 * time.Second}
	for _, u := range urls { // warm-up: connections, caches
		if _, err := pings(c, u, 100); err != nil {
			return fail(err)
		}
	}
	// Rounds interleave the five paths, each starting in turn, so that a
	// burst of load lands on each alike; the CPU of the proxy and of the
	// HTTP relays is read around their own pings only (not their start,
	// the session's set-up or the warm-up): what a request costs them
	// whatever the load, which stretches the wall times.
	var ts [5][]time.Duration
	var used [5]time.Duration                                   // of the paths whose CPU is read
	watched := [5]*listener{1: mids[0], 3: mids[2], 4: mids[3]} // the proxy, the HTTP relays
	cpuOK := true
	for r := 0; r < max(1, rounds); r++ {
		for k := range 5 {
			i := (r + k) % 5
			var c0 time.Duration
			if w := watched[i]; w != nil {
				var ok bool
				c0, ok = procCPU(w.cmd.Process.Pid)
				cpuOK = cpuOK && ok
			}
			d, err := pings(c, urls[i], n)
			if err != nil {
				return fail(err)
			}
			if w := watched[i]; w != nil {
				c1, ok := procCPU(w.cmd.Process.Pid)
				cpuOK = cpuOK && ok
				used[i] += c1 - c0
			}
			ts[i] = append(ts[i], d)
		}
	}
	requests := float64(n * max(1, rounds))
	per := func(t time.Duration) float64 { return float64(t.Microseconds()) / float64(n) }
	ds, ps, rs, hs := ts[0], ts[1], ts[2], ts[3]
	d, p, rl, h := median(ds), median(ps), median(rs), median(hs)
	share := per(p) - per(rl)
	lo, hi := spread(ps, rs, func(p, r time.Duration) float64 { return per(p) - per(r) })
	rlo, rhi := spread(rs, ds, func(r, d time.Duration) float64 { return per(r) - per(d) })
	over.Figure = fmt.Sprintf("%+6.1f µs over the bare TCP relay (pairs %+.0f to %+.0f); direct %.1f µs, the proxy %+.1f µs, "+
		"a bare TCP relay %+.1f µs (pairs %+.0f to %+.0f), a Go HTTP relay without a journal %+.1f µs; %4.2f× the rate",
		share, lo, hi, per(d), per(p)-per(d), per(rl)-per(d), rlo, rhi, per(h)-per(d), d.Seconds()/p.Seconds())
	over.Met = share <= 30
	own := per(p) - per(h)
	flo, fhi := spread(ps, hs, func(p, h time.Duration) float64 { return per(p) - per(h) })
	floor.Figure = fmt.Sprintf("%+6.1f µs (pairs %+.0f to %+.0f): the journal, the scan for ids and the viewers' hub, beyond net/http's own exchange",
		own, flo, fhi)
	floor.Met = own <= 15
	if !cpuOK {
		cpu.Skip, jcpuReq.Skip = "needs /proc (Linux)", "needs /proc (Linux)"
	} else {
		pc, hc, jc := float64(used[1].Microseconds())/requests, float64(used[3].Microseconds())/requests, float64(used[4].Microseconds())/requests
		cpu.Figure = fmt.Sprintf("%6.0f µs, a Go HTTP relay without a journal %.0f µs: %4.2f× (10 ms clock ticks over %d requests)",
			pc, hc, pc/max(hc, 1), int(requests))
		cpu.Met = pc <= 100
		jcpuReq.Figure = fmt.Sprintf("%6.0f µs, the relay journaling %.0f µs: %4.2f× (its journal written only when 128 KiB fill, the proxy's within %s)",
			pc, jc, pc/max(jc, 1), proxy.JournalLag)
		jcpuReq.Met = pc <= 1.2*jc
	}
	return []Row{over, floor, cpu, jcpuReq, thru, fcpu, jcpu}
}

// listener is a child process listening on a loopback port of its own.
type listener struct {
	cmd     *exec.Cmd
	addr    string
	errb    *bytes.Buffer
	exited  chan struct{} // closed once cmd has been waited for
	stopped bool
	cpu     time.Duration
}

// runtimeDir is a private directory for a proxy the bench starts, to be its
// XDG_RUNTIME_DIR: short enough that the proxy's socket goes in it. A
// longer one sends the socket to the per-user fallback under the temp dir,
// where `mcpscope proxies` and tests listing proxies would see the bench's.
func runtimeDir(kind string) (string, error) {
	return os.MkdirTemp("", "msb-"+kind+"-")
}

// listening starts cmd, told to listen on addr, and returns once it
// listens there, within wait; else (it exited, or the wait is over) it
// stops cmd and returns the end of what cmd wrote to stderr (kept for
// that).
func listening(cmd *exec.Cmd, addr string, wait time.Duration) (*listener, error) {
	l := &listener{cmd: cmd, addr: addr, errb: &bytes.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = l.errb
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { cmd.Wait(); close(l.exited) }()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := loopback.Wait(ctx, addr, cmd.Process.Pid, l.exited); err != nil {
		l.stop()
		why := fmt.Sprintf("did not listen on %s within %s", addr, wait)
		if errors.Is(err, loopback.ErrExited) {
			why = fmt.Sprintf("exited (%v) before it listened on %s", cmd.ProcessState, addr)
		}
		return nil, fmt.Errorf("%s %s: %s", strings.Join(cmd.Args[:min(2, len(cmd.Args))], " "), why, tail(l.errb.String(), 500))
	}
	return l, nil
}

// stop ends the child (SIGTERM, then SIGKILL after 10 s) and returns the
// CPU it used; again, it returns that figure once more.
func (l *listener) stop() time.Duration {
	if l.stopped {
		return l.cpu
	}
	l.stopped = true
	l.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-l.exited:
	case <-time.After(10 * time.Second):
		l.cmd.Process.Kill()
		<-l.exited
	}
	l.cpu = l.cmd.ProcessState.UserTime() + l.cmd.ProcessState.SystemTime()
	return l.cpu
}

// procCPU is the user and system CPU process pid has used so far, from
// /proc/PID/stat (clock ticks of 10 ms); false where /proc is not there.
func procCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces: count after its ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, true
}

// ProxyFlood is the proxy's throughput rows: the minimal client (bench
// drain) reading a flood of n notifications from the flood server direct,
// through `mcpscope proxy` over stdio (journaling every line), through a
// stdio relay that also writes the bytes it passes to a file (bench relay
// --tee) and through one that writes them as the journal's records (bench
// relay --journal: numbered, timed and escaped by journal.AppendRecord, the
// least a proxy journaling in this format does), wall time and CPU, paired
// rounds. The CPU of what sits in between is the run's (drain's, its
// children's included) less what drain and the server say they used
// themselves (SelfCPUEnv): that process's own, whatever the other two's
// varied by.
func ProxyFlood(self string, n, rounds int) (thru, cpu, jcpu Row) {
	thru = Row{Name: fmt.Sprintf("proxy throughput, %d-notification flood (stdio)", n), Goal: "≥ 0.9× direct"}
	cpu = Row{Name: "proxy CPU, the same flood", Goal: "≤ 1.2× a relay writing the bytes to a file"}
	jcpu = Row{Name: "proxy CPU over a relay journaling it", Goal: "≤ 1.2× a relay writing the journal's records"}
	fail := func(err error) (Row, Row, Row) {
		thru.Err, cpu.Err, jcpu.Err = err, err, err
		return thru, cpu, jcpu
	}
	dir, err := runtimeDir("flood")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	cpuDir := filepath.Join(dir, "cpu")
	if err := os.Mkdir(cpuDir, 0o700); err != nil {
		return fail(err)
	}
	env := []string{"XDG_STATE_HOME=" + dir, "XDG_CONFIG_HOME=" + dir, "XDG_RUNTIME_DIR=" + dir, SelfCPUEnv + "=" + cpuDir}
	serve := []string{self, "bench", "serve", "--burst", strconv.Itoa(n), "--exit"}
	drain := []string{self, "bench", "drain", "--"}
	journal, tee, records := filepath.Join(dir, "p.jsonl"), filepath.Join(dir, "tee.out"), filepath.Join(dir, "relay.jsonl")
	direct := append(slices.Clone(drain), serve...)
	proxied := append(append(slices.Clone(drain), self, "proxy", "--name", "bench", "--journal", journal, "--"), serve...)
	relayed := append(append(slices.Clone(drain), self, "bench", "relay", "--tee", tee, "--"), serve...)
	journaled := append(append(slices.Clone(drain), self, "bench", "relay", "--journal", records, "--"), serve...)
	// cs: the CPU of what sits between the client and the server alone,
	// the run's less what both say they used (SelfCPUEnv).
	var ts, cs [4][]time.Duration
	cpuOK := true
	for r := 0; r < max(1, rounds); r++ {
		for i, argv := range [][]string{direct, proxied, relayed, journaled} {
			d, c, err := wall(argv, env, 0)
			if err != nil {
				return fail(err)
			}
			dc, ok1 := reportedCPU(cpuDir, "drain")
			sc, ok2 := reportedCPU(cpuDir, "serve")
			cpuOK = cpuOK && ok1 && ok2
			ts[i], cs[i] = append(ts[i], d), append(cs[i], c-dc-sc)
		}
		os.Remove(journal)
		os.Remove(tee)
		os.Remove(records)
	}
	ds, ps, rs, js := ts[0], ts[1], ts[2], ts[3]
	lo, hi := spread(ds, ps, func(d, p time.Duration) float64 { return d.Seconds() / p.Seconds() })
	d, p, rl, jl := median(ds), median(ps), median(rs), median(js)
	x := d.Seconds() / p.Seconds()
	thru.Figure = fmt.Sprintf("%6.2f s, direct %6.2f s: %5.2f× (pairs %.2f–%.2f×; %.0f and %.0f notifications/s; the relay writing a file %.2f×, the relay journaling %.2f×)", p.Seconds(), d.Seconds(), x,
		lo, hi, float64(n)/p.Seconds(), float64(n)/d.Seconds(), d.Seconds()/rl.Seconds(), d.Seconds()/jl.Seconds())
	thru.Met = x >= 0.9
	if !cpuOK {
		cpu.Skip, jcpu.Skip = "needs getrusage (Unix)", "needs getrusage (Unix)"
		return thru, cpu, jcpu
	}
	pc, rc, jc := cs[1], cs[2], cs[3]
	share := func(row *Row, base []time.Duration, what string) {
		lo, hi := spread(pc, base, func(p, r time.Duration) float64 { return p.Seconds() / max(r.Seconds(), 0.001) })
		pm, bm := median(pc), median(base)
		x := pm.Seconds() / max(bm.Seconds(), 0.001)
		row.Figure = fmt.Sprintf("%5.2f s, %s %5.2f s: %4.2f× (pairs %.2f–%.2f×; %.0f and %.0f ns a notification)",
			pm.Seconds(), what, bm.Seconds(), x, lo, hi, float64(pm.Nanoseconds())/float64(n), float64(bm.Nanoseconds())/float64(n))
		row.Met = x <= 1.2
	}
	share(&cpu, rc, "the relay writing a file")
	share(&jcpu, jc, "the relay journaling")
	return thru, cpu, jcpu
}
