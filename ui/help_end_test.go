package ui

import (
	"fmt"
	"strings"
	"testing"
)

// The help stops at its last line: scrolling on shows the mouse section's
// last line at the bottom, never a blank page (issue 40, item 7).
func TestGoldenHelpStopsAtEnd(t *testing.T) {
	for _, sz := range [][2]int{{60, 20}, {80, 24}, {120, 40}} {
		w, h := sz[0], sz[1]
		name := fmt.Sprintf("help-end-%dx%d", w, h)
		t.Run(name, func(t *testing.T) {
			m := newTestModel(t, loadFixture(t), w, h)
			press(m, "help")
			_ = screen(m)
			for range 60 {
				press(m, "page-down")
			}
			got := screen(m)
			checkSize(t, got, w, h)
			golden(t, name, got)
			// The rows above the footer end with the help's last line
			// (wrapped to two rows at 60 columns).
			ls := strings.Split(got, "\n")
			end := strings.Join(ls[len(ls)-3:len(ls)-1], "\n")
			if !strings.Contains(end, "shift+drag") || strings.TrimSpace(ls[len(ls)-2]) == "" {
				t.Errorf("the last rows are %q, want the help's last line (shift+drag):\n%s", end, got)
			}
			press(m, "up")
			if ls := strings.Split(screen(m), "\n"); strings.Contains(ls[len(ls)-2], "terminals") {
				t.Errorf("up from the end did not scroll back one row:\n%s", screen(m))
			}
		})
	}
}
