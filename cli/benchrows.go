package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/spf13/cobra"

	"mcpscope/bench"
	"mcpscope/internal/httpserve"
)

// rowOptions size the sections of goal rows (journal, record, proxy).
type rowOptions struct {
	frames int // journal and record rows: frames in the journal, notifications in the flood
	pings  int // proxy rows: sequential pings
	rounds int // paired rounds of each measurement (the median is shown)
}

// runRowSections runs the goal-row sections asked for, in order.
func runRowSections(out io.Writer, self string, sections map[string]bool, o rowOptions) error {
	if sections["journal"] {
		rows, err := bench.ReadBack(self, o.frames, o.rounds)
		if err != nil {
			return fmt.Errorf("journal read-back: %w", err)
		}
		bench.PrintRows(out, fmt.Sprintf("reading journals back, %d frames (scripts/bigjournal's, no index file beside them), CPU time, median of %d paired rounds", o.frames, o.rounds), rows)
	}
	if sections["record"] {
		bench.PrintRows(out, fmt.Sprintf("record against a minimal client reading the same flood server, wall time, median of %d paired rounds", o.rounds),
			[]bench.Row{bench.RecordFloor(self, o.frames, o.rounds)})
	}
	if sections["proxy"] {
		bench.PrintRows(out, fmt.Sprintf("mcpscope proxy --listen (journaling) against the same server direct, median of %d paired rounds", o.rounds),
			bench.ProxyOverhead(self, o.pings, o.frames, o.rounds))
	}
	return nil
}

// newBenchCountCmd is one of the read-back rows' Go baselines: count
// what count counts in FILE, print it, nothing else. Lines: the line
// loop; strings: the same loop finding each line's JSON strings too.
func newBenchCountCmd(use, short string, count func(path string) (int, error)) *cobra.Command {
	return &cobra.Command{
		Use:    use + " FILE",
		Short:  short,
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := count(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), n)
			return nil
		},
	}
}

// newBenchDrainCmd is the floor client of the record row.
func newBenchDrainCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "drain -- CMD [ARGS...]",
		Short:  "Spawn a stdio server, initialize, read, decode and print everything it writes (bench's minimal client)",
		Hidden: true,
		Args:   cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			defer bench.ReportSelfCPU("drain")
			_, err := bench.Drain(args, cmd.OutOrStdout())
			return err
		},
	}
}

// newBenchPongCmd is the proxy rows' upstream: a server of its own.
func newBenchPongCmd() *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:    "pong --listen HOST:PORT",
		Short:  "Answer every HTTP request with a ping's result (the upstream of bench's proxy rows)",
		Hidden: true,
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if listen == "" {
				return usagef(cmd.CommandPath(), "--listen HOST:PORT is required")
			}
			return bench.PingServer(cmd.Context(), listen)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "serve on HOST:PORT")
	return cmd
}

// newBenchRelayCmd is the proxy rows' yardsticks: bytes through, nothing
// else, over TCP (--listen) or a spawned server's stdio; with --http a Go
// HTTP relay (a second exchange, no journal); with --tee the stdio relay
// also writes the server's bytes to a file, with --journal every line each
// way (every request and answer, with --http) as the journal's record of it.
func newBenchRelayCmd() *cobra.Command {
	var listen, tee, records string
	var isHTTP bool
	cmd := &cobra.Command{
		Use:    "relay (--listen HOST:PORT UPSTREAM_HOST:PORT | --http [--journal FILE] --listen HOST:PORT UPSTREAM_ORIGIN | [--tee FILE | --journal FILE] -- CMD [ARGS...])",
		Short:  "Pass bytes between a client and a server and do nothing else (bench's yardstick for the proxy)",
		Hidden: true,
		Args:   cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			defer oneP()()  // as the proxy runs
			var j io.Writer // --journal's file, for either relay
			if records != "" {
				f, err := os.Create(records)
				if err != nil {
					return err
				}
				defer f.Close()
				j = f
			}
			if listen == "" && j != nil {
				return bench.RelayStdioJournal(args, os.Stdin, os.Stdout, os.Stderr, j)
			}
			if listen == "" {
				var out io.Writer = os.Stdout
				if tee != "" {
					f, err := os.Create(tee)
					if err != nil {
						return err
					}
					defer f.Close()
					out = io.MultiWriter(os.Stdout, f)
				}
				return bench.RelayStdio(args, os.Stdin, out, os.Stderr)
			}
			if len(args) != 1 {
				return usagef(cmd.CommandPath(), "--listen takes one upstream, got %d arguments", len(args))
			}
			if isHTTP {
				h := bench.HTTPRelay(args[0], j)
				err := httpserve.Serve(cmd.Context(), listen, "/", h, nil, nil)
				if cerr := h.Close(); err == nil {
					err = cerr
				}
				return err
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			// Main ends the context on SIGTERM, which is how the bench
			// stops its children: RelayTCP returns once ln is closed.
			context.AfterFunc(cmd.Context(), func() { ln.Close() })
			return bench.RelayTCP(ln, args[0])
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "relay TCP connections accepted on HOST:PORT to the upstream HOST:PORT")
	cmd.Flags().BoolVar(&isHTTP, "http", false, "relay HTTP requests to the upstream origin (http://HOST:PORT) through net/http")
	cmd.Flags().StringVar(&tee, "tee", "", "also write the server's output to FILE")
	cmd.Flags().StringVar(&records, "journal", "", "also write every line each way (with --http, every request and answer) to FILE as a journal record")
	cmd.MarkFlagsMutuallyExclusive("tee", "journal")
	return cmd
}

// paintTitle heads the paint rows, the load they ran under beside them.
func paintTitle(runs, frames int) string {
	return fmt.Sprintf("the inspector in a %d×%d pseudo-terminal, the real binary (%d starts of each, a %d-frame HTTP journal for open; load average %s)",
		bench.PTYCols, bench.PTYRows, runs, frames, bench.LoadAverage())
}
