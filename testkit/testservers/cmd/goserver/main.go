// Command goserver is the stdio MCP server that tests spawn (see
// testservers.BuildStdio): the demo server plus test tools, with flags that
// make it misbehave like real servers do.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"mcpscope/testkit/testservers"
)

func main() {
	banner := flag.String("banner", "", "print this text on stdout before serving, as servers that log to stdout do")
	noise := flag.Bool("stderr-noise", false, "write chatter to stderr: a few lines at start (one with colour codes) and one per request")
	clock := flag.Duration("clock", 0, "how often demo://clock changes while subscribed (default 3s)")
	noDie := flag.Bool("no-die", false, "leave out the die tool")
	requestLog := flag.String("request-log", "", "append a line per request or notification received to this file (tests read what reached the server)")
	flag.Parse()

	if *banner != "" {
		fmt.Fprintln(os.Stdout, *banner)
	}
	opts := []testservers.Option{testservers.WithClockInterval(*clock)}
	if !*noDie {
		opts = append(opts, testservers.WithDie())
	}
	if *requestLog != "" {
		f, err := os.OpenFile(*requestLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, "goserver:", err)
			os.Exit(1)
		}
		defer f.Close()
		opts = append(opts, testservers.WithRequestLog(f))
	}
	if *noise {
		fmt.Fprintf(os.Stderr, "goserver: starting, pid %d\n", os.Getpid())
		fmt.Fprintln(os.Stderr, "goserver: \x1b[33mwarning\x1b[0m: this line carries terminal colour codes")
		fmt.Fprintln(os.Stderr, "goserver: ready on stdio")
		opts = append(opts, testservers.WithRequestLog(os.Stderr))
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := testservers.ServeStdio(ctx, opts...); err != nil {
		fmt.Fprintln(os.Stderr, "goserver:", err)
		os.Exit(1)
	}
}
