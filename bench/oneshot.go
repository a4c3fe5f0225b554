package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"mcpscope/internal/loopback"
)

// OneShotOptions say which clients and servers the one-shot comparison
// runs. Without Node and Peers it compares mcpscope with curl and the
// minimal client against mcpscope's own demo server, and leaves the
// Inspector out.
type OneShotOptions struct {
	Self  string // the mcpscope binary
	Node  string // a Node 22 binary (NODE22)
	Peers string // node_modules with server-everything and the Inspector (MCPSCOPE_PEERS)
	Runs  int
}

// Client is one way of doing the one-shot tools/list, with its figures.
type Client struct {
	Transport string // "http" or "stdio"
	Name      string
	Median    time.Duration
	PeakRSS   int64 // KiB, the highest of the runs
	Err       error
}

// OneShot times a one-shot tools/list, whole processes, for mcpscope, the
// official Inspector CLI, raw curl (HTTP: initialize, initialized,
// tools/list, three processes) and a minimal spawn-exchange-exit client
// (stdio), against the same server, runs interleaved.
func OneShot(o OneShotOptions) ([]Client, string, error) {
	dir, err := os.MkdirTemp("", "mcpscope-bench-oneshot-")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(dir)
	env := []string{"XDG_STATE_HOME=" + dir}
	everything := filepath.Join(o.Peers, "@modelcontextprotocol/server-everything/dist/index.js")
	inspector := filepath.Join(o.Peers, "@modelcontextprotocol/inspector/clients/launcher/build/index.js")
	peers := o.Node != "" && o.Peers != "" && exists(everything) && exists(inspector)
	server := "mcpscope's demo server"
	stdioServer := []string{o.Self, "demo"}
	if peers {
		server = "@modelcontextprotocol/server-everything"
		stdioServer = []string{o.Node, everything, "stdio"}
	}
	url, stop, err := httpServer(o, peers, everything)
	if err != nil {
		return nil, server, err
	}
	defer stop()

	type way struct {
		c   *Client
		run func() (Proc, error)
	}
	var ways []way
	add := func(tr, name string, run func() (Proc, error)) {
		ways = append(ways, way{&Client{Transport: tr, Name: name}, run})
	}
	one := func(argv ...string) func() (Proc, error) {
		return func() (Proc, error) { return runProc(argv, env, false) }
	}
	add("http", "mcpscope tools", one(o.Self, "tools", url))
	if curl, err := exec.LookPath("curl"); err == nil {
		add("http", "curl ×3 (initialize, initialized, tools/list)", func() (Proc, error) { return curlExchange(curl, url) })
	}
	add("http", "minimal Go client (one process, keep-alive)", one(o.Self, "bench", "exchange", url))
	if peers {
		add("http", "inspector 2.12.0 --cli", one(o.Node, inspector, "--cli", url, "--transport", "http", "--method", "tools/list"))
	}
	add("stdio", "mcpscope tools", one(append([]string{o.Self, "tools", "--"}, stdioServer...)...))
	add("stdio", "minimal client (spawn, exchange, exit)", one(append([]string{o.Self, "bench", "exchange", "--"}, stdioServer...)...))
	if peers {
		add("stdio", "inspector 2.12.0 --cli", one(append(append([]string{o.Node, inspector, "--cli"}, stdioServer...), "--method", "tools/list")...))
		// A server that exits as soon as its stdin closes, so the
		// shutdown grace does not hide the clients' own cost.
		add("stdio-go", "mcpscope tools", one(o.Self, "tools", "--", o.Self, "demo"))
		add("stdio-go", "minimal client (spawn, exchange, exit)", one(o.Self, "bench", "exchange", "--", o.Self, "demo"))
	}
	// One run each first: mcpscope remembers the era per server (as a
	// second run would), and caches are warm for everyone.
	for _, w := range ways {
		if _, err := w.run(); err != nil {
			w.c.Err = err
		}
	}
	walls := make([][]time.Duration, len(ways))
	for r := 0; r < max(1, o.Runs); r++ {
		for i, w := range ways {
			if w.c.Err != nil {
				continue
			}
			p, err := w.run()
			if err != nil {
				w.c.Err = err
				continue
			}
			walls[i] = append(walls[i], p.Wall)
			w.c.PeakRSS = max(w.c.PeakRSS, p.PeakRSSKiB)
		}
	}
	out := make([]Client, len(ways))
	for i, w := range ways {
		if len(walls[i]) > 0 {
			slices.Sort(walls[i])
			w.c.Median = walls[i][len(walls[i])/2]
		}
		out[i] = *w.c
	}
	return out, server, nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// httpServer starts the HTTP server of the comparison on a free port.
func httpServer(o OneShotOptions, peers bool, everything string) (url string, stop func(), err error) {
	addr, err := loopback.FreeAddr()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(o.Self, "demo", "--http", addr)
	if peers {
		_, port, _ := net.SplitHostPort(addr)
		cmd = exec.Command(o.Node, everything, "streamableHttp")
		cmd.Env = append(os.Environ(), "PORT="+port)
	}
	l, err := listening(cmd, addr, 20*time.Second)
	if err != nil {
		return "", nil, fmt.Errorf("the HTTP server: %w", err)
	}
	return "http://" + addr + "/mcp", func() { l.stop() }, nil
}

// curlExchange is the raw HTTP exchange with three curl processes, the
// session id carried from the first to the others.
func curlExchange(curl, url string) (Proc, error) {
	hdr := []string{"-s", "-H", "Content-Type: application/json", "-H", "Accept: application/json, text/event-stream"}
	init := append(append([]string{curl}, hdr...), "-o", "/dev/null", "-w", "%header{mcp-session-id}",
		"-d", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`, url)
	var total Proc
	p, err := runProc(init, nil, true)
	if err != nil {
		return p, err
	}
	total.Wall, total.PeakRSSKiB = p.Wall, p.PeakRSSKiB
	sid := string(bytes.TrimSpace(p.Stdout))
	more := append(hdr, "-H", "MCP-Protocol-Version: 2025-06-18")
	if sid != "" {
		more = append(more, "-H", "Mcp-Session-Id: "+sid)
	}
	for _, body := range []string{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`} {
		p, err := runProc(append(append([]string{curl}, more...), "-d", body, url), nil, true)
		if err != nil {
			return total, err
		}
		total.Wall += p.Wall
		total.PeakRSSKiB = max(total.PeakRSSKiB, p.PeakRSSKiB)
		total.Stdout = p.Stdout
	}
	if !bytes.Contains(total.Stdout, []byte(`"tools"`)) {
		return total, fmt.Errorf("curl's tools/list got no tools: %s", tail(string(total.Stdout), 300))
	}
	return total, nil
}

// Exchange is the minimal stdio client: spawn the server, initialize,
// initialized, tools/list, print the answer, close its stdin and wait for
// it to exit. It is the floor for a one-shot stdio client.
func Exchange(argv []string, out io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	r := bufio.NewReaderSize(stdout, 1<<16)
	until := func(id string) ([]byte, error) {
		for {
			line, err := r.ReadBytes('\n')
			if bytes.Contains(line, []byte(`"id":`+id)) {
				return line, nil
			}
			if err != nil {
				return nil, fmt.Errorf("the server said no answer to request %s: %w", id, err)
			}
		}
	}
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"minimal","version":"1"}}}`+"\n")
	if _, err := until("1"); err != nil {
		return err
	}
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
	line, err := until("2")
	if err != nil {
		return err
	}
	out.Write(line)
	// The spec's shutdown, with the grace mcpscope's one-shot commands
	// give: close stdin, wait, SIGTERM, wait, SIGKILL.
	in.Close()
	go io.Copy(io.Discard, r)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for _, sig := range []os.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		select {
		case <-exited:
			return nil
		case <-time.After(exchangeGrace):
			cmd.Process.Signal(sig)
		}
	}
	<-exited
	return nil
}

// ExchangeHTTP is the minimal Streamable HTTP client, one process on one
// keep-alive connection: initialize, initialized, tools/list, print the
// answer, DELETE the session (what mcpscope's one-shot commands send to a
// 2025 server once its era is known). It is the floor for a one-shot HTTP
// client.
func ExchangeHTTP(url string, out io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var sid string
	post := func(body string) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return nil, fmt.Errorf("POST %s: %s", url, resp.Status)
		}
		if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
			sid = s
		}
		// One answer, as JSON or as the data line of an SSE event.
		r := bufio.NewReader(resp.Body)
		for {
			line, err := r.ReadBytes('\n')
			if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok && bytes.Contains(d, []byte(`"id":`)) {
				return d, nil
			}
			if bytes.HasPrefix(line, []byte("{")) || err != nil {
				return line, nil
			}
		}
	}
	if _, err := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"minimal","version":"1"}}}`); err != nil {
		return err
	}
	if _, err := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return err
	}
	list, err := post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if err != nil {
		return err
	}
	if !bytes.Contains(list, []byte(`"tools"`)) {
		return fmt.Errorf("tools/list got no tools: %s", tail(string(list), 300))
	}
	out.Write(list)
	if sid != "" {
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, url, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	return nil
}

// exchangeGrace is how long the minimal client waits for the server to
// exit before each signal: what mcpscope's one-shot commands wait.
const exchangeGrace = 250 * time.Millisecond
