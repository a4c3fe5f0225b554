package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/connect"
	"mcpscope/hosts"
	"mcpscope/internal/shell"
	"mcpscope/internal/termsafe"
	"mcpscope/session"
	"mcpscope/transport"
	"mcpscope/ui"
)

// newInspectCmd is the root command: the inspector's TUI on a server.
func newInspectCmd() *cobra.Command {
	var f connFlags
	cmd := &cobra.Command{
		Use:   "mcpscope [URL | -- CMD [ARGS...]]",
		Short: "A terminal inspector for MCP servers",
		Long: `mcpscope shows an MCP session live: every request with its response and timing, every notification and log line, progress of running calls, stderr, and the transport's own life. From there you cancel, replay and answer calls. Every frame is journaled, byte for byte.

With no target it inspects its own embedded demo server. Every command that talks to a server takes the target last: a Streamable HTTP (or HTTP+SSE) URL, or -- and the command that starts a stdio server. Flags may come before or after the other arguments.

Exit codes: 0 success; 1 the server answered with an error (a tool result with isError, or input nobody gave); 2 usage; 3 could not connect or the transport failed; 4 timed out; 5 another mcpscope holds the call (a rejoin race lost, or the lease lost while paused or cut off); 130 interrupted.`,
		Example: `  mcpscope                                        # the embedded demo server
  mcpscope -- npx -y @modelcontextprotocol/server-everything
  mcpscope http://127.0.0.1:3001/mcp
  mcpscope -H 'Authorization: Bearer x' https://example.com/mcp`,
		Args: rootArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			own, url, command := split(cmd, args)
			if len(own) == 1 && url == "" && len(command) == 0 {
				f.server.server = own[0] // mcpscope NAME: a configured server (rootArgs checked)
			}
			sp, err := f.spec(cmd, url, command)
			if err != nil {
				return err
			}
			live, err := f.otlp.start(cmd, &sp)
			if err != nil {
				return err
			}
			defer live.finish()
			return inspect(cmd, sp, live.status())
		},
	}
	f.add(cmd.Flags())
	f.otlp.add(cmd.Flags())
	return cmd
}

// rootArgs accepts the inspector's target: nothing (the demo), one URL, or
// a command after --. Anything else is a mistake worth a hint, and never
// opens the demo.
func rootArgs(cmd *cobra.Command, args []string) error {
	before := args
	if at := cmd.ArgsLenAtDash(); at >= 0 {
		before = args[:at]
		if len(args) == at {
			return usagef("", "nothing after --: give the server command, e.g. mcpscope -- npx -y @modelcontextprotocol/server-everything")
		}
	}
	switch {
	case len(before) == 0:
		return nil
	case len(before) == 1 && hasHTTPScheme(before[0]) && cmd.ArgsLenAtDash() < 0:
		return nil
	}
	first := before[0]
	if h := schemeHint(first); h != "" {
		return usagef("", "%s", h)
	}
	if hasHTTPScheme(first) {
		return usagef("", "one URL at a time, and no URL together with a command after --")
	}
	if len(before) == 1 && cmd.ArgsLenAtDash() < 0 && isConfiguredServer(first) {
		return nil // mcpscope NAME
	}
	msg := fmt.Sprintf("unknown command %q", first)
	if s := cmd.SuggestionsFor(first); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", s[0])
	}
	if cmd.ArgsLenAtDash() < 0 {
		msg += fmt.Sprintf("\n  to inspect a server over stdio, put -- before its command: mcpscope -- %s", shell.Join(before))
		if len(before) == 1 {
			msg += "\n  or name a configured server (mcpscope servers lists them)"
		}
	}
	return usagef("", "%s", msg)
}

// inspect connects and runs the TUI over the session. Server requests
// (elicitation, sampling, roots) go to the UI's responder.
func inspect(cmd *cobra.Command, sp connect.Spec, otlpStatus func() string) error {
	if err := needTerminal(cmd, "use the headless commands (mcpscope tools, call, read… with the same target; mcpscope --help lists them)"); err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	resp := ui.NewResponder(sp.Roots, sp.AskRoots)
	sp.Responder = resp
	if sp.Grace == 0 {
		sp.Grace = 2 * time.Second
	}
	// Once the TUI draws, notes (an OAuth URL to open) go to the notes pane
	// and the journal only: nothing else may write to the screen.
	notes := &gate{w: stderr}
	sp.Notes = notes
	sp.Auth.Interactive = true // a person watches the TUI
	fmt.Fprintln(stderr, "mcpscope: connecting…")
	// q quits while connecting too (a server that never answers), as it
	// does once the inspector draws; ctrl+c interrupts, as always.
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()           // after the session's Close: it may live on ctx
	var quitWhy atomic.Int32 // 1: q, 2: ctrl+c
	stopKeys := quitKeys(cmd.InOrStdin(), &notes.crlf, func(interrupt bool) {
		quitWhy.Store(map[bool]int32{false: 1, true: 2}[interrupt])
		cancel()
	})
	s, err := connect.Connect(ctx, sp)
	typed := stopKeys() // keys typed while connecting, for the inspector
	if quitWhy.Load() != 0 && s != nil {
		s.Close() // connected as the key came: quit all the same
		err = context.Canceled
	}
	if err != nil {
		switch quitWhy.Load() {
		case 1:
			what := "the embedded demo server"
			if t := targetArgs(sp); len(t) > 0 {
				what = shell.Join(t)
			}
			fmt.Fprintf(stderr, "mcpscope: quit while connecting to %s: nothing was connected\n", termsafe.Line(what))
			return nil
		case 2:
			return context.Canceled
		}
		return err
	}
	defer s.Close()
	notes.off.Store(true)
	err = runTUI(cmd, ui.Options{Session: s, Responder: resp, Target: targetArgs(sp), TargetLine: targetLine(sp), StateStore: sp.StateStore,
		OTLPStatus: otlpStatus, DetachOnQuit: true, Typeahead: typed})
	notes.off.Store(false)
	journalHint(stderr, "the session's journal", s.Info().JournalPath)
	// Quitting leaves long HTTP calls running on the server, to rejoin
	// later, beside the ones detached in the TUI (d): each is printed with
	// the command that rejoins it. The rest end with the process: said too.
	handles := detachedHere(s)
	for _, h := range s.DetachAll() {
		if !slices.Contains(handles, h) {
			handles = append(handles, h)
		}
	}
	if lost := ui.Unfinished(s); len(lost) > 0 {
		fmt.Fprintf(stderr, "mcpscope: %d running call(s) ended with the inspector, not rejoinable: %s\n", len(lost), termsafe.Line(strings.Join(lost, ", ")))
	}
	if len(handles) > 0 {
		fmt.Fprintf(stderr, "mcpscope: left %d call(s) running on the server; rejoin with:\n", len(handles))
		for _, h := range handles {
			if where := s.KeptElsewhere(h); where != "" {
				fmt.Fprintf(stderr, "  %s   (the state store %s could not be reached: kept in %s on this machine; rejoin once it answers)\n", termsafe.Line(s.RejoinCommandHere(h)),
					termsafe.Line(sp.StateStore.String()), termsafe.Line(where))
				continue
			}
			fmt.Fprintf(stderr, "  %s\n", termsafe.Line(s.RejoinCommandHere(h)))
		}
	}
	return err
}

// detachedHere is the handles of the calls detached in the TUI (d) that
// are still waiting on the server: none rejoined by another process since.
func detachedHere(s *session.Session) []string {
	var hs []string
	for _, c := range s.Calls() {
		if sn := c.Snapshot(); sn.State == session.StateDetached && sn.Handle != "" && !slices.Contains(hs, sn.Handle) {
			hs = append(hs, sn.Handle)
		}
	}
	return hs
}

// journalHint says where a journal went and how to read it back, when
// there is one (what names it: "the session's journal").
func journalHint(w io.Writer, what, path string) {
	if path == "" {
		return
	}
	arg := path
	if shell.IsFlag(arg) {
		arg = "./" + arg // a flag to the command line; the same file
	}
	fmt.Fprintf(w, "mcpscope: %s is %s (read it back with: %s)\n", what, termsafe.Line(path), shell.Join([]string{"mcpscope", "open", arg}))
}

// gate is a writer that can be switched off; with crlf (a terminal in
// raw mode) each line ends in CR LF.
type gate struct {
	w    io.Writer
	off  atomic.Bool
	crlf atomic.Bool
}

func (g *gate) Write(p []byte) (int, error) {
	if g.off.Load() {
		return len(p), nil
	}
	if g.crlf.Load() {
		if _, err := g.w.Write(bytes.ReplaceAll(p, []byte("\n"), []byte("\r\n"))); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return g.w.Write(p)
}

// targetLine is the end of a copied command line: the flags the target
// needs and the target itself, shell-quoted, every secret as a $VARIABLE
// reference for the person to set (never its value).
func targetLine(sp connect.Spec) string {
	var words []string
	add := func(w ...string) {
		for _, x := range w {
			words = append(words, shell.Quote(x))
		}
	}
	for _, name := range sortedKeys(sp.Headers) {
		if transport.IsSecretName(name) {
			words = append(words, "-H", shell.Ref(name+": ", name))
		} else {
			add("-H", name+": "+sp.Headers[name])
		}
	}
	if sp.Bearer != "" {
		words = append(words, "--bearer", `"$MCPSCOPE_BEARER"`)
	}
	for _, kv := range sp.Env {
		name, _, _ := strings.Cut(kv, "=")
		if transport.IsSecretName(name) {
			words = append(words, "-e", shell.Ref(name+"=", name))
		} else {
			add("-e", kv)
		}
	}
	if sp.Dir != "" {
		add("--cwd", sp.Dir)
	}
	if sp.Era != "" {
		add("--era", sp.Era)
	}
	if sp.Transport != "" {
		add("--transport", sp.Transport)
	}
	if sp.Shell {
		add("--shell")
	}
	add(targetArgs(sp)...)
	return strings.Join(words, " ")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// targetArgs is how a copied command line names the session's target.
func targetArgs(sp connect.Spec) []string {
	switch {
	case sp.URL != "":
		return []string{transport.RedactURL(sp.URL)}
	case len(sp.Command) > 0:
		return append([]string{"--"}, sp.Command...)
	}
	return nil
}

// isConfiguredServer reports whether name picks exactly one server some
// host (or mcpscope) has configured.
func isConfiguredServer(name string) bool {
	_, err := hosts.Load(hosts.Options{}).Find(name)
	return err == nil
}
