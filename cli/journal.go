package cli

import (
	"fmt"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/internal/termsafe"
	"mcpscope/session"
)

func newJournalCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "journal FILE",
		Short:   "Summarise a journal file",
		GroupID: groupSessions,
		Example: "  mcpscope journal ~/.local/state/mcpscope/journal/20261123-101500.000-4242.jsonl",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef(cmd.CommandPath(), "journal needs one file path")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			out, path := cmd.OutOrStdout(), args[0]
			s, h, err := session.Load(path)
			if err != nil && s == nil {
				return err
			}
			in := s.Info()
			fmt.Fprintf(out, "journal %s\ntarget  %s\nstarted %s\nframes  %d\n", path, termsafe.Line(h.Target),
				h.Started.Format(time.RFC3339), s.Store().Len())
			kinds := map[string]int{}
			for _, it := range s.Store().Since(0, 0) {
				kinds[it.Frame.Dir.String()+" "+it.Frame.Kind.String()]++
			}
			keys := make([]string, 0, len(kinds))
			for k := range kinds {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(out, "  %-16s %d\n", k, kinds[k])
			}
			fmt.Fprintf(out, "server  %s %s (protocol %s)\ncalls   %d\n", termsafe.Line(in.ServerInfo.Name),
				termsafe.Line(in.ServerInfo.Version), termsafe.Line(in.ProtocolVersion), in.Calls)
			for _, c := range s.Calls() {
				sn := c.Snapshot()
				fmt.Fprintf(out, "  #%-5s %-28s %-10s %s\n", termsafe.Line(sn.Key), termsafe.Line(sn.Method+" "+sn.Name), sn.State,
					sn.Duration(sn.Started).Round(time.Millisecond))
			}
			return err
		},
	}
}
