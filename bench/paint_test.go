package bench

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// firstScreen is the start of what the demo inspector wrote to a 120×40
// terminal, as read back from one: the line before the TUI starts, the
// terminal queries, then the first frame (cursor moves, erases and colours
// between the words).
const firstScreen = "mcpscope: connecting…\r\n" +
	"\x1b[?2026$p\x1b[?2027$p\x1b]11;?\a\x1b[>4m\x1b[?1049h\x1b[?25l\x1b]2;mcpscope\a\x1b[H\x1b[2J" +
	"\x1b[38;5;231;48;5;239m mcpscope │ connected │ mcpscope-demo 1.0.0 │ calls 5 · running 3\x1b[K\x1b[m\r\n" +
	"\x1b[38;5;111;1m▌ Requests 5 · follow ────\x1b[m\r\n" +
	" 07:04:56 1     server/discover\x1b[27X\x1b[3;59H\x1b[38;5;114mok       \x1b[m     8ms\r\n" +
	"\x1b[38;5;231;48;5;238m▸07:04:56 5     prompts/list\x1b[30X\x1b[7;59Hok            8ms\x1b[K\x1b[m\r\x1b[19d" +
	"\x1b[38;5;243m  Notifications 2 · follow ────\x1b[m\r\n"

// TestPainted: the first screen is recognised once both pane titles have
// arrived, whatever chunks the terminal delivered it in, and not from the
// line printed before the TUI, a half-drawn screen or a title without its
// count.
func TestPainted(t *testing.T) {
	if !Painted([]byte(firstScreen)) {
		t.Fatal("the first screen is not recognised")
	}
	end := strings.Index(firstScreen, "  Notifications 2")
	for cut := 0; cut <= end+len("  Notifications "); cut++ {
		if Painted([]byte(firstScreen[:cut])) {
			t.Fatalf("recognised after %d bytes, before the second pane's title: %q", cut, firstScreen[:cut])
		}
	}
	for _, s := range []string{
		"mcpscope: connecting…\r\n",
		"\x1b[1mRequests\x1b[m \x1b[1mNotifications\x1b[m", // words without counts: help text, not titles
		"▌ Requests 5 · follow",                            // one pane
	} {
		if Painted([]byte(s)) {
			t.Errorf("recognised %q as a painted screen", s)
		}
	}
}

// TestMoved: a redraw after j is recognised by the selection's mark,
// whatever else it redraws; a redraw without the mark is not.
func TestMoved(t *testing.T) {
	redraw := "\r\x1b[3d 07:04:56 1     server/discover\x1b[27X\x1b[3;59H\x1b[38;5;114mok       \x1b[m     8ms\x1b[K\r\n" +
		"\x1b[38;5;231;48;5;238m▸07:04:56 2     tools/list\x1b[32X\x1b[4;59Hok            6ms\x1b[K\x1b[m"
	if !Moved([]byte(redraw)) {
		t.Fatal("the redrawn selection is not recognised")
	}
	if Moved([]byte(redraw[:strings.Index(redraw, "▸")])) {
		t.Fatal("recognised a redraw before the selection's row")
	}
}

// TestPaintRow: the first-paint row shows the median and the cost beyond
// --version, and is met exactly up to its goal.
func TestPaintRow(t *testing.T) {
	ms := time.Millisecond
	r := paintRow("first paint, open of 1M frames", []time.Duration{90 * ms, 40 * ms, 50 * ms}, []time.Duration{9 * ms, 7 * ms, 8 * ms}, 50*ms)
	for _, want := range []string{"50.0 ms exec to both panes drawn, median of 3", "--version exec to exit 8.0 ms", "costs 42.0 ms more"} {
		if !strings.Contains(r.Figure, want) {
			t.Errorf("figure %q lacks %q", r.Figure, want)
		}
	}
	if !r.Met || r.Goal != "≤ 50 ms" {
		t.Errorf("median 50 ms against ≤ 50 ms: goal %q, met %t", r.Goal, r.Met)
	}
	if r := paintRow("x", []time.Duration{51 * ms}, []time.Duration{ms}, 50*ms); r.Met {
		t.Errorf("51 ms against ≤ 50 ms is met: %+v", r)
	}
}

// TestKeyRow: the key row's goal is twice the model's p99 plus one frame,
// and its verdict follows the pty's p99 alone.
func TestKeyRow(t *testing.T) {
	ms := time.Millisecond
	model := Latency{P50: ms / 2, P99: 2 * ms, Samples: 100}
	r := keyRow("key to redraw through a pty, demo", Latency{P50: 8 * ms, P99: 21 * ms, Max: 90 * ms, Samples: 200}, model)
	if !r.Met || r.Goal != "p99 ≤ 2 × 2.00 + 17 = 21.00 ms" {
		t.Errorf("p99 21 ms against 2×2+17: goal %q, met %t", r.Goal, r.Met)
	}
	if !strings.Contains(r.Figure, "p50 8.00 ms p99 21.00 ms (200 presses)") || !strings.Contains(r.Figure, "in-process p50 0.50 ms p99 2.00 ms") {
		t.Errorf("figure %q", r.Figure)
	}
	over := keyRow("x", Latency{P99: 21*ms + time.Microsecond}, model)
	if over.Met {
		t.Errorf("p99 just over the goal is met: %+v", over)
	}
	var b strings.Builder
	PrintRows(&b, "paint", []Row{over, {Name: "y", Err: errors.New("no first screen")}})
	if out := b.String(); !strings.Contains(out, "goal p99 ≤ 2 × 2.00 + 17 = 21.00 ms: NOT met") || !strings.Contains(out, "y") || !strings.Contains(out, "failed: no first screen") {
		t.Errorf("printed:\n%s", out)
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{1_000_000: "1M", 10_000_000: "10M", 100_000: "100k", 1_500_000: "1500k", 1234: "1234"} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestPTYSession: a child in the pseudo-terminal sees a terminal of the
// rows' size, what it writes is read back until the screen is recognised,
// a key written reaches it, and stop ends it (it would wait for input
// for ever) and closes the terminal.
func TestPTYSession(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	script := `stty size; printf '\033[H▌ Requests 1 ·\r\n  Notifications 2\r\n'; IFS= read -r k; printf '▸%s\n' "$k"; exec cat`
	s, _, err := firstPaint([]string{sh, "-c", script}, ptyEnv(dir), dir)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip("no pseudo-terminal here")
	}
	if err != nil {
		if s != nil {
			s.stop()
		}
		t.Fatal(err)
	}
	if !strings.Contains(string(s.seen), "40 120") {
		t.Errorf("stty size did not say 40 120: %q", s.seen)
	}
	s.seen = s.seen[:0]
	if _, err := s.master.Write([]byte("j\r")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.wait(time.Minute, Moved); err != nil {
		t.Error(err)
	}
	s.stop()
	if s.cmd.ProcessState == nil {
		t.Fatal("stop returned before the child was reaped")
	}
	if _, err := s.master.Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
		t.Errorf("the terminal is still open after stop: write gave %v", err)
	}
}
