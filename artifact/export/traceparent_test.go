package export

import "testing"

// TestOTLPTraceParent: only a well-formed W3C traceparent joins the host's
// trace; anything else leaves the span in the journal's own trace.
func TestOTLPTraceParent(t *testing.T) {
	for _, c := range []struct {
		in            string
		trace, parent string
	}{
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"},
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-later", "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", "", ""},
		{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "", ""},
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", "", ""},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "", ""},
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "", ""},
		{"00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01", "", ""},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1", "", ""},
		{"", "", ""},
		{"\x1b]8;;x\x07-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "", ""},
	} {
		trace, parent, ok := parseTraceParent(c.in)
		if trace != c.trace || parent != c.parent || ok != (c.trace != "") {
			t.Errorf("%q: %q %q %v, want %q %q", c.in, trace, parent, ok, c.trace, c.parent)
		}
	}
	if validTraceState("a=b\x1b[2J") || !validTraceState("vendor=x,other=y") {
		t.Error("tracestate: control characters must be refused, a plain list kept")
	}
}
