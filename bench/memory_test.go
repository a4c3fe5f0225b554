package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcpscope/journal"
	"mcpscope/testkit/testservers"
	"mcpscope/transport"
)

// The memory rows' parts, tiny: the generator writes journals open reads
// whole, the open measurement leaves the index beside the journal, and
// the report says each row's goal and whether it is met.
func TestMemoryRowsTiny(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	var res MemoryResult
	for _, http := range []bool{true, false} {
		path := filepath.Join(dir, map[bool]string{true: "http", false: "stdio"}[http]+".jsonl")
		if err := WriteJournal(path, 5000, http); err != nil {
			t.Fatal(err)
		}
		var frames int
		if _, err := journal.Read(mustOpen(t, path), func(uint64, transport.Frame) error { frames++; return nil }); err != nil {
			t.Fatalf("the generated journal does not read back: %v", err)
		}
		if frames < 5000 {
			t.Fatalf("the generator wrote %d frames, want at least 5000", frames)
		}
		r, err := Open(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		if r.Frames != frames || r.RSSKiB <= 0 {
			t.Fatalf("open measured %+v of a %d-frame journal", r, frames)
		}
		if back, err := ParseOpen(r.String()); err != nil || back.Frames != r.Frames || back.RSSKiB != r.RSSKiB {
			t.Fatalf("the child's line does not read back: %+v, %v", back, err)
		}
		if got, want := journal.IndexSize(path), int64(64+frames*journal.IndexRecord); got != want {
			t.Fatalf("index beside the journal: %d bytes, want %d", got, want)
		}
		res.Open = append(res.Open, OpenRow{Frames: frames, HTTP: http, IndexSize: journal.IndexSize(path), Open: r})
	}
	// The verdict reads the peak: the two rows' are set (the test's own
	// process, -race and all, is not what is measured for real).
	res.Open[0].Open.PeakRSSKiB, res.Open[1].Open.PeakRSSKiB = 100<<10, 200<<10
	// A larger stdio journal: the flat row compares it with the first.
	big := res.Open[1]
	big.Open.Frames, big.Open.PeakRSSKiB, big.Open.RSSKiB = 10*big.Open.Frames, 210<<10, big.Open.RSSKiB+(1<<10)
	res.Open = append(res.Open, big)
	res.TUI = []TUIResult{{Frames: 1000, RSSAfterKiB: 100 << 10}, {Frames: 10000, RSSAfterKiB: 130 << 10}}
	var out bytes.Buffer
	PrintMemory(&out, res)
	for _, want := range []string{"open, ", "HTTP journal", "stdio journal", "peak 100.0 MiB", "goal peak ≤ 150 MB   met", "peak 200.0 MiB", "goal peak ≤ 150 MB   NOT MET", "64.0 MB per million frames",
		"+30.0 % from 1000   goal within 10 % and ≤ 200 MB   NOT MET",
		fmt.Sprintf("open, stdio journals from %d to %d frames: peak +5.0 %%, held +1.0 MiB", res.Open[1].Open.Frames, big.Open.Frames),
		"goal flat, peak within 10 %   met"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("the report lacks %q:\n%s", want, out.String())
		}
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// The proxy-with-a-viewer rows, tiny and for real: mcpscope proxy over the
// flood server, this test its host, a headless attach following it; the
// viewer reports only once it has seen every notification, and both rows
// print with the flat goal and a verdict.
func TestProxyAttachRowsTiny(t *testing.T) {
	bin := testservers.BuildMCPScope(t)
	dir := t.TempDir()
	var res MemoryResult
	for _, n := range []int{2000, 4000} {
		p, err := ProxyAttach(bin, n, dir, "0s", 0)
		if err != nil {
			t.Fatal(err)
		}
		if p.Frames != n || p.Attach.Frames < n || p.RSSKiB <= 0 || p.AnonKiB <= 0 || p.AnonKiB > p.RSSKiB || p.Attach.RSSKiB <= 0 {
			t.Fatalf("at %d: measured %+v", n, p)
		}
		res.Proxy = append(res.Proxy, p)
	}
	res.Proxy = append(res.Proxy, ProxyResult{Frames: 8000, Err: errors.New("the proxy ended (the socket broke)")})
	var out bytes.Buffer
	PrintMemory(&out, res)
	for _, want := range []string{"proxy carrying a 8000-notification flood, a viewer attached: failed: the proxy ended (the socket broke)   goal within 10 % and ≤ 200 MB   NOT MET",
		"proxy carrying a 2000-notification flood, a viewer attached: RSS ", "attach following it, all 2000 seen: RSS ",
		"proxy carrying a 4000-notification flood", "attach following it, all 4000 seen"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("the report lacks %q:\n%s", want, out.String())
		}
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, " 4000") && !strings.Contains(l, "from 2000   goal within 10 % and ≤ 200 MB   ") {
			t.Fatalf("the larger size's row lacks its growth, goal and verdict: %s", l)
		}
	}
}

// The big-line rows, at a small line: every reader runs over the journal
// of one huge line (as a result and as a request), its peak is measured,
// and the report holds it to 1.5 × the line + the allowance.
func TestBigLineRowsSmall(t *testing.T) {
	if !exists(timeBin) {
		t.Skip(timeBin + " is not installed: no peak to read") // bench says NOT MET then
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	self := testservers.BuildMCPScope(t)
	rows, err := BigLine(self, t.TempDir(), nil, 4<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Request || !rows[1].Request {
		t.Fatalf("rows %+v; want a result and a request", rows)
	}
	for _, r := range rows {
		if len(r.Peaks) != len(BigLineReaders("j", "o")) {
			t.Fatalf("peaks %+v", r.Peaks)
		}
		for _, p := range r.Peaks {
			if p.KiB <= 0 {
				t.Fatalf("%s: no peak measured", p.Name)
			}
		}
	}
	var out bytes.Buffer
	printBigLine(&out, rows)
	if n := strings.Count(out.String(), "goal ≤ 1.5 × the line + 64 MiB = 70 MiB   met"); n != 2 {
		t.Fatalf("the report does not hold both rows to the goal:\n%s", out.String())
	}
	rows[1].Peaks[4].KiB = 71 << 10 // diff over the limit
	out.Reset()
	printBigLine(&out, rows)
	if !strings.Contains(out.String(), "diff 71   goal ≤ 1.5 × the line + 64 MiB = 70 MiB   NOT MET") {
		t.Fatalf("a peak over the goal is not NOT MET:\n%s", out.String())
	}
}
