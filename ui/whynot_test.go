package ui

import (
	"strings"
	"testing"

	"mcpscope/session"
)

// Why a key cannot run now is read whole, at 80 columns and at 200 (issue
// 40: "…not now: a stdio server en…" even at 200): the flash wraps over
// the bottom lines, the help wraps the reason beneath the key's text.
func TestWhyNotReadWhole(t *testing.T) {
	const tail = "connect over HTTP to detach calls and rejoin them later"
	for _, sz := range []struct{ w, h int }{{80, 24}, {200, 60}} {
		f := stdioFake{newFake()}
		s := session.New(f, session.Options{Timeout: -1, MaxTimeout: -1})
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		m := newTestModel(t, s, sz.w, sz.h)
		m.info.Target = "stdio: demo-server --stdio"
		press(m, "detach-call")
		got := screen(m)
		if !strings.Contains(strings.Join(strings.Fields(got), " "), tail) {
			t.Fatalf("%dx%d: the flash is cut:\n%s", sz.w, sz.h, got)
		}
		checkSize(t, got, sz.w, sz.h)
		golden(t, "why-flash-"+itoa(sz.w)+"x"+itoa(sz.h), got)

		press(m, "help")
		const why = "not now: a stdio server ends with mcpscope, so no call can be left running on it"
		for i := 0; i < 10 && !strings.Contains(strings.Join(strings.Fields(screen(m)), " "), why); i++ {
			press(m, "page-down") // at 80x24 the requests' keys are further down
		}
		got = screen(m)
		if !strings.Contains(strings.Join(strings.Fields(got), " "), why) {
			t.Fatalf("%dx%d: the help's reason is cut:\n%s", sz.w, sz.h, got)
		}
		checkSize(t, got, sz.w, sz.h)
		golden(t, "why-help-"+itoa(sz.w)+"x"+itoa(sz.h), got)
	}
}
