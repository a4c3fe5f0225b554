package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"mcpscope/internal/bench"
)

func newBenchCmd() *cobra.Command {
	var count int
	cmd := &cobra.Command{
		Use:     "bench",
		Short:   "Measure ingest speed and memory beside a bare decode loop in the same run",
		GroupID: groupServers,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if count <= 0 {
				return usagef(cmd.CommandPath(), "--count takes a positive number, got %d", count)
			}
			dir, err := os.MkdirTemp("", "mcpscope-bench-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			r, err := bench.Run(count, dir)
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), r.String())
			return nil
		},
	}
	cmd.Flags().IntVar(&count, "count", 200_000, "how many notifications to ingest")
	return cmd
}
