package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"mcpscope/testkit/peers"
)

// run runs a client command and returns its stdout; a failure is fatal.
func runClient(t *testing.T, env []string, argv ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\nstdout %.2000s\nstderr %.2000s", strings.Join(argv[:min(4, len(argv))], " "), err, out, stderr.String())
	}
	return out
}

// proxyEnv keeps a test's proxies' journals and sockets to itself.
func proxyEnv(t *testing.T) []string {
	d := shortTemp(t)
	return []string{"XDG_STATE_HOME=" + d, "XDG_RUNTIME_DIR=" + d}
}

// sameBytes fails when a run through the proxy printed other bytes than the
// direct run.
func sameBytes(t *testing.T, what string, direct, proxied []byte) {
	t.Helper()
	if !bytes.Equal(direct, proxied) {
		i := firstDiff(direct, proxied)
		t.Fatalf("%s: through the proxy the client got other results (at byte %d of %d):\ndirect:  %.300s\nproxied: %.300s",
			what, i, len(direct), direct[max(0, i-100):], proxied[max(0, i-100):])
	}
	t.Logf("%s: %d bytes of results, identical", what, len(direct))
}

// The TypeScript SDK v1 and v2 clients, each against server-everything and
// the TS SDK v2 server, over stdio (through the mcpscope binary) and
// Streamable HTTP (through RunHTTP), get the same results as direct.
func TestTSClientsTransparent(t *testing.T) {
	if testing.Short() {
		t.Skip("peers: skipped in -short mode")
	}
	node := peers.Node(t)
	script := peers.Script(t, "proxy-client.mjs")
	bin := mcpscopeBinary(t)
	env := proxyEnv(t)
	everything, everythingArgs := peers.EverythingStdio(t)
	tsv2, tsv2Args := peers.TSv2Stdio(t)
	stdio := map[string][]string{
		"server-everything": append([]string{everything}, everythingArgs...),
		"ts-v2-server":      append([]string{tsv2}, tsv2Args...),
	}
	httpURLs := map[string]string{
		"server-everything": peers.StartEverythingHTTP(t, "streamableHttp"),
		"ts-v2-server":      peers.StartTSv2(t),
	}
	for _, sdk := range []string{"v1", "v2"} {
		for name, server := range stdio {
			direct := runClient(t, env, append([]string{node, script, sdk, "stdio"}, server...)...)
			proxied := runClient(t, env, append([]string{node, script, sdk, "stdio", bin, "proxy", "--name", name, "--"}, server...)...)
			sameBytes(t, "TS SDK "+sdk+" client, stdio, "+name, direct, proxied)
		}
		for name, url := range httpURLs {
			h, _ := startHTTPProxy(t, url)
			direct := runClient(t, env, node, script, sdk, "http", url)
			proxied := runClient(t, env, node, script, sdk, "http", h.Listen)
			sameBytes(t, "TS SDK "+sdk+" client, HTTP, "+name, direct, proxied)
		}
	}
}

// The official Inspector CLI gets the same answers through the proxy.
func TestInspectorCLITransparent(t *testing.T) {
	if testing.Short() {
		t.Skip("peers: skipped in -short mode")
	}
	node, launcher := peers.Inspector(t)
	bin := mcpscopeBinary(t)
	env := proxyEnv(t)
	everything, everythingArgs := peers.EverythingStdio(t)
	tsv2, tsv2Args := peers.TSv2Stdio(t)
	dir := t.TempDir()
	config := func(name string, argv []string) string {
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{name: map[string]any{"command": argv[0], "args": argv[1:]}}})
		p := filepath.Join(dir, name+".json")
		os.WriteFile(p, b, 0o600)
		return p
	}
	calls := map[string][][]string{
		"server-everything": {{"--method", "tools/list"}, {"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=héllo"},
			{"--method", "resources/list"}, {"--method", "prompts/list"}},
		"ts-v2-server": {{"--method", "tools/list"}, {"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=héllo"}},
	}
	servers := map[string][]string{
		"server-everything": append([]string{everything}, everythingArgs...),
		"ts-v2-server":      append([]string{tsv2}, tsv2Args...),
	}
	urls := map[string]string{"server-everything": peers.StartEverythingHTTP(t, "streamableHttp"), "ts-v2-server": peers.StartTSv2(t)}
	for name, argv := range servers {
		direct := config("direct", argv)
		proxied := config("proxied", append([]string{bin, "proxy", "--name", name, "--"}, argv...))
		h, _ := startHTTPProxy(t, urls[name])
		for _, call := range calls[name] {
			d := runClient(t, env, append([]string{node, launcher, "--cli", "--config", direct, "--server", "direct"}, call...)...)
			p := runClient(t, env, append([]string{node, launcher, "--cli", "--config", proxied, "--server", "proxied"}, call...)...)
			sameBytes(t, "Inspector CLI, stdio, "+name+" "+strings.Join(call, " "), d, p)
			d = runClient(t, env, append([]string{node, launcher, "--cli", urls[name], "--transport", "http"}, call...)...)
			p = runClient(t, env, append([]string{node, launcher, "--cli", h.Listen, "--transport", "http"}, call...)...)
			sameBytes(t, "Inspector CLI, HTTP, "+name+" "+strings.Join(call, " "), d, p)
		}
	}
}

var scenarioLine = regexp.MustCompile(`(?m)^([✓✗]) ([a-z0-9-]+): (\d+) passed, (\d+) failed`)

// The conformance suite's server scenarios give the same verdicts through
// the HTTP proxy as direct, scenario by scenario.
func TestConformanceServerScenariosThroughHTTPProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("peers: skipped in -short mode")
	}
	node, suite := peers.Conformance(t, false)
	for name, url := range map[string]string{"server-everything": peers.StartEverythingHTTP(t, "streamableHttp"), "ts-v2-server": peers.StartTSv2(t)} {
		h, _ := startHTTPProxy(t, url)
		verdicts := func(u string) map[string]string {
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			out, _ := exec.CommandContext(ctx, node, suite, "server", "--url", u).CombinedOutput() // exit 1 when any fails
			m := map[string]string{}
			for _, s := range scenarioLine.FindAllStringSubmatch(string(out), -1) {
				m[s[2]] = s[1] + " " + s[3] + "/" + s[4]
			}
			if len(m) == 0 {
				t.Fatalf("no scenario lines in:\n%.3000s", out)
			}
			return m
		}
		direct, proxied := verdicts(url), verdicts(h.Listen)
		var differ []string
		passed := 0
		for sc, v := range direct {
			if proxied[sc] != v {
				differ = append(differ, sc+": direct "+v+", proxied "+proxied[sc])
			}
			if strings.HasPrefix(v, "✓") {
				passed++
			}
		}
		if len(differ) > 0 || len(proxied) != len(direct) {
			t.Errorf("%s: scenarios differ through the proxy:\n%s", name, strings.Join(differ, "\n"))
		}
		t.Logf("%s: %d scenarios, %d pass direct, same verdict each through the proxy", name, len(direct), passed)
	}
}
