package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/hosts"
	"mcpscope/internal/render"
	"mcpscope/internal/termsafe"
)

func newWrapCmd() *cobra.Command {
	var host string
	var list, asJSON bool
	cmd := &cobra.Command{
		Use:   "wrap NAME",
		Short: "Make a host start a configured stdio server through mcpscope proxy",
		Long: `wrap rewrites the server's entry in its host's file (Claude Desktop, Claude Code, VS Code, Cursor, Windsurf, Gemini CLI, Kiro, Amazon Q Developer CLI, Zed or Codex CLI) so that the host starts mcpscope proxy --name NAME -- CMD ARGS... in place of CMD ARGS... Only the entry's command and the start of its args change: the other keys, comments and layout of the file stay as they are. The file is first copied next to itself, to FILE.mcpscope-backup-TIME; mcpscope unwrap NAME puts the entry back. Restart the host (or reload its MCP servers) afterwards. HTTP servers cannot be wrapped yet.

NAME is a server's name, or HOST/NAME when several hosts have it (mcpscope servers lists them).`,
		GroupID: groupServers,
		Example: "  mcpscope wrap github\n  mcpscope wrap cursor/github\n  mcpscope wrap --list\n  mcpscope unwrap github",
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case list && len(args) > 0:
				return usagef(cmd.CommandPath(), "wrap --list takes no server name, got %q", args[0])
			case !list && len(args) != 1:
				return usagef(cmd.CommandPath(), "wrap needs one server name (mcpscope servers lists them), or --list")
			case asJSON && !list:
				return usagef(cmd.CommandPath(), "--json goes with --list")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				return listWrapped(cmd, host, asJSON)
			}
			all, s, err := findServer(cmd, args[0], host)
			if err != nil {
				return err
			}
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("cannot find mcpscope's own path for the host to start (%v); nothing changed", err)
			}
			ch, err := hosts.Wrap(s, self)
			if err != nil {
				return refusal(cmd, err)
			}
			out, sel := cmd.OutOrStdout(), all.Selector(s)
			fmt.Fprintf(out, "wrapped %s in %s: %s now starts\n  %s\n", termsafe.Line(sel), termsafe.Line(tilde(ch.File)),
				hosts.Title(s.Host), termsafe.Line(hosts.ShowCommand(ch.Runs)))
			fmt.Fprintf(out, "backup of the file as it was: %s\n", termsafe.Line(tilde(ch.Backup)))
			fmt.Fprintf(out, "restart %s (or reload its MCP servers) to use it; 'mcpscope unwrap %s' puts it back\n",
				hosts.Title(s.Host), termsafe.Line(sel))
			warn(cmd.ErrOrStderr(), ch.Warning)
			return nil
		},
	}
	cmd.Flags().StringVar(&host, "host", "", "the host whose entry to wrap, when several have the name: "+strings.Join(hosts.Names, ", "))
	cmd.Flags().BoolVar(&list, "list", false, "list the entries that run through mcpscope proxy")
	cmd.Flags().BoolVar(&asJSON, "json", false, "with --list, print JSON for programs")
	return cmd
}

func newUnwrapCmd() *cobra.Command {
	var host string
	cmd := &cobra.Command{
		Use:     "unwrap NAME",
		Short:   "Put back a server entry that mcpscope wrap changed",
		Long:    `unwrap makes the host start the server directly again. When the wrapped entry is still exactly what wrap wrote, the entry comes back byte for byte from wrap's backup; when it changed since (the host or a person edited it), its command and args come back from the wrapped entry itself and the other changes stay. The file is copied next to itself first, as with wrap.`,
		GroupID: groupServers,
		Example: "  mcpscope unwrap github\n  mcpscope unwrap --host cursor github",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef(cmd.CommandPath(), "unwrap needs one server name (mcpscope wrap --list shows the wrapped ones)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			all, s, err := findServer(cmd, args[0], host)
			if err != nil {
				return err
			}
			ch, err := hosts.Unwrap(s)
			if err != nil {
				return refusal(cmd, err)
			}
			out, sel := cmd.OutOrStdout(), all.Selector(s)
			fmt.Fprintf(out, "unwrapped %s in %s: %s starts it directly again\n  %s\n", termsafe.Line(sel),
				termsafe.Line(tilde(ch.File)), hosts.Title(s.Host), termsafe.Line(hosts.ShowCommand(ch.Runs)))
			if !ch.Exact {
				fmt.Fprintln(out, "the entry changed since wrap (or wrap's backup is gone): its command and args came back from the wrapped entry, and the other changes stay")
			}
			fmt.Fprintf(out, "backup of the wrapped file: %s\nrestart %s (or reload its MCP servers) for the change to take effect\n",
				termsafe.Line(tilde(ch.Backup)), hosts.Title(s.Host))
			warn(cmd.ErrOrStderr(), ch.Warning)
			return nil
		},
	}
	cmd.Flags().StringVar(&host, "host", "", "the host whose entry to put back, when several have the name: "+strings.Join(hosts.Names, ", "))
	return cmd
}

// refusal makes what wrap and unwrap refused to do a usage error (exit 2):
// nothing changed, and the message says why.
func refusal(cmd *cobra.Command, err error) error {
	var r *hosts.RefusedError
	if errors.As(err, &r) {
		return usagef(cmd.CommandPath(), "%v", err)
	}
	return err
}

func warn(w io.Writer, msg string) {
	if msg != "" {
		fmt.Fprintf(w, "mcpscope: warning: %s\n", termsafe.Line(msg))
	}
}

// listWrapped shows the entries that run through mcpscope proxy, and the
// wraps recorded for entries that no longer do.
func listWrapped(cmd *cobra.Command, host string, asJSON bool) error {
	all, shown, err := loadHosts(cmd, host)
	if err != nil {
		return err
	}
	warnProblems(cmd.ErrOrStderr(), shown.Problems)
	var wrapped []hosts.Server
	for _, s := range shown.Servers {
		if s.Wrapped != nil {
			wrapped = append(wrapped, s)
		}
	}
	out := cmd.OutOrStdout()
	if asJSON {
		list := make([]serverJSON, 0, len(wrapped))
		for _, s := range wrapped {
			list = append(list, serverJSON{Selector: all.Selector(s), Server: s.Redacted(), CommandLine: s.CommandLine()})
		}
		stale := shown.StaleWraps
		if stale == nil {
			stale = []hosts.WrapRecord{}
		}
		return render.Line(out, map[string]any{"wrapped": list, "stale": stale})
	}
	if len(wrapped) == 0 {
		fmt.Fprintln(out, "no server runs through mcpscope proxy ('mcpscope wrap NAME' does that)")
	}
	for _, s := range wrapped {
		fmt.Fprintf(out, "%s  in %s\n  runs %s\n", termsafe.Line(all.Selector(s)), termsafe.Line(tilde(s.File)),
			termsafe.Line(hosts.ShowCommand(s.Wrapped.Inner)))
		if !s.Wrapped.At.IsZero() {
			fmt.Fprintf(out, "  wrapped %s, backup %s\n", s.Wrapped.At.Local().Format(time.DateTime), termsafe.Line(tilde(s.Wrapped.Backup)))
		}
	}
	for _, r := range shown.StaleWraps {
		fmt.Fprintf(out, "%s/%s  in %s\n  recorded as wrapped, but the entry no longer runs mcpscope proxy (the host may have rewritten it); backup %s\n",
			termsafe.Line(r.Host), termsafe.Line(r.Name), termsafe.Line(tilde(r.File)), termsafe.Line(tilde(r.Backup)))
	}
	return nil
}
