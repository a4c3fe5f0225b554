package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/connect"
	"mcpscope/internal/termsafe"
	"mcpscope/session"
)

// oneShotGrace is how long a one-shot command lets a server exit on stdin
// EOF before the shutdown ladder moves on: scripts should not pay seconds
// for a server that ignores EOF.
const oneShotGrace = 250 * time.Millisecond

// dial connects a headless command to the target its arguments and flags
// name; notes for the person go to stderr.
func dial(cmd *cobra.Command, f *connFlags, url string, command []string, grace time.Duration) (*session.Session, connect.Spec, error) {
	sp, err := f.spec(cmd, url, command)
	if err != nil {
		return nil, sp, err
	}
	sp.Grace = grace
	sp.Notes = cmd.ErrOrStderr()
	s, err := connect.Connect(cmd.Context(), sp)
	return s, sp, err
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
func printTaskStatus(w io.Writer, t session.Task) {
	fmt.Fprintf(w, "task %s: %s %s\n", termsafe.Line(t.TaskID), termsafe.Line(t.Status), termsafe.Line(t.StatusMessage))
}
