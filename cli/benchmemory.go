package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/bench"
)

// benchMemory runs the memory rows of mcpscope bench: `open` of journals
// of each size, the index on disk, the TUI under floods of each size, the
// journal readers over one huge line.
func benchMemory(cmd *cobra.Command, self, sizes, openSizes string, bigLineMiB int) error {
	ns, err := parseSizes(sizes)
	if err != nil {
		return usagef(cmd.CommandPath(), "--memory-sizes: %v", err)
	}
	opens := ns
	if openSizes != "" {
		if opens, err = parseSizes(openSizes); err != nil {
			return usagef(cmd.CommandPath(), "--memory-open-sizes: %v", err)
		}
	}
	dir, err := os.MkdirTemp("", "mcpscope-bench-memory-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	r, err := bench.Memory(bench.MemoryOptions{Self: self, OpenSizes: opens, TUISizes: ns, Dir: dir, BigLine: bigLineMiB << 20})
	if err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	bench.PrintMemory(cmd.OutOrStdout(), r)
	return nil
}

// newBenchOpenCmd measures what `open` holds once a journal is loaded and
// prints it on one line (bench's child: its RSS is its own).
func newBenchOpenCmd() *cobra.Command {
	var idle time.Duration
	cmd := &cobra.Command{
		Use:    "open FILE",
		Short:  "open's session and model over a journal, headless, measured once loaded (bench's child)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := bench.Open(args[0], idle)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), r.String())
			return nil
		},
	}
	cmd.Flags().DurationVar(&idle, "idle", 3*time.Second, "pull and draw this long after loading before measuring")
	return cmd
}

// newBenchAttachCmd is attach's session and model, headless, following the
// bench's proxy with process id --pid until it has seen --frames
// notifications; it prints its figures on one line (bench's child: its
// RSS is its own).
func newBenchAttachCmd() *cobra.Command {
	var (
		idle   time.Duration
		frames int
		pid    int
	)
	cmd := &cobra.Command{
		Use:    "attach",
		Short:  "attach's session and model on the bench's proxy, headless, measured once the flood is seen (bench's child)",
		Hidden: true,
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := bench.Attach(bench.ProxySocket(pid), frames, idle, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), r.String())
			return nil
		},
	}
	cmd.Flags().DurationVar(&idle, "idle", 3*time.Second, "pull and draw this long after the last notification before measuring")
	cmd.Flags().IntVar(&frames, "frames", 0, "notifications to wait for")
	cmd.Flags().IntVar(&pid, "pid", 0, "the proxy's process id")
	return cmd
}
