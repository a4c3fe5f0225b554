package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"mcpscope/transport"
)

func u64(n uint64) *uint64 { return &n }

// A viewer's request goes to the server inside the host's session with an
// id from the proxy's own space; its answer and its progress come back to
// the viewer only, while the host's own calls go on.
func TestStdioInjectAnswersOnlyTheViewer(t *testing.T) {
	r := startFake(t)
	v := r.viewer()
	if v.Hello.Transport != "stdio" || v.Hello.IDPrefix == "" || v.Hello.ServerPID == 0 || v.Hello.Journal != r.journal {
		t.Fatalf("hello: %+v", v.Hello)
	}
	v.Send(Message{Type: "subscribe"})
	nextMsg(t, v, "subscribed")

	r.send(`{"jsonrpc":"2.0","id":1,"method":"slow","params":{"ms":300}}`)
	v.Send(Message{Type: "inject", Ref: json.RawMessage(`"r1"`),
		Message: json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"progress","params":{"n":3,"_meta":{"progressToken":1}}}`)})
	inj := nextMsg(t, v, "injected").Msg
	if !strings.HasPrefix(string(inj.ID), `"`+v.Hello.IDPrefix) || string(inj.Ref) != `"r1"` {
		t.Fatalf("injected: %+v", inj)
	}
	var progress int
	for {
		l := nextMsg(t, v, "")
		if l.Msg == nil {
			continue
		}
		if l.Msg.Type == "progress" {
			progress++
		}
		if l.Msg.Type == "reply" {
			if !strings.Contains(string(l.Msg.Message), `"echo"`) || string(l.Msg.ID) != string(inj.ID) {
				t.Fatalf("reply: %+v", l.Msg)
			}
			break
		}
	}
	if progress != 3 {
		t.Fatalf("%d progress messages", progress)
	}
	r.send(`{"jsonrpc":"2.0","id":2,"method":"echo"}`)
	got := []string{r.read(), r.read()}
	for _, l := range got {
		if strings.Contains(l, v.Hello.IDPrefix) || strings.Contains(l, "progress") {
			t.Fatalf("the host saw the viewer's traffic: %s", l)
		}
	}
	if all := strings.Join(got, ""); !strings.Contains(all, `"id":1`) || !strings.Contains(all, `"id":2`) {
		t.Fatalf("host lines: %q", got)
	}
	r.hostW.Close()
	r.wait()
	vias := map[string]int{}
	for _, rec := range r.records() {
		if rec.Kind == "message" {
			vias[rec.Dir+" "+rec.Meta.Via]++
		}
	}
	if vias["out viewer"] != 1 || vias["in viewer"] != 4 || vias["out host"] != 2 || vias["in host"] != 2 {
		t.Fatalf("journal vias: %v", vias)
	}
}

func TestStdioInjectRefusesNonRequests(t *testing.T) {
	r := startFake(t)
	v := r.viewer()
	for _, m := range []string{`{"jsonrpc":"2.0","method":"notifications/x"}`, `[1,2]`, `{"id":1}`} {
		v.Send(Message{Type: "inject", Message: json.RawMessage(m)})
		if e := nextMsg(t, v, "error").Msg; !strings.Contains(e.Error, "JSON-RPC request") {
			t.Fatalf("%s: %+v", m, e)
		}
	}
}

// Cancel from a viewer: the server is told, the host gets an error at
// once, and the server's late answer never reaches the host.
func TestStdioCancelHostCall(t *testing.T) {
	r := startFake(t)
	v := r.viewer()
	v.Send(Message{Type: "subscribe"})
	nextMsg(t, v, "subscribed")
	// The server answers only once it is told of the cancel: the answer is
	// late on any machine, however slow.
	r.send(`{"jsonrpc":"2.0","id":"h-7","method":"slow","params":{"after":"notifications/cancelled"}}`)
	var reqSeq uint64
	for reqSeq == 0 {
		l := nextMsg(t, v, "frame")
		if l.Record.Dir == "out" && strings.Contains(*l.Record.Raw, `"h-7"`) {
			reqSeq = l.Record.Seq
		}
	}
	v.Send(Message{Type: "cancel", Ref: json.RawMessage(`5`), Seq: reqSeq})
	c := nextMsg(t, v, "cancelled").Msg
	if string(c.ID) != `"h-7"` {
		t.Fatalf("cancelled: %+v", c)
	}
	l := r.read()
	var resp struct {
		ID    string `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(l), &resp); err != nil || resp.ID != "h-7" || resp.Error.Code != cancelCode {
		t.Fatalf("host got %s", l)
	}
	// The server was told (it reports notifications it sees).
	if l := r.read(); !strings.Contains(l, `"notifications/seen"`) || !strings.Contains(l, `"requestId":"h-7"`) {
		t.Fatalf("server did not see the cancel: %s", l)
	}
	// Its late answer is dropped: once the proxy has journaled it as such,
	// the next thing the host sees is id 2's.
	for {
		l := nextMsg(t, v, "frame")
		if l.Record.Meta != nil && l.Record.Meta.Via == transport.ViaDropped {
			if !strings.Contains(*l.Record.Raw, `"h-7"`) {
				t.Fatalf("dropped %s", *l.Record.Raw)
			}
			break
		}
	}
	r.send(`{"jsonrpc":"2.0","id":2,"method":"echo"}`)
	if l := r.read(); !strings.Contains(l, `"id":2`) {
		t.Fatalf("host saw %s", l)
	}
	// Cancelling again: nothing in flight.
	v.Send(Message{Type: "cancel", Seq: reqSeq})
	if e := nextMsg(t, v, "error").Msg; !strings.Contains(e.Error, "no call in flight") {
		t.Fatalf("%+v", e)
	}
	r.hostW.Close()
	r.wait()
	var dropped, made int
	for _, rec := range r.records() {
		switch rec.Meta.Via {
		case transport.ViaDropped:
			dropped++
		case transport.ViaMcpscope:
			made++
		}
	}
	if dropped != 1 || made != 2 {
		t.Fatalf("%d dropped, %d made by mcpscope", dropped, made)
	}
}

func TestStdioCancelRefusesInitialize(t *testing.T) {
	r := startFake(t)
	v := r.viewer()
	r.send(`{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"after":"never/sent"}}`)
	r.send(`{"jsonrpc":"2.0","id":10,"method":"echo"}`)
	r.read() // id 10's answer: id 9 is in flight by now
	v.Send(Message{Type: "cancel", ID: json.RawMessage(`9`)})
	if e := nextMsg(t, v, "error").Msg; !strings.Contains(e.Error, "initialize cannot be cancelled") {
		t.Fatalf("%+v", e)
	}
}

// A viewer that never reads and one that dies change nothing for the host:
// a flood of notifications all arrives, and the stuck viewer, when it reads
// at last, is told what it missed.
func TestStdioSlowAndDeadViewers(t *testing.T) {
	// A viewer that does not read for viewerWrite is dropped, with what it
	// missed still queued; the host's flood may take longer than that on a
	// loaded machine under -race. Set before the proxy starts and put back
	// after it ended (cleanups run last first).
	was := viewerWrite
	t.Cleanup(func() { viewerWrite = was })
	viewerWrite = 10 * time.Minute
	r := startFake(t)
	stuck := r.viewer()
	stuck.Send(Message{Type: "subscribe"})
	nextMsg(t, stuck, "subscribed") // and then it reads no more until the flood is over
	dead := r.viewer()
	dead.Send(Message{Type: "subscribe"})
	nextMsg(t, dead, "subscribed")
	dead.Close()

	const n = 200000
	start := time.Now()
	r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"flood","params":{"n":%d}}`, n))
	got := r.readUntil(fmt.Sprintf(`"flood %d"`, n))
	took := time.Since(start)
	if len(got) != n+1 {
		t.Fatalf("host got %d lines, want %d", len(got), n+1)
	}
	t.Logf("%d notifications to the host in %v with a stuck and a dead viewer", n, took)

	var missed uint64
	deadline := time.Now().Add(waitLong)
	for missed == 0 {
		l, err := stuck.Next(deadline)
		if err != nil {
			t.Fatalf("stuck viewer: %v (the proxy may have dropped it, which is allowed, but not before it missed frames)", err)
		}
		if l.Msg != nil && l.Msg.Type == "missed" {
			missed = l.Msg.Count
			if l.Msg.Journal != r.journal || l.Msg.To-l.Msg.From+1 != l.Msg.Count {
				t.Fatalf("missed: %+v", l.Msg)
			}
		}
	}
	t.Logf("the stuck viewer missed %d frames", missed)
}

// subscribe after a seq gets what followed it; older than the ring is a
// missed message pointing at the journal.
func TestSubscribeAfter(t *testing.T) {
	r := startFake(t)
	for i := range 5 {
		r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"echo"}`, i))
		r.read()
	}
	// The host can read an answer before the hub has counted it: a viewer
	// reading from the start sees the last answer once the hub has it, and
	// from then on a new viewer's hello counts it.
	w := r.viewer()
	w.Send(Message{Type: "subscribe", After: u64(0)})
	nextMsg(t, w, "subscribed")
	for {
		l := nextMsg(t, w, "frame")
		if raw := l.Record.Raw; raw != nil && strings.Contains(*raw, `"id":4,`) && strings.Contains(*raw, `"result"`) {
			break
		}
	}
	v := r.viewer()
	last := v.Hello.Seq
	if last < 10 {
		t.Fatalf("hello seq %d", last)
	}
	v.Send(Message{Type: "subscribe", After: u64(last - 3)})
	nextMsg(t, v, "subscribed")
	for want := last - 2; want <= last; want++ {
		if l := nextMsg(t, v, "frame"); l.Record.Seq != want {
			t.Fatalf("frame seq %d, want %d", l.Record.Seq, want)
		}
	}

	// Push the start out of the ring.
	r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":99,"method":"flood","params":{"n":%d}}`, ringFrames+10))
	r.readUntil(fmt.Sprintf(`"flood %d"`, ringFrames+10))
	// The host has the flood's last line; the hub has it once the live
	// viewer does: from then on a new viewer's hello counts it.
	for {
		l := nextMsg(t, v, "frame")
		if strings.Contains(*l.Record.Raw, fmt.Sprintf(`"flood %d"`, ringFrames+10)) {
			break
		}
	}
	v2 := r.viewer()
	if v2.Hello.Seq < uint64(ringFrames+20) {
		t.Fatalf("hello seq %d after the flood", v2.Hello.Seq)
	}
	v2.Send(Message{Type: "subscribe", After: u64(0)})
	nextMsg(t, v2, "subscribed")
	m := nextMsg(t, v2, "missed").Msg
	if m.From != 1 || m.To < 10 {
		t.Fatalf("missed %+v", m)
	}
	if l := nextMsg(t, v2, "frame"); l.Record.Seq != m.To+1 {
		t.Fatalf("first frame %d after missed up to %d", l.Record.Seq, m.To)
	}
}

func TestListAndStale(t *testing.T) {
	dir := shortTemp(t)
	t.Setenv("XDG_RUNTIME_DIR", dir)
	t.Setenv("XDG_STATE_HOME", dir)
	t.Setenv("TMPDIR", dir) // List looks in the per-user fallback too: other proxies there are not this test's
	cmd, args := fakeCmd(t)
	r := startProxy(t, StdioConfig{Name: "my server", Command: cmd, Args: args, Env: []string{"PROXY_FAKE=1", "GORACE=atexit_sleep_ms=0"}, SocketDir: SocketDir()})
	// A stale socket of a process that is gone.
	stale := SocketPath(SocketDir(), "old", 999999)
	if err := writeFile(stale); err != nil {
		t.Fatal(err)
	}
	got, err := List(context.Background(), 2*time.Second)
	if err != nil || len(got) != 1 || got[0].Err != nil || got[0].Hello.Name != "my server" || got[0].Hello.PID != r.hello.PID {
		t.Fatalf("list: %+v %v", got, err)
	}
	if _, err := statFile(stale); err == nil {
		t.Fatal("stale socket not removed")
	}
	if f, _ := Find(context.Background(), "my server", time.Second); len(f) != 1 {
		t.Fatalf("find: %+v", f)
	}
}
