// Command mcpscope is a terminal inspector for MCP sessions: it connects to a
// server over Streamable HTTP or spawns one over stdio and shows every frame,
// call, notification and progress stream; the same engine runs headless.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"mcpscope/session"
	"mcpscope/transport"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit codes (also in the usage text).
const (
	exitOK        = 0
	exitServerErr = 1
	exitUsage     = 2
	exitTransport = 3
	exitTimeout   = 4
	exitInterrupt = 130
)

func run(argv []string, stdout, stderr io.Writer) int {
	o, err := parseArgs(argv)
	if err == nil {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		err = dispatch(ctx, o, stdout, stderr)
	}
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	if code != exitOK {
		fmt.Fprintf(stderr, "mcpscope: %v\n", err)
	}
	if code == exitUsage {
		fmt.Fprintln(stderr, "run 'mcpscope help' for usage")
	}
	return code
}

func exitCode(err error) int {
	var ue *usageError
	var rpc *session.RPCError
	var te *toolError
	var f *session.Failure
	var un *session.Unanswered
	switch {
	case errors.As(err, &ue):
		return exitUsage
	case errors.Is(err, errInterrupted), errors.Is(err, context.Canceled):
		return exitInterrupt
	case errors.As(err, &te), errors.As(err, &rpc), errors.As(err, &un):
		return exitServerErr
	case errors.As(err, &f) && strings.HasPrefix(f.Reason, "timed out"):
		return exitTimeout
	}
	return exitTransport
}

func dispatch(ctx context.Context, o *options, stdout, stderr io.Writer) error {
	switch o.cmd {
	case "help":
		fmt.Fprint(stdout, usageText)
		return nil
	case "version":
		fmt.Fprintln(stdout, "mcpscope", session.Version)
		return nil
	case "demo":
		return runDemo(ctx, o, stdout, stderr)
	case "journal":
		return runJournal(o, stdout)
	case "bench":
		return runBench(o, stdout)
	case "rejoin":
		return runRejoin(ctx, o, stdout, stderr)
	case "listen":
		return runListen(ctx, o, stdout, stderr)
	case "client":
		return runConformanceClient(ctx, o, stdout, stderr)
	case "":
		return runInspector(ctx, o, stdout, stderr)
	}
	return runHeadless(ctx, o, stdout, stderr)
}

// newTransport builds the transport for the target the flags name; with no
// target it spawns this binary's own demo server over stdio.
func newTransport(o *options, grace time.Duration) (transport.Transport, error) {
	o.takeTarget()
	switch {
	case o.url != "":
		if len(o.command) > 0 {
			return nil, usagef("give either a URL or a command after --, not both")
		}
		hdr := map[string]string{}
		for _, h := range o.headers {
			name, val, _ := strings.Cut(h, ":")
			hdr[strings.TrimSpace(name)] = strings.TrimSpace(val)
		}
		flow, client := oauthFor(o, o.authorizer)
		if o.transport == "sse" {
			t := transport.NewLegacySSE(transport.LegacySSEOptions{URL: o.url, Headers: hdr, Bearer: o.bearer, Client: client})
			noteTo(flow, t)
			return t, nil
		}
		t := transport.NewHTTP(transport.HTTPOptions{URL: o.url, Headers: hdr, Bearer: o.bearer, Client: client})
		noteTo(flow, t)
		return t, nil
	case len(o.command) > 0:
		so := transport.StdioOptions{Command: o.command[0], Args: o.command[1:], Env: o.env, Dir: o.cwd, Grace: grace}
		if o.shell {
			so.Command, so.Args, so.Shell = strings.Join(o.command, " "), nil, true
		}
		return transport.NewStdio(so), nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find my own binary to start the demo server: %w; give a target instead", err)
	}
	return transport.NewStdio(transport.StdioOptions{Command: self, Args: []string{"demo"}, Env: o.env, Grace: grace}), nil
}

// connect starts a session on the target and runs the handshake. A URL
// whose initialize POST gets 400, 404 or 405 is tried again with the older
// HTTP+SSE transport, as the 2025-11-25 backwards-compatibility rules say.
func connect(ctx context.Context, o *options, r session.Responder, grace time.Duration) (*session.Session, error) {
	s, err := connectOnce(ctx, o, r, grace)
	var he *transport.HTTPError
	if err == nil || o.url == "" || o.transport != "" || o.era == "modern" || !errors.As(err, &he) ||
		(he.Status != 400 && he.Status != 404 && he.Status != 405) {
		return s, err
	}
	fmt.Fprintf(os.Stderr, "mcpscope: %s answered %d to Streamable HTTP; trying the HTTP+SSE transport (2024-11-05)\n", o.url, he.Status)
	sse := *o
	sse.transport = "sse"
	if sse.journal != "" {
		sse.journal = strings.TrimSuffix(sse.journal, ".jsonl") + "-sse.jsonl"
	}
	s2, err2 := connectOnce(ctx, &sse, r, grace)
	if err2 != nil {
		return nil, fmt.Errorf("%w\n(the HTTP+SSE fallback failed too: %v)", err, err2)
	}
	return s2, nil
}

func connectOnce(ctx context.Context, o *options, r session.Responder, grace time.Duration) (*session.Session, error) {
	t, err := newTransport(o, grace)
	if err != nil {
		return nil, err
	}
	var j *session.Journal
	if !o.noJournal {
		path := o.journal
		if path == "" {
			path = session.NewJournalPath(session.DefaultJournalDir(), time.Now())
		}
		if j, err = session.CreateJournal(path, t.Describe()); err != nil {
			return nil, err
		}
	}
	if r == nil {
		if r, err = newAnswersResponder(o); err != nil {
			if j != nil {
				j.Close()
			}
			return nil, err
		}
	}
	so := session.Options{Responder: r, Journal: j, Timeout: o.timeout, MaxTimeout: o.maxTimeout}
	if o.url != "" && !o.noState {
		// HTTP calls that carry event ids can be rejoined after this process ends.
		so.StateStore, so.Rejoin = session.DefaultStateStore(), rejoinInfo(o)
	}
	s := session.New(t, so)
	if err := s.Start(); err != nil {
		if j != nil {
			j.Close()
		}
		return nil, err // the transport's error names the target already
	}
	if err := preflightLogin(ctx, o); err != nil {
		s.Close()
		return nil, err
	}
	ictx, cancel := context.WithTimeout(ctx, initTimeout(o))
	defer cancel()
	if err := chooseEra(ictx, o, s, grace); err != nil {
		s.Close()
		if ctx.Err() != nil {
			return nil, errInterrupted
		}
		if ictx.Err() != nil {
			return nil, &session.Failure{Reason: fmt.Sprintf("timed out: %s did not complete the handshake within %s", t.Describe(), initTimeout(o))}
		}
		return nil, err
	}
	if o.logLevel != "" {
		if c := s.SetLogLevel(o.logLevel); c != nil {
			if _, err := c.Wait(ctx); err != nil {
				fmt.Fprintf(os.Stderr, "mcpscope: logging/setLevel %s: %v\n", o.logLevel, err)
			}
		}
	}
	return s, nil
}

func initTimeout(o *options) time.Duration {
	if o.timeout > 0 {
		return o.timeout
	}
	return 30 * time.Second
}
