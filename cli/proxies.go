package cli

import (
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/internal/render"
	"mcpscope/internal/termsafe"
	"mcpscope/proxy"
)

func newProxiesCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "proxies",
		Short:   "List the running mcpscope proxies (the hosts' sessions you can watch)",
		Long:    `proxies lists the mcpscope proxy processes running for you: name, pid, what they forward to, their journal, how many viewers watch them and since when. It asks each one on its socket ($XDG_RUNTIME_DIR/mcpscope/proxies, else $XDG_STATE_HOME/mcpscope/proxies), and removes the sockets of proxies that died without cleaning up.`,
		GroupID: groupSessions,
		Example: "  mcpscope proxies\n  mcpscope proxies --json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			all, err := proxy.List(cmd.Context(), 2*time.Second)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				for _, r := range all {
					m := map[string]any{"name": r.Hello.Name, "pid": r.Hello.PID, "transport": r.Hello.Transport, "target": r.Hello.Target,
						"journal": r.Hello.Journal, "viewers": r.Hello.Viewers, "socket": r.Socket}
					if r.Hello.Listen != "" {
						m["listen"] = r.Hello.Listen
					}
					if !r.Hello.Started.IsZero() {
						m["started"] = r.Hello.Started
					}
					if r.Err != nil {
						m["error"] = r.Err.Error()
					}
					if err := render.Line(out, m); err != nil {
						return err
					}
				}
				return nil
			}
			if len(all) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "no mcpscope proxy is running (mcpscope wrap NAME makes a host start its server through one)")
				return nil
			}
			tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tPID\tTARGET\tVIEWERS\tSTARTED\tJOURNAL")
			for _, r := range all {
				h := r.Hello
				if r.Err != nil {
					fmt.Fprintf(tw, "%s\t%d\t(not answering: %s)\t\t\t\n", termsafe.Line(h.Name), h.PID, termsafe.Line(r.Err.Error()))
					continue
				}
				target := h.Target
				if h.Listen != "" {
					target = h.Listen + " → " + target
				}
				journal := "-"
				if h.Journal != "" {
					journal = tilde(h.Journal)
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", termsafe.Line(h.Name), h.PID, termsafe.Line(target),
					strconv.Itoa(h.Viewers), ago(time.Since(h.Started)), termsafe.Line(journal))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per proxy, for programs")
	return cmd
}

// ago says how long ago, roughly.
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s ago"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h ago"
	}
	return strconv.Itoa(int(d.Hours()/24)) + "d ago"
}
