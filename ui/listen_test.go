package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/testkit/testservers"
	"mcpscope/themes"
	"mcpscope/transport"
	"mcpscope/ui/detail"
	"mcpscope/ui/listen"
)

// listenCalls is the session's subscriptions/listen calls, in order.
func listenCalls(s *session.Session) []*session.Call {
	var out []*session.Call
	for _, c := range s.Calls() {
		if c.Method == listen.Method {
			out = append(out, c)
		}
	}
	return out
}

// statelessListenModel starts a stateless Go SDK server (2026-07-28), a
// session that adopted the modern era, and a model on it.
func statelessListenModel(t *testing.T) (*testservers.HTTPServer, *session.Session, *Model) {
	t.Helper()
	h := testservers.StartHTTPServer(t, testservers.HTTPOpts{Stateless: true})
	s, m := modernModel(t, h.URL, nil, 120)
	return h, s, m
}

// modernModel connects a session to a 2026-07-28 server at url (probed,
// the modern era adopted) and makes a model w columns wide on it; r, when
// not nil, answers server requests in the model.
func modernModel(t *testing.T, url string, r *Responder, w int) (*session.Session, *Model) {
	t.Helper()
	so := session.Options{Timeout: -1, MaxTimeout: -1}
	o := Options{Theme: themes.ByName("dark"), StateStore: &statestore.FileStore{Dir: t.TempDir()}, Clipboard: func(string) error { return nil }}
	if r != nil {
		so.Responder, o.Responder = r, r
	}
	s := session.New(transport.NewHTTP(transport.HTTPOptions{URL: url}), so)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	v, err := s.Probe(ctx, 20*time.Second)
	if err != nil || v.Era != protocol.EraModern {
		t.Fatalf("probe: %+v %v", v, err)
	}
	s.Adopt(v)
	o.Session = s
	m := New(o)
	m.Update(windowSize(w, 30))
	return s, m
}

// openListListen opens a listen stream with the form's defaults (tools,
// prompts and resources list changes) and waits for its acknowledgement.
func openListListen(t *testing.T, s *session.Session, m *Model) *session.Call {
	t.Helper()
	press(m, "listen", "listen-new", "form-submit")
	ls := listenCalls(s)
	if len(ls) != 1 {
		t.Fatalf("%d listen calls after the form", len(ls))
	}
	waitStoreFor(t, m, "the acknowledgement", func() bool { return ls[0].Snapshot().Ack != nil })
	return ls[0]
}

func addTool(h *testservers.HTTPServer, name string) {
	h.Server.AddTool(&mcp.Tool{Name: name, InputSchema: &jsonschema.Schema{Type: "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
}

// Against a stateless Go SDK server (2026-07-28): open a listen stream
// from the form, see the acknowledgement, count the tools/list_changed
// that adding a tool sends on it, see the catalog fetch the new tool, and
// close the stream.
func TestListenStreamGoSDK(t *testing.T) {
	h, s, m := statelessListenModel(t)

	// The catalog has been fetched once, so list changes refetch it.
	press(m, "catalog")
	waitStoreFor(t, m, "the tools list", func() bool { return len(m.catalog.Names(0)) > 0 })
	press(m, "catalog-close")

	press(m, "listen")
	if _, ok := topView[*listen.View](m); !ok || !strings.Contains(screen(m), "no listen streams yet") {
		t.Fatalf("listen view:\n%s", screen(m))
	}
	press(m, "listen-new")
	if !strings.Contains(screen(m), "Open a listen stream") {
		t.Fatalf("listen form:\n%s", screen(m))
	}
	press(m, "form-next") // prompts: no
	typeText(m, " ")
	press(m, "form-submit")
	ls := listenCalls(s)
	if len(ls) != 1 {
		t.Fatalf("%d listen calls after the form", len(ls))
	}
	l := ls[0]
	if f, _ := listen.FilterOf(l.Params()); !f.ToolsListChanged || f.PromptsListChanged || !f.ResourcesListChanged {
		t.Fatalf("listen params %s", l.Params())
	}
	waitStoreFor(t, m, "the acknowledgement", func() bool { return l.Snapshot().Ack != nil })
	if sc := screen(m); !strings.Contains(sc, "acknowledged  tools") || !strings.Contains(sc, "#"+l.Key) {
		t.Fatalf("acknowledgement not shown:\n%s", sc)
	}

	addTool(h, "late-arrival")
	waitStoreFor(t, m, "the list_changed on the listen stream", func() bool {
		return strings.Contains(screen(m), "received      1 notification(s), last notifications/tools/list_changed")
	})
	waitStoreFor(t, m, "the catalog's refetch", func() bool {
		for _, name := range m.catalog.Names(0) {
			if name == "late-arrival" {
				return true
			}
		}
		return false
	})

	press(m, "listen-close")
	if !strings.Contains(screen(m), "closed listen stream "+l.Key) {
		t.Fatalf("close flash:\n%s", screen(m))
	}
	waitStoreFor(t, m, "the listen call's end", func() bool { return l.Snapshot().State == session.StateCancelled })
	if sc := screen(m); !strings.Contains(sc, "0 open, 1 in all") || !strings.Contains(sc, "ended         cancelled") {
		t.Fatalf("closed stream:\n%s", sc)
	}
	if n := len(listenCalls(s)); n != 1 {
		t.Fatalf("%d listen calls after closing: re-listened after our own cancel", n)
	}
}

// When the server drops a listen stream, the session listens again with
// the same filter and the view shows the chain: the dropped stream points
// at its replacement, which is acknowledged and receives what follows.
func TestListenRelistenChain(t *testing.T) {
	h, s, m := statelessListenModel(t)
	first := openListListen(t, s, m)
	h.DropConnections()
	var second *session.Call
	waitStoreFor(t, m, "the re-listen's acknowledgement", func() bool {
		second = first.Next()
		return second != nil && second.Snapshot().Ack != nil
	})
	if string(protocol.StripMeta(second.Params())) != string(protocol.StripMeta(first.Params())) {
		t.Fatalf("re-listened with other params:\n%s\n%s", first.Params(), second.Params())
	}
	press(m, "down") // select the replacement
	sc := screen(m)
	if !strings.Contains(sc, "→ re-listened as #"+second.Key) || !strings.Contains(sc, "(re-listen of #"+first.Key+")") {
		t.Fatalf("the chain is not shown:\n%s", sc)
	}
	addTool(h, "after-the-drop")
	waitStoreFor(t, m, "the list_changed on the new stream", func() bool {
		return strings.Contains(screen(m), "received      1 notification(s), last notifications/tools/list_changed")
	})
	if n := len(listenCalls(s)); n != 2 {
		t.Fatalf("%d listen calls, want the first and one re-listen", n)
	}
}

// The view at 100x30: a partial acknowledgement names what the server
// left out, notifications are demultiplexed by subscriptionId, and server
// text is inert.
func TestListenViewGolden(t *testing.T) {
	s, f := liveSession(t, nil)
	s.Adopt(session.EraVerdict{Era: protocol.EraModern, Reason: "server/discover lists 2026-07-28"})
	m := newTestModel(t, s, 100, 30)
	press(m, "listen", "listen-new", "form-next", "form-next", "form-next")
	typeText(m, "demo://a, demo://b\x1b[2J")
	press(m, "form-next")
	typeText(m, "task-1")
	press(m, "form-submit")
	sent := f.sentWith(t, `"subscriptions/listen"`)
	// The text input keeps no control character a key press carried.
	if !strings.Contains(sent, `"resourceSubscriptions":["demo://a","demo://b[2J"]`) || !strings.Contains(sent, `"taskIds":["task-1"]`) {
		t.Fatalf("listen request %s", sent)
	}
	// A second stream to a key the first one does not own.
	press(m, "listen-new", "form-next")
	typeText(m, " ")
	press(m, "form-next")
	typeText(m, " ")
	press(m, "form-submit")
	f.sentWith(t, `"id":2`)
	meta := func(id string) string { return `"_meta":{"io.modelcontextprotocol/subscriptionId":` + id + `}` }
	// The server's words carry escapes and a bidi override: shown inert.
	f.inject(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":["demo://a","demo://x\u001b[2J\u202e"]},` + meta("1") + `}}`)
	f.inject(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{` + meta("1") + `}}`)
	f.inject(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"demo://a",` + meta("1") + `}}`)
	f.inject(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true},` + meta("2") + `}}`)
	f.inject(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{` + meta("2") + `}}`)
	refresh(m)
	if got := s.Info().ListChanged["tools"]; got != 2 {
		t.Fatalf("ListChanged[tools] = %d, want 2 (listen streams count for the catalog)", got)
	}
	press(m, "up")
	got := screen(m)
	for _, want := range []string{"2 open, 2 in all", "#1     streaming  partial 2", "#2     streaming  all     1",
		"not acked     prompts, uri demo://b", "task task-1 — the server will not send these",
		"received      2 notification(s), last notifications/resources/updated"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	assertInert(t, m.Render())
	m.flash = "" // the footer's keys, not the last flash
	golden(t, "listen-100x30", screen(m))

	press(m, "listen-close")
	sn := s.Calls()[0].Snapshot()
	if sn.Key != "1" || sn.State != session.StateCancelled {
		t.Fatalf("closed %s: %s", sn.Key, sn.State)
	}
	press(m, "open")
	if d, ok := topView[*detail.View](m); !ok || d.Call().Key != "1" {
		t.Fatalf("open did not show the listen call's detail:\n%s", screen(m))
	}
	press(m, "detail-close", "listen-close")
	if !strings.Contains(screen(m), "listen stream 1 has already ended") {
		t.Fatalf("closing an ended stream:\n%s", screen(m))
	}
	press(m, "listen-back")
	if m.top() != nil {
		t.Fatal("listen view still open after back")
	}
}

// In the legacy era the key explains that notifications arrive unasked.
func TestListenLegacyExplains(t *testing.T) {
	s, _ := liveSession(t, nil)
	s.Adopt(session.EraVerdict{Era: protocol.EraLegacy, Reason: "server/discover got HTTP 404"})
	m := newTestModel(t, s, 120, 30)
	press(m, "listen")
	if m.top() != nil || !strings.Contains(screen(m), "this session's era is legacy: the server sends notifications unasked") {
		t.Fatalf("legacy listen:\n%s", screen(m))
	}
}
