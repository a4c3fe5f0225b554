package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/internal/termsafe"
	"mcpscope/proxy"
	"mcpscope/session"
	"mcpscope/transport"
	"mcpscope/ui"
)

// attachDial bounds finding and connecting to a proxy.
const attachDial = 2 * time.Second

func newAttachCmd() *cobra.Command {
	var f connFlags
	cmd := &cobra.Command{
		Use:   "attach [NAME]",
		Short: "Open the inspector on a running mcpscope proxy: a host's session, from its start and live",
		Long: "attach opens the inspector on a running mcpscope proxy (mcpscope proxies lists them; with one running, " +
			"NAME may be left out): the host's calls and the server's notifications in the usual panes, the host's " +
			"calls marked H, from the start of the session (read from the proxy's journal) and live.\n\n" +
			"r replays a call, e edits it first, and the catalog calls a tool: through a stdio proxy they run inside " +
			"the host's server process, under ids the host never uses, and their answers never reach the host; through " +
			"an HTTP proxy they go to a session of mcpscope's own against the proxy's target (o switches between the " +
			"two). c on a host's running call asks, then cancels it: the server gets notifications/cancelled and the " +
			"host a JSON-RPC error saying mcpscope cancelled it. When the proxy ends, the status bar says why and the " +
			"panes stay.",
		GroupID: groupSessions,
		Example: "  mcpscope attach             # the only proxy running\n" +
			"  mcpscope attach github",
		ValidArgsFunction: completeProxies,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef(cmd.CommandPath(), "attach takes one proxy name; %q is one too many (mcpscope proxies lists them)", args[1])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			r, err := findProxy(cmd, name)
			if err != nil {
				return err
			}
			if err := needTerminal(cmd, "mcpscope open reads the proxy's journal back (mcpscope proxies lists it)"); err != nil {
				return err
			}
			conn, err := proxy.Dial(cmd.Context(), r.Socket, attachDial)
			if err != nil {
				return &attachError{msg: fmt.Sprintf("could not connect to proxy %s (pid %d) on %s: %v; is it still running? (mcpscope proxies)",
					termsafe.Line(r.Hello.Name), r.Hello.PID, r.Socket, err)}
			}
			a := proxy.NewAttach(conn)
			// With --otlp the session's spans go out as the proxy's own
			// --otlp would send them: from its journal's start, in its trace.
			trace, err := f.otlp.startFor(cmd, a.JournalPath(), r.Hello.Target)
			if err != nil {
				a.Close()
				return err
			}
			defer trace.finish() // after the session closed: its last spans
			var feed session.Feed = a
			if trace != nil {
				feed = tracedFeed{a, trace.e.Frame}
			}
			s, err := session.Follow(feed, session.Options{IDPrefix: fmt.Sprintf("mcpscope-attach-%d-", os.Getpid())})
			if err != nil {
				a.Close()
				return err
			}
			defer s.Close()
			if err := s.Start(); err != nil {
				return &attachError{msg: fmt.Sprintf("attach to proxy %s: %v", termsafe.Line(r.Hello.Name), err)}
			}
			lv, err := liveTarget(cmd, &f, "", nil, r.Hello.Target)
			if err != nil {
				return err
			}
			store, err := f.sess.state.open(cmd.CommandPath()) // the D view lists --state / MCPSCOPE_STATE
			if err != nil {
				return err
			}
			o := ui.Options{Session: s, Target: lv.target, TargetLine: lv.line, StateStore: store, OTLPStatus: trace.status()}
			if !a.CanInject() {
				// An HTTP proxy takes no viewer's request: replays and calls go
				// to a session of mcpscope's own against its target.
				o.Live = lv.live
				if lv.otlpStatus != nil {
					o.OTLPStatus = lv.otlpStatus // the live session's, when it shows
					if st := trace.status(); st != nil {
						o.OTLPStatus = func() string { return joinStatus(st(), lv.otlpStatus()) }
					}
				}
			}
			err = runTUI(cmd, o)
			lv.close(cmd.ErrOrStderr())
			journalHint(cmd.ErrOrStderr(), "the proxy's journal", a.JournalPath())
			return err
		},
	}
	f.add(cmd.Flags())
	f.otlp.add(cmd.Flags())
	return cmd
}

// tracedFeed hands each frame the proxy feeds the session to the live
// exporter too (session.Follow journals nothing, so Observe never hears
// of them); the Attach's other methods pass through.
type tracedFeed struct {
	*proxy.Attach
	frame func(seq uint64, f transport.Frame)
}

func (t tracedFeed) StartFeed(fn func(session.Fed), wire func(key string, id json.RawMessage)) error {
	return t.Attach.StartFeed(func(fd session.Fed) {
		t.frame(fd.Seq, fd.Frame)
		fn(fd)
	}, wire)
}

// joinStatus is the proxy's session's exporter line and the replays'
// live session's, as one line for the info view.
func joinStatus(proxied, replays string) string {
	if replays == "" {
		return proxied
	}
	return proxied + " · replays " + replays
}

// findProxy picks the running proxy called name, or the only one running
// when name is "".
func findProxy(cmd *cobra.Command, name string) (proxy.Running, error) {
	all, err := proxy.List(cmd.Context(), attachDial)
	if err != nil {
		return proxy.Running{}, err
	}
	var up, match []proxy.Running
	for _, r := range all {
		if r.Err != nil {
			continue
		}
		up = append(up, r)
		if name == "" || r.Hello.Name == name || proxy.SafeName(r.Hello.Name) == proxy.SafeName(name) {
			match = append(match, r)
		}
	}
	list := func(rs []proxy.Running) string {
		var b strings.Builder
		for _, r := range rs {
			fmt.Fprintf(&b, "\n  %s (pid %d): %s", termsafe.Line(r.Hello.Name), r.Hello.PID, termsafe.Line(r.Hello.Target))
		}
		return b.String()
	}
	switch {
	case len(up) == 0:
		return proxy.Running{}, &attachError{msg: "no mcpscope proxy is running: start one with mcpscope proxy --name NAME -- CMD ARGS " +
			"(mcpscope wrap NAME makes a host start its server through one)"}
	case len(match) == 0:
		return proxy.Running{}, &attachError{msg: fmt.Sprintf("no running proxy is called %q; running:%s", name, list(up))}
	case len(match) > 1 && name == "":
		return proxy.Running{}, usagef(cmd.CommandPath(), "%d proxies are running: name one (mcpscope attach NAME):%s", len(match), list(match))
	case len(match) > 1:
		return proxy.Running{}, usagef(cmd.CommandPath(), "%d running proxies are called %q; stop the extra ones, or give each its own --name:%s",
			len(match), name, list(match))
	}
	return match[0], nil
}

// attachError: no proxy to attach to, or it could not be reached (exit 3,
// like any connection that could not be made).
type attachError struct{ msg string }

func (e *attachError) Error() string { return e.msg }
