package cli

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/bench"
)

func newBenchCmd() *cobra.Command {
	var (
		count int
		sizes string
		keys  time.Duration
		runs  int
		only  string
		mem   string
		memO  string
		big   int
		rows  rowOptions

		presses int
		starts  int
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure ingest, memory at scale, key latency and one-shot speed, each beside a baseline from the same run",
		Long: "Measure mcpscope, printing figures (never asserting them), each beside a baseline measured in the same run.\n\n" +
			"ingest: notifications through a real pipe, journal and store, against a bare decode loop over the same bytes.\n\n" +
			"at N frames: whole processes under a flood of N notifications (--sizes): mcpscope record, mcpscope journal of " +
			"what it wrote, and the TUI model (session, journal, store and panes, headless): time and peak RSS, RSS when the " +
			"flood ends and after an idle spell, whether scrolling back reaches the first frame.\n\n" +
			"key latency: p50/p99/max key-to-frame time in the TUI model at the largest N under a 10,000/s flood (--keys).\n\n" +
			"one-shot: tools/list, whole processes: mcpscope beside raw curl and a minimal stdio client, and beside the " +
			"official Inspector CLI when MCPSCOPE_PEERS (node_modules with server-everything and the Inspector) and NODE22 " +
			"(a Node 22 binary) are set.\n\n" +
			"memory: mcpscope open of HTTP and stdio journals of each --memory-sizes frames (RSS once loaded and the peak, goal: peak ≤ 150 MB), " +
			"the index file on disk per million frames, the TUI model after a flood of each size, and a stdio proxy carrying " +
			"a flood of each size with a headless attach following it (proxy and attach RSS; goal: within 10 % from " +
			"the smallest to the largest, ≤ 200 MB; the proxy is measured after a GC cycle it reports once the viewer has " +
			"seen the flood, up to two minutes).\n\n" +
			"journal: mcpscope journal, export --format har/otlp/jsonl, journal --filter and diff on --frames-frame HTTP and " +
			"stdio journals (scripts/bigjournal's), CPU time against a Go loop that only splits lines and a Python json.loads " +
			"loop (when python3 is on PATH), and the same Go loop finding every line's JSON strings and nothing else, the " +
			"least a reader that reads a record member by member does (journal's goal, a stretch: ≥ 35 % of its speed).\n\n" +
			"record: mcpscope record of a flood of --frames notifications against a minimal client reading the same server.\n\n" +
			"proxy: --pings sequential pings over HTTP through mcpscope proxy --listen against the same server direct, the " +
			"server a process of its own, interleaved in each round with a bare TCP relay (bytes through, nothing else: the " +
			"extra hop alone) and a Go HTTP relay (net/http's second exchange, no journal: the floor of any Go proxy that " +
			"speaks HTTP) and that relay writing each request and answer as the journal's records; the time each request " +
			"adds over each and the proxy's CPU a request beside the HTTP relays'. " +
			"throughput: a flood of --frames notifications through mcpscope proxy over stdio against the same flood direct, " +
			"both read by the minimal client, beside a stdio relay that also writes the bytes to a file and one that writes " +
			"every line as the journal's record, wall time and CPU.\n\n" +
			"paint: the real binary in a 120×40 pseudo-terminal: exec to the first painted screen of the demo inspector " +
			"(goal ≤ 100 ms) and of mcpscope open on a --frames-frame journal (goal ≤ 300 ms), median of --runs, beside " +
			"mcpscope --version's exec to exit; key latency read back from the terminal (j and k in turn, --key-presses " +
			"each) beside the TUI model's own in-process (bench tui), goal p99 ≤ 2× the model's p99 + 17 ms (one " +
			"60 fps frame). Linux only.\n\n" +
			"startup: mcpscope --version (this binary) against a hello-world cobra binary built with the go on PATH, " +
			"--starts interleaved starts of each: median CPU (user+sys) and wall time, goal CPU ≤ 1.5× hello cobra's; " +
			"against the dependencies' floor, the same hello world blank-importing every package this binary links " +
			"code from (read off its symbol table) but none of mcpscope's own, started in the same rounds: the part of " +
			"the start-up only dropping a dependency could lower (goal ≤ 1.5× the floor); this binary's size, goal ≤ 30 MB.\n\n" +
			"Each row of memory, journal, record, proxy, paint and startup prints its goal and whether it is met.",
		GroupID: groupServers,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if count <= 0 {
				return usagef(cmd.CommandPath(), "--count takes a positive number, got %d", count)
			}
			if rows.frames <= 0 || rows.pings <= 0 || rows.rounds <= 0 {
				return usagef(cmd.CommandPath(), "--frames, --pings and --rounds take positive numbers, got %d, %d and %d", rows.frames, rows.pings, rows.rounds)
			}
			ns, err := parseSizes(sizes)
			if err != nil {
				return usagef(cmd.CommandPath(), "--sizes: %v", err)
			}
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("find the mcpscope binary to run as a child: %w", err)
			}
			sections := map[string]bool{}
			for _, s := range strings.Split(only, ",") {
				if s = strings.TrimSpace(s); !benchSections[s] {
					return usagef(cmd.CommandPath(), "--only takes ingest, scale, memory, oneshot, journal, record, proxy, paint and startup (comma-separated), got %q", s)
				}
				sections[s] = true
			}
			out := cmd.OutOrStdout()
			if sections["ingest"] {
				dir, err := os.MkdirTemp("", "mcpscope-bench-")
				if err != nil {
					return err
				}
				r, err := bench.Run(count, 3, dir)
				os.RemoveAll(dir)
				if err != nil {
					return err
				}
				fmt.Fprint(out, r.String())
			}
			if sections["scale"] {
				var scales []bench.Scale
				for i, n := range ns {
					k := time.Duration(0)
					if i == len(ns)-1 {
						k = keys
					}
					sc, err := bench.Measure(self, n, k)
					if err != nil {
						return fmt.Errorf("at %d frames: %w", n, err)
					}
					scales = append(scales, sc)
				}
				bench.PrintScales(out, scales)
			}
			if sections["memory"] {
				if err := benchMemory(cmd, self, mem, memO, big); err != nil {
					return err
				}
			}
			if sections["oneshot"] {
				cs, server, err := bench.OneShot(bench.OneShotOptions{Self: self, Node: os.Getenv("NODE22"), Peers: os.Getenv("MCPSCOPE_PEERS"), Runs: runs})
				if err != nil {
					return fmt.Errorf("one-shot: %w", err)
				}
				bench.PrintOneShot(out, server, cs, runs)
			}
			if sections["paint"] {
				bench.PrintRows(out, paintTitle(runs, rows.frames), bench.Paint(bench.PaintOptions{Self: self, Runs: runs, Frames: rows.frames, Keys: presses}))
			}
			if sections["startup"] {
				goCmd, _ := exec.LookPath("go") // none: the row says the baseline needs Go
				bench.PrintRows(out, bench.StartupTitle(starts), bench.Startup(bench.StartupOptions{Self: self, Runs: starts, Go: goCmd}))
			}
			return runRowSections(out, self, sections, rows)
		},
	}
	cmd.Flags().IntVar(&rows.frames, "frames", 1_000_000, "frames in the journals the journal rows read, notifications in the floods of the record and proxy throughput rows")
	cmd.Flags().IntVar(&rows.pings, "pings", 1000, "sequential pings of the proxy rows")
	cmd.Flags().IntVar(&rows.rounds, "rounds", 3, "paired rounds of each journal, record and proxy measurement (the median is shown)")
	cmd.Flags().IntVar(&count, "count", 200_000, "how many notifications to ingest beside the decode loop")
	cmd.Flags().StringVar(&sizes, "sizes", "10000,100000,1000000", "flood sizes for the whole-process figures, comma-separated")
	cmd.Flags().DurationVar(&keys, "keys", 10*time.Second, "how long to press keys under the paced flood at the largest size (0: not at all)")
	cmd.Flags().IntVar(&runs, "runs", 11, "runs of each one-shot client and starts of each inspector of the paint rows (the median is shown)")
	cmd.Flags().StringVar(&only, "only", "ingest, scale, memory, oneshot, journal, record, proxy, paint, startup", "the sections to run, comma-separated")
	cmd.Flags().IntVar(&starts, "starts", 21, "starts of mcpscope --version, the hello cobra binary and the dependencies' floor in the startup rows, interleaved (the median is shown)")
	cmd.Flags().IntVar(&presses, "key-presses", 200, "keys pressed through the pseudo-terminal of the paint rows, each inspector")
	cmd.Flags().StringVar(&mem, "memory-sizes", "1000000,10000000", "journal and flood sizes for the memory rows, comma-separated, smallest first")
	cmd.Flags().StringVar(&memO, "memory-open-sizes", "", "journal sizes for the open rows when not --memory-sizes")
	cmd.Flags().IntVar(&big, "memory-big-line", 300, "size in MiB of the one huge line the journal, export and diff rows read (0: no such rows)")
	cmd.AddCommand(newBenchServeCmd(), newBenchTUICmd(), newBenchExchangeCmd(), newBenchOpenCmd(), newBenchAttachCmd(), newBenchCountCmd("lines", "Count a file's lines (bench's Go baseline)", bench.CountLines),
		newBenchCountCmd("strings", "Count the JSON strings of a file's lines (bench's floor under a journal reader)", bench.CountStrings),
		newBenchDrainCmd(), newBenchRelayCmd(), newBenchPongCmd())
	return cmd
}

// benchSections are what --only takes.
var benchSections = map[string]bool{"ingest": true, "scale": true, "oneshot": true, "memory": true, "journal": true, "record": true, "proxy": true,
	"paint": true, "startup": true}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// newBenchServeCmd is the flood server the bench runs as a child.
func newBenchServeCmd() *cobra.Command {
	var f bench.Flood
	cmd := &cobra.Command{
		Use:    "serve",
		Short:  "A stdio MCP server that floods its client with notifications (bench's child)",
		Hidden: true,
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			defer bench.ReportSelfCPU("serve")
			return bench.Serve(cmd.InOrStdin(), cmd.OutOrStdout(), f)
		},
	}
	cmd.Flags().IntVar(&f.Burst, "burst", 100_000, "notifications sent as fast as possible after initialized")
	cmd.Flags().IntVar(&f.Rate, "rate", 0, "then this many a second")
	cmd.Flags().DurationVar(&f.Paced, "for", 0, "for this long")
	cmd.Flags().BoolVar(&f.Exit, "exit", false, "exit when the flood is sent")
	return cmd
}

// newBenchTUICmd runs the TUI model under a flood and prints its figures
// on one line (bench's child: its peak RSS is its own).
func newBenchTUICmd() *cobra.Command {
	var (
		o    bench.TUIOptions
		keys time.Duration
	)
	cmd := &cobra.Command{
		Use:    "tui",
		Short:  "The TUI model under a flood, headless (bench's child)",
		Hidden: true,
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			self, err := os.Executable()
			if err != nil {
				return err
			}
			o.KeyPhase, o.IdleAfter = keys, 3*time.Second
			o.Server = []string{self, "bench", "serve", "--burst", strconv.Itoa(o.Burst)}
			if o.Rate > 0 && keys > 0 {
				o.Server = append(o.Server, "--rate", strconv.Itoa(o.Rate), "--for", keys.String())
			}
			r, err := bench.TUI(o)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), r.String())
			return nil
		},
	}
	cmd.Flags().IntVar(&o.Burst, "burst", 100_000, "notifications in the burst")
	cmd.Flags().IntVar(&o.Rate, "rate", 0, "notifications a second while keys are pressed")
	cmd.Flags().DurationVar(&keys, "keys", 0, "press keys for this long under the paced flood")
	return cmd
}

// newBenchExchangeCmd is the minimal stdio client the one-shot figures
// compare mcpscope with.
func newBenchExchangeCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "exchange {URL | -- CMD [ARGS...]}",
		Short:  "Initialize, tools/list and end, over Streamable HTTP or a spawned stdio server (bench's baseline client)",
		Hidden: true,
		Args:   cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && cmd.ArgsLenAtDash() != 0 && (strings.HasPrefix(args[0], "http://") || strings.HasPrefix(args[0], "https://")) {
				return bench.ExchangeHTTP(args[0], cmd.OutOrStdout())
			}
			return bench.Exchange(args, cmd.OutOrStdout())
		},
	}
}
