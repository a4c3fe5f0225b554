package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	journalsum "mcpscope/artifact/journals"
	"mcpscope/internal/render"
	"mcpscope/internal/termsafe"
	"mcpscope/journal"
)

func newJournalsCmd() *cobra.Command {
	var (
		asJSON bool
		dir    string
		limit  int
	)
	cmd := &cobra.Command{
		Use:   "journals",
		Short: "List the saved journals: when, target, era, calls, errors, size",
		Long: "journals lists the journals in mcpscope's journal directory ($XDG_STATE_HOME/mcpscope/journal), newest first: " +
			"when each session started, its target, its era, how many calls it made and how many ended in an error " +
			"(a JSON-RPC error, a tool's isError, or lost with the connection), and its size on disk with its index file " +
			"(FILE.idx beside it, which a session writes and rebuilds from the journal; delete both together).\n\n" +
			"Each journal is read once to count its calls; the counts are kept in $XDG_CACHE_HOME/mcpscope/journals.json, " +
			"so the next listing reads only the journals that changed. Open one with mcpscope open FILE, or summarise it " +
			"with mcpscope journal FILE.",
		GroupID: groupSessions,
		Example: "  mcpscope journals\n  mcpscope journals -n 5\n  mcpscope journals --json | jq -r 'select(.errors > 0) | .path'",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			all, err := journalsum.List(dir, journalsum.DefaultCache(), min(runtime.GOMAXPROCS(0), 4))
			if errors.Is(err, os.ErrNotExist) {
				fmt.Fprintf(cmd.ErrOrStderr(), "no journals yet: %s does not exist (every session writes one there)\n", tilde(dir))
				return nil
			}
			if err != nil {
				return fmt.Errorf("list journals in %s: %w", dir, err)
			}
			if limit > 0 && len(all) > limit {
				all = all[:limit]
			}
			out := cmd.OutOrStdout()
			if asJSON {
				for _, s := range all {
					if err := render.Line(out, s); err != nil {
						return err
					}
				}
				return nil
			}
			if len(all) == 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "no journals in %s\n", tilde(dir))
				return nil
			}
			tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', 0)
			fmt.Fprintln(tw, "STARTED\tERA\tCALLS\tERRORS\tSIZE\tTARGET\tFILE")
			for _, s := range all {
				started := "-"
				if t := s.Started; !t.IsZero() {
					started = t.Local().Format("2006-01-02 15:04:05")
				}
				era := s.Era
				if era == "" {
					era = "-"
				}
				target := termsafe.Line(s.Target)
				if s.Problem != "" {
					target += " (" + termsafe.Line(s.Problem) + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", started, era, s.Calls, s.Errors, size(s.Size+s.IndexSize),
					termsafe.Cut(target, 60), termsafe.Line(filepath.Base(s.Path)))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&dir, "dir", journal.DefaultDir(), "the directory to list")
	cmd.Flags().IntVarP(&limit, "limit", "n", 0, "list only the newest N (0 = all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per journal, for programs")
	return cmd
}

// size is n bytes for a person: 512 B, 3.4 KiB, 12.0 MiB, 1.2 GiB.
func size(n int64) string {
	const k = 1024
	switch {
	case n < k:
		return strconv.FormatInt(n, 10) + " B"
	case n < k*k:
		return strconv.FormatFloat(float64(n)/k, 'f', 1, 64) + " KiB"
	case n < k*k*k:
		return strconv.FormatFloat(float64(n)/(k*k), 'f', 1, 64) + " MiB"
	}
	return strconv.FormatFloat(float64(n)/(k*k*k), 'f', 1, 64) + " GiB"
}
