package ui

import (
	"strings"
	"testing"

	"mcpscope/transport"
)

// A method name is the sender's bytes: the requests pane draws one with
// escape bytes inert (a host's request in a recording, a server's request
// to the client), and sizes its column by what is drawn.
func TestRequestsPaneDrawsAHostileMethodInert(t *testing.T) {
	s := loadFrames(t, []transport.Frame{
		msg(0, transport.Out, `{"jsonrpc":"2.0","id":1,"method":"tools/\u001b]0;pwned\u0007x\u001b[2J"}`),
		msg(0.5, transport.In, `{"jsonrpc":"2.0","id":1,"result":{}}`),
		msg(1, transport.Out, `{"jsonrpc":"2.0","id":2,"method":"ping"}`), // selected: the hostile row is drawn unselected
		msg(1.5, transport.In, `{"jsonrpc":"2.0","id":2,"result":{}}`),
	})
	m := newTestModel(t, s, 120, 30)
	raw := m.Render()
	for _, bad := range []string{"\x1b]0;", "\x1b[2J", "\a"} {
		if strings.Contains(raw, bad) {
			t.Errorf("the screen carries %q from the method", bad)
		}
	}
	if got := screen(m); !strings.Contains(got, "tools/␛]0;pwned␇x␛[2J") {
		t.Errorf("the method is not shown inert:\n%s", got)
	}
}
