package cli

import (
	"os"

	"github.com/charmbracelet/x/term"

	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/connect"
	"mcpscope/internal/termsafe"
	"mcpscope/protocol"
	"mcpscope/session"
)

// oneShotGrace is how long a one-shot command lets a server exit on stdin
// EOF before the shutdown ladder moves on: scripts should not pay seconds
// for a server that ignores EOF.
const oneShotGrace = 250 * time.Millisecond

// sessionFunc is a headless command's work: its own arguments (the target
// taken out), a started session, and the spec it was made from.
type sessionFunc func(cmd *cobra.Command, own []string, s *session.Session, sp connect.Spec) error

// withSession makes a command's RunE: check its own arguments (nil: no
// check), connect to the target the arguments and flags name (notes for the
// person go to stderr), run fn, close the session.
func withSession(f *connFlags, grace time.Duration, check func(cmd *cobra.Command, own []string) error, fn sessionFunc) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		own, url, command := split(cmd, args)
		if check != nil {
			if err := check(cmd, own); err != nil {
				return err
			}
		}
		sp, err := f.spec(cmd, url, command)
		if err != nil {
			return err
		}
		sp.Grace, sp.NoListen = grace, f.noListen
		sp.Notes = cmd.ErrOrStderr()
		sp.Auth.Interactive = isTerminal(cmd.ErrOrStderr())
		live, err := f.otlp.start(cmd, &sp)
		if err != nil {
			return err
		}
		defer live.finish() // after the session closed: its last spans
		s, err := connect.Connect(cmd.Context(), sp)
		if err != nil {
			return err
		}
		defer s.Close()
		return fn(cmd, own, s, sp)
	}
}

// headlessArgs validates a headless command's own arguments (the target
// aside): between min and max of them (max < 0: any number).
func headlessArgs(min, max int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		own, _, _ := split(cmd, args)
		switch {
		case len(own) < min:
			return usagef(cmd.CommandPath(), "%s needs %s", cmd.Name(), what)
		case max >= 0 && len(own) > max:
			extra := own[max]
			if h := schemeHint(extra); h != "" {
				return usagef(cmd.CommandPath(), "%s", h)
			}
			if max == 0 {
				return usagef(cmd.CommandPath(), "%s takes no arguments besides the target, got %q", cmd.Name(), extra)
			}
			return usagef(cmd.CommandPath(), "%s takes %s, then the target; %q is one too many", cmd.Name(), what, extra)
		}
		return nil
	}
}

// printTaskStatus writes one line about a task's state.
func printTaskStatus(w io.Writer, t protocol.Task) {
	fmt.Fprintf(w, "task %s: %s %s\n", termsafe.Line(t.TaskID), termsafe.Line(t.Status), termsafe.Line(t.StatusMessage))
}

// isTerminal reports whether stream (a writer or a reader) is a terminal
// a person reads or types into (a login in a browser may then take its
// time; a question may be asked).
func isTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}
