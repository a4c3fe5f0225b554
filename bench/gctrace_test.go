package bench

import (
	"math"
	"testing"
	"time"
)

// The proxy row reads the proxy's own gctrace lines: each counts as a
// cycle with its live heap, split across writes as a pipe splits them;
// every other line is kept for the row's error message.
func TestGCTraceCountsCyclesAndKeepsTheRest(t *testing.T) {
	g := newGCTrace()
	if g.waitCycleAfter(0, time.Millisecond) {
		t.Fatal("a cycle before any was reported")
	}
	g.Write([]byte("mcpscope: proxy listening\ngc 1 @0.010s 2%: 0.015+0.40+0.003 ms clock, 0.031+0.15/0.31/0.12+0.007 ms cpu, 4->4->0 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P\n"))
	g.Write([]byte("gc 2 @121.5s 0%: 0.02+1.1+0.01 ms clock, 0.04+0/0.5/1.0+0.02 ms cpu, 40->42->"))
	if n := g.cycles(); n != 1 {
		t.Fatalf("cycles after one whole line and half of another: %d, want 1", n)
	}
	g.Write([]byte("21 MB, 43 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)\nthe server exited\n"))
	if !g.waitCycleAfter(1, time.Minute) || g.cycles() != 2 {
		t.Fatalf("cycles: %d, want 2", g.cycles())
	}
	if want := 21e6 / (1 << 20); math.Abs(g.liveMiB()-want) > 1e-9 {
		t.Fatalf("live heap %.3f MiB, want %.3f (the latest cycle's 21 MB)", g.liveMiB(), want)
	}
	if got := g.String(); got != "mcpscope: proxy listening\nthe server exited\n" {
		t.Fatalf("the rest of stderr: %q", got)
	}
}

// settledRSS reads both figures of a real process, its own part never
// more than the whole; flat is what ends its sampling.
func TestSettledRSS(t *testing.T) {
	rss, anon := settledRSS("/proc/self/status")
	if rss <= 0 || anon <= 0 || anon > rss {
		t.Fatalf("settled RSS %d KiB, anon %d KiB", rss, anon)
	}
	if !flat([]int64{1000, 1005, 1002, 1000, 1009}) || flat([]int64{1000, 1000, 1000, 1000, 1020}) {
		t.Fatal("flat does not tell samples within 1 % from ones that are not")
	}
}
