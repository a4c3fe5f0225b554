package bench

import (
	"fmt"
	"io"
	"strings"
	"time"
)

func mib(kib int64) float64 { return float64(kib) / 1024 }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// PrintScales prints the whole-process figures of each size side by side.
func PrintScales(w io.Writer, scales []Scale) {
	fmt.Fprintf(w, "\nwhole processes under a flood of N notifications (peak RSS: /usr/bin/time %%M of record and journal, VmHWM of the TUI child)\n")
	fmt.Fprintf(w, "  %9s │ %-24s │ %-32s │ %s\n", "N", "record -- flood server", "journal FILE (read back)", "TUI model (session, journal, store, panes)")
	fmt.Fprintf(w, "  %9s │ %9s %14s │ %9s %9s %12s │ %8s %9s %9s %9s %8s %s\n", "", "time", "peak RSS", "time", "frames", "peak RSS",
		"burst", "peak RSS", "at end", "+idle", "heap", "top row")
	for _, s := range scales {
		fmt.Fprintf(w, "  %9d │ %8.2fs %10.1f MiB │ %8.2fs %9d %8.1f MiB │ %7.2fs %5.1f MiB %5.1f MiB %5.1f MiB %4.1f MiB %s\n",
			s.Frames, s.Record.Wall.Seconds(), mib(s.Record.PeakRSSKiB), s.ReadBack.Wall.Seconds(), s.Read, mib(s.ReadBack.PeakRSSKiB),
			s.TUI.BurstSeconds, mib(s.TUI.PeakRSSKiB), mib(s.TUI.RSSEndKiB), mib(s.TUI.RSSAfterKiB), s.TUI.HeapMiB, firstRowWord(s.TUI.FirstRow))
	}
	for _, s := range scales {
		if k := s.TUI.Keys; k.Samples > 0 {
			fmt.Fprintf(w, "\nkey latency, TUI model with %d frames under a %.0f notifications/s flood (%d presses, the wait behind a store wake-up counted)\n",
				s.TUI.Frames, s.TUI.PacedRate, k.Samples)
			fmt.Fprintf(w, "  p50 %.2f ms   p99 %.2f ms   max %.2f ms\n", ms(k.P50), ms(k.P99), ms(k.Max))
		}
	}
}

func firstRowWord(ok bool) string {
	if ok {
		return "n 0 ✓"
	}
	return "NOT the first frame"
}

// PrintOneShot prints the one-shot comparison with its ratios.
func PrintOneShot(w io.Writer, server string, cs []Client, runs int) {
	also := ""
	for _, c := range cs {
		if c.Transport == "stdio-go" {
			also = " (stdio-go: mcpscope's demo server, which exits as soon as its stdin closes)"
			break
		}
	}
	fmt.Fprintf(w, "\none-shot tools/list against %s%s, whole processes, median of %d runs after a warm-up run each;\n", server, also, runs)
	fmt.Fprintf(w, "peak RSS is the client's, or its server's when that is bigger (/usr/bin/time counts the children it waited for)\n")
	base := map[string]Client{}
	for _, c := range cs {
		if c.Name == "mcpscope tools" {
			base[c.Transport] = c
		}
	}
	for _, c := range cs {
		if c.Err != nil {
			fmt.Fprintf(w, "  %-8s %-46s failed: %v\n", c.Transport, c.Name, c.Err)
			continue
		}
		line := fmt.Sprintf("  %-8s %-46s %8.1f ms %8.1f MiB", c.Transport, c.Name, ms(c.Median), mib(c.PeakRSS))
		if b, ok := base[c.Transport]; ok && c.Name != b.Name && b.Err == nil && c.Median > 0 {
			ratio := b.Median.Seconds() / c.Median.Seconds()
			line += fmt.Sprintf("   mcpscope takes %.2f× its time, %.2f× its peak RSS", ratio, float64(b.PeakRSS)/float64(c.PeakRSS))
			if c.Transport == "http" && strings.HasPrefix(c.Name, "minimal Go client") {
				line += "   goal ≤ 1.5×: " + map[bool]string{true: "met", false: "NOT met"}[ratio <= 1.5]
			}
		}
		fmt.Fprintln(w, line)
	}
}
