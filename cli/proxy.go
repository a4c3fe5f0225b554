package cli

import (
	"context"
	"errors"
	"fmt"
	"mcpscope/bench"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/internal/termsafe"
	"mcpscope/journal"
	"mcpscope/proxy"
	"mcpscope/transport"
)

func newProxyCmd() *cobra.Command {
	var (
		name, listen, journalPath string
		noJournal, useShell       bool
		env                       []string
		cwd                       string
		grace                     durationFlag
		otlp                      otlpFlag
	)
	cmd := &cobra.Command{
		Use:   "proxy -- CMD ARGS... | --listen HOST:PORT URL",
		Short: "Sit between a host and its server: forward every byte, journal both ways, publish the session live",
		Long: `proxy is what a host (Claude, VS Code, Cursor...) runs in place of its server, so that mcpscope sees what the host sends and what the server answers (mcpscope wrap NAME edits the host's file for you).

With -- CMD ARGS... it spawns the server and forwards the host's stdin to it and its stdout to the host byte for byte, line by line, never holding a line back. Its stderr passes through as well. When the host closes stdin the server's stdin is closed, then SIGTERM, then SIGKILL if it stays; a signal the host sends goes to the server; when the server exits, proxy exits with its code. proxy writes nothing of its own to stdout, and to stderr only when something fails.

With --listen HOST:PORT URL it is a reverse proxy for a Streamable HTTP (or HTTP+SSE) server: point the host at http://HOST:PORT/PATH (PATH as in URL) and every request goes to URL's server with its own path, query and headers (credentials included: the journal has them redacted); event streams are forwarded as they arrive.

Both directions are journaled (one journal per proxy), and the live session is published on a local socket (mode 0600) that mcpscope proxies lists and viewers connect to. A slow or dead viewer changes nothing on the wire.`,
		GroupID: groupSessions,
		Example: "  mcpscope proxy --name github -- npx -y @modelcontextprotocol/server-github\n" +
			"  mcpscope proxy --listen 127.0.0.1:8931 http://127.0.0.1:3001/mcp\n" +
			"  mcpscope proxies",
		Args: func(cmd *cobra.Command, args []string) error {
			own, url, command := split(cmd, args)
			switch {
			case len(own) > 0:
				if h := schemeHint(own[0]); h != "" {
					return usagef(cmd.CommandPath(), "%s", h)
				}
				return usagef(cmd.CommandPath(), "proxy takes the server after --, or --listen HOST:PORT and a URL; %q is not one of them", own[0])
			case url == "" && len(command) == 0:
				return usagef(cmd.CommandPath(), "proxy needs the server: -- CMD ARGS... (stdio), or --listen HOST:PORT URL (HTTP)")
			case url != "" && listen == "":
				return usagef(cmd.CommandPath(), "an HTTP server needs --listen HOST:PORT, where the host will connect")
			case len(command) > 0 && listen != "":
				return usagef(cmd.CommandPath(), "--listen goes with a URL; a stdio server talks over the host's stdin and stdout")
			case noJournal && journalPath != "":
				return usagef(cmd.CommandPath(), "give either --journal PATH or --no-journal")
			}
			if url != "" {
				if err := checkURL(url); err != nil {
					return usagef(cmd.CommandPath(), "%v", err)
				}
				if _, _, err := net.SplitHostPort(listen); err != nil {
					return usagef(cmd.CommandPath(), "--listen takes HOST:PORT, such as 127.0.0.1:8931 (0 picks a free port): %v", err)
				}
			}
			for _, e := range env {
				if !strings.Contains(e, "=") {
					return usagef(cmd.CommandPath(), "-e takes KEY=VALUE, got %q", e)
				}
			}
			if journalPath != "" {
				return checkOutput(cmd, "--journal", journalPath)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			_, url, command := split(cmd, args)
			if name == "" {
				name = defaultProxyName(url, command)
			}
			jpath := journalPath
			if jpath == "" && !noJournal {
				jpath = journal.NewPath(journal.DefaultDir(), time.Now())
			}
			target := "http: " + url
			if url == "" {
				target = "stdio: " + transport.CommandLine(command)
			}
			live, err := otlp.startFor(cmd, jpath, target)
			if err != nil {
				return err
			}
			defer live.finish()
			if url != "" {
				return runHTTPProxy(cmd, name, listen, url, jpath, live.records())
			}
			return runStdioProxy(cmd, proxy.StdioConfig{Name: name, Command: command[0], Args: command[1:], Env: env,
				Dir: cwd, Shell: useShell, Grace: grace.d, Journal: jpath, Records: live.records()})
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "the name viewers and mcpscope proxies know this proxy by (default: from the command or URL)")
	f.StringVar(&listen, "listen", "", "serve an HTTP server's host on HOST:PORT (with a URL)")
	f.StringVar(&journalPath, "journal", "", "write the session journal to this path (default: a new file under $XDG_STATE_HOME/mcpscope/journal)")
	f.BoolVar(&noJournal, "no-journal", false, "write no journal")
	stringArrayVarP(f, &env, "env", "e", "set KEY=VALUE in the spawned server's environment (repeatable)")
	f.StringVar(&cwd, "cwd", "", "working directory of the spawned server")
	f.BoolVar(&useShell, "shell", false, "run the server command through sh -c")
	f.Var(&grace, "grace", "each step of the shutdown ladder (stdin closed, SIGTERM, SIGKILL) as a duration; default 2s")
	otlp.add(f)
	return cmd
}

// launchers start the real server named by their first plain argument.
var launchers = map[string]bool{"npx": true, "node": true, "uvx": true, "uv": true, "python": true, "python3": true,
	"bunx": true, "bun": true, "deno": true, "pnpx": true, "pnpm": true, "docker": true, "podman": true, "sh": true, "bash": true}

// defaultProxyName names a proxy after what it runs: the server's package
// or script rather than npx or node, or the URL's host and port.
func defaultProxyName(url string, command []string) string {
	if url != "" {
		if h, ok := strings.CutPrefix(strings.TrimPrefix(strings.TrimPrefix(url, "https://"), "http://"), ""); ok {
			if i := strings.IndexAny(h, "/?#"); i >= 0 {
				h = h[:i]
			}
			if i := strings.LastIndexByte(h, '@'); i >= 0 {
				h = h[i+1:]
			}
			return h
		}
	}
	name := filepath.Base(command[0])
	if launchers[name] {
		for _, a := range command[1:] {
			if a == "" || strings.HasPrefix(a, "-") || a == "run" || a == "exec" || a == "x" {
				continue
			}
			a = strings.TrimSuffix(filepath.Base(a), filepath.Ext(a))
			if at := strings.LastIndexByte(a, '@'); at > 0 {
				a = a[:at] // a version: server-github@1.2
			}
			if a != "" {
				return a
			}
		}
	}
	return name
}

func runStdioProxy(cmd *cobra.Command, c proxy.StdioConfig) error {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	// A host that goes away makes stdout a broken pipe: a write then fails
	// with EPIPE (the proxy stops the server) instead of killing the proxy.
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)
	c.In, c.Out, c.Err, c.Signals = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), sigs
	// One P, as over HTTP: the forwarders hand each run of lines to the
	// journal's writer, and with a second P each hand-over woke a second
	// thread (futex) that then spun for work. Measured under a 1M-line
	// flood on 2 cores, paired, 6 rounds: the proxy's CPU 1.06 s against
	// 1.23 s (medians; less in all 6), the flood's wall time 2.90 s
	// against 3.11 s; the server and the host need the other core more
	// than the proxy does (see proxy/doc.go).
	defer oneP()()
	// MCPSCOPE_BENCH_CPUPROFILE profiles the proxy under a flood, as it
	// does the HTTP proxy (proxy/doc.go's figures come from it).
	stopProfile, err := bench.StartCPUProfile()
	if err != nil {
		return err
	}
	defer stopProfile()
	// Signals arrive on sigs, not as a cancelled context: the server must
	// get the very signal the host sent.
	res, err := proxy.RunStdio(context.WithoutCancel(cmd.Context()), c)
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return &exitStatus{code: res.ExitCode}
	}
	return nil
}

func runHTTPProxy(cmd *cobra.Command, name, listen, url, journal string, records func([]byte)) error {
	errw := cmd.ErrOrStderr()
	// One P: a request's goroutines (net/http's connection reader, the
	// handler, the journal's writer) hand over to each other on one
	// thread, where a second P made the runtime wake a second thread
	// (futex) for each one made ready, which then spun looking for work
	// (nanosleep, epoll): a fifth of the proxy's CPU a request and a wait
	// on each wake-up. A host's requests are handled one after another;
	// the proxy needs no second core for them (see proxy/doc.go, What a
	// request costs).
	defer oneP()()
	stopProfile, err := bench.StartCPUProfile()
	if err != nil {
		return err
	}
	defer stopProfile()
	err = proxy.RunHTTP(cmd.Context(), proxy.HTTPConfig{Name: name, Listen: listen, Upstream: url, Journal: journal, Err: errw, Records: records,
		Ready: func(h proxy.Hello) {
			fmt.Fprintf(errw, "mcpscope proxy: point the host at %s (forwarded to %s)\n", termsafe.Line(h.Listen), termsafe.Line(transport.RedactURL(url)))
			if h.Journal != "" {
				fmt.Fprintf(errw, "  journal %s; mcpscope proxies lists it as %s\n", termsafe.Line(tilde(h.Journal)), termsafe.Line(h.Name))
			}
		}})
	if err != nil && errors.Is(cmd.Context().Err(), context.Canceled) {
		return nil
	}
	return err
}

// exitStatus makes mcpscope exit with a code of the server's choosing, and
// says nothing more (the server's own stderr has said it).
type exitStatus struct{ code int }

func (e *exitStatus) Error() string { return fmt.Sprintf("the server exited with code %d", e.code) }
