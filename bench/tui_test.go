package bench

import (
	"os"
	"testing"
	"time"
)

// TestMain lets the test binary be the flood server TUI spawns.
func TestMain(m *testing.M) {
	if os.Getenv("MCPSCOPE_BENCH_TEST_FLOOD") == "1" {
		if err := Serve(os.Stdin, os.Stdout, Flood{Burst: 3000, Rate: 2000, Paced: 2 * time.Second}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestTUIKeysThenFirstRow: after the key phase (which changes the shown
// kind and scrolls), the model still gets back to the first notification,
// as the bench's report claims; the keys it presses are real bindings.
func TestTUIKeysThenFirstRow(t *testing.T) {
	t.Setenv("MCPSCOPE_BENCH_TEST_FLOOD", "1")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r, err := TUI(TUIOptions{Server: []string{self}, Burst: 3000, KeyPhase: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r.Keys.Samples == 0 {
		t.Fatal("no key was pressed")
	}
	if !r.FirstRow {
		t.Fatal("scrolled to the top after the key phase, the pane does not show notification n 0")
	}
}
