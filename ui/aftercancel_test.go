package ui

import (
	"strings"
	"testing"

	"mcpscope/transport"
)

// Progress a server sends after the call was cancelled is marked in the
// notifications pane and in the call's detail, at 80 columns too (issue
// 40): the server kept working, which is what someone debugging it wants
// to see.
func TestProgressAfterCancelMarked(t *testing.T) {
	out, in := transport.Out, transport.In
	progress := func(sec float64, n string) transport.Frame {
		return msg(sec, in, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpscope-2","progress":`+n+`,"total":10,"message":"step `+n+`/10"}}`)
	}
	frames := []transport.Frame{
		msg(0.1, out, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpscope","version":"0.1.0-dev"}}}`),
		msg(0.2, in, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"demo","version":"1"}}}`),
		msg(1, out, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":10,"steps":10},"_meta":{"progressToken":"mcpscope-2"}}}`),
		progress(2, "1"),
		msg(2.5, out, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"cancelled by the user in mcpscope"}}`),
		progress(3, "2"),
		progress(4, "3"),
	}
	for _, sz := range []struct{ w, h int }{{80, 24}, {120, 40}} {
		m := newTestModel(t, loadFrames(t, frames), sz.w, sz.h)
		press(m, "focus-next")
		got := screen(m)
		if n := strings.Count(got, "the server kept working after the cancel"); n != 2 {
			t.Fatalf("%d progress rows marked after the cancel, want 2:\n%s", n, got)
		}
		checkSize(t, got, sz.w, sz.h)
		golden(t, "notifications-after-cancel-"+itoa(sz.w)+"x"+itoa(sz.h), got)
	}
	m := newTestModel(t, loadFrames(t, frames), 80, 24)
	press(m, "top", "down", "open", "tab-prev") // the last tab: notifications
	got := screen(m)
	if !strings.Contains(got, "the server kept working after the cancel") {
		t.Fatalf("the call's notifications do not say it:\n%s", got)
	}
	golden(t, "detail-after-cancel-80x24", got)
}
