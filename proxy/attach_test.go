package proxy

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/transport"
)

// waitFor polls cond, woken by the session's store, for at most waitLong.
func waitFor(t *testing.T, s *session.Session, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		select {
		case <-s.Store().Changed():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func attached(t *testing.T, r *running) (*session.Session, *Attach) {
	t.Helper()
	a := NewAttach(r.viewer())
	s, err := session.Follow(a, session.Options{IDPrefix: "you-"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, a
}

// A session attached to a stdio proxy has the host's session from its
// start (read from the journal) and goes on live, under the proxy's
// numbering; its own call runs inside the server and its answer and
// progress never reach the host; a host's call it cancels ends in the
// host with the error, and here as cancelled.
func TestAttachFollowsInjectsAndCancels(t *testing.T) {
	r := startFake(t)
	r.send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1}}`)
	if l := r.read(); !strings.Contains(l, `"id":1`) {
		t.Fatalf("host got %s", l)
	}
	s, a := attached(t, r)
	if a.JournalPath() != r.journal || !a.CanInject() {
		t.Fatalf("hello: %+v", a.Hello())
	}
	waitFor(t, s, "the host's first call, from the journal", func() bool {
		c := s.Lookup("1")
		return c != nil && c.Snapshot().State == session.StateOK
	})
	if sn := s.Lookup("1").Snapshot(); !sn.Adopted || sn.Via != transport.ViaHost {
		t.Fatalf("host call: %+v", sn)
	}

	// Live: a slow host call, and the viewer's own call meanwhile.
	r.send(`{"jsonrpc":"2.0","id":2,"method":"slow","params":{"ms":400}}`)
	own := s.Call("progress", map[string]any{"n": 3})
	res, err := own.Wait(t.Context())
	if err != nil || !strings.Contains(string(res), `"echo"`) {
		t.Fatalf("own call: %s %v", res, err)
	}
	if sn := own.Snapshot(); sn.Progress.Updates != 3 || sn.Adopted || sn.Seq == 0 {
		t.Fatalf("own call: %+v", sn)
	}
	// The id it went out with is the proxy's, as the journal has it: what
	// a status line names.
	if sn := own.Snapshot(); !strings.HasPrefix(sn.WireKey, `"`+a.Hello().IDPrefix) || !strings.Contains(*r.records()[sn.Seq-1].Raw, strings.Trim(sn.WireKey, `"`)) {
		t.Fatalf("own call %s: wire key %q, want the proxy's id (prefix %s) of its journal line", sn.Key, sn.WireKey, a.Hello().IDPrefix)
	}
	if l := r.read(); !strings.Contains(l, `"id":2`) || strings.Contains(l, a.Hello().IDPrefix) {
		t.Fatalf("host got %s", l)
	}
	waitFor(t, s, "the host's slow call", func() bool {
		c := s.Lookup("2")
		return c != nil && c.Snapshot().State == session.StateOK
	})

	// Cancel a host's call.
	r.send(`{"jsonrpc":"2.0","id":"h-3","method":"slow","params":{"after":"notifications/cancelled"}}`)
	var host *session.Call
	waitFor(t, s, "the host's call h-3", func() bool { host = s.Lookup(`"h-3"`); return host != nil })
	errc := make(chan error, 1)
	if err := s.CancelForeign(host, "", func(err error) { errc <- err }); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("cancel: %v", err)
	}
	var resp struct {
		ID    string             `json:"id"`
		Error struct{ Code int } `json:"error"`
	}
	if l := r.read(); json.Unmarshal([]byte(l), &resp) != nil || resp.ID != "h-3" || resp.Error.Code != cancelCode {
		t.Fatalf("host got %s", l)
	}
	waitFor(t, s, "the cancelled call", func() bool { return host.Snapshot().State == session.StateCancelled })

	// The numbering is the proxy's: each call's seq is its request's line.
	recs := r.records()
	for _, c := range s.Calls() {
		sn := c.Snapshot()
		if sn.Seq == 0 || int(sn.Seq) > len(recs) || !strings.Contains(*recs[sn.Seq-1].Raw, `"method"`) {
			t.Fatalf("call %s: seq %d is not its request's line", sn.Key, sn.Seq)
		}
	}
}

// A session attached later than the ring reaches reads what the socket
// reports missed from the journal: every frame, in order, none twice.
func TestAttachCatchesUpFromTheJournal(t *testing.T) {
	r := startFake(t)
	r.send(`{"jsonrpc":"2.0","id":1,"method":"flood","params":{"n":6000}}`)
	r.readUntil(`"flood 6000"`)
	s, _ := attached(t, r)
	recs := r.records()
	want := uint64(len(recs))
	waitFor(t, s, "every frame", func() bool { return s.Store().Last() >= want })
	if n := s.Store().Len(); n != int(want) || want < 6002 {
		t.Fatalf("%d frames, want the journal's %d", n, want)
	}
	for _, seq := range []uint64{1, want / 2, want - 100, want} {
		it := s.Store().Get(seq)
		if it == nil || it.Note != "" || string(it.Frame.Data) != *recs[seq-1].Raw {
			t.Fatalf("frame %d: %+v, journal has %s", seq, it, *recs[seq-1].Raw)
		}
	}
}

// A viewer that cannot get frames back (a proxy without a journal) shows
// one gap event in their place, under the first missed number.
func TestAttachMissedIsAGap(t *testing.T) {
	here, there := net.Pipe()
	defer there.Close()
	c := &Conn{Hello: Hello{Name: "nj", PID: 1, Transport: "stdio"}, c: here, br: bufio.NewReader(here)}
	a := NewAttach(c)
	s, err := session.Follow(a, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	br := bufio.NewReader(there)
	if l, _ := br.ReadString('\n'); !strings.Contains(l, `"subscribe"`) || !strings.Contains(l, `"after":0`) {
		t.Fatalf("first command %q", l)
	}
	go func() {
		for {
			if _, err := br.ReadString('\n'); err != nil {
				return // pings
			}
		}
	}()
	rec := func(seq uint64, data string) string {
		return string(journal.AppendRecord(nil, seq, transport.Frame{Time: time.Now(), Dir: transport.In, Kind: transport.Message, Data: []byte(data)}))
	}
	fmt.Fprint(there, `{"type":"subscribed","after":0,"seq":11}`+"\n", `{"type":"missed","from":1,"to":9,"count":9}`+"\n",
		rec(10, `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"a"}}`),
		rec(11, `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"b"}}`))
	waitFor(t, s, "frame 11", func() bool { return s.Store().Last() == 11 })
	gap := s.Store().Get(1)
	if gap == nil || gap.Frame.Kind != transport.Event || !strings.Contains(gap.Frame.Meta.Detail, "missed frames #1–#9 (9)") ||
		!strings.Contains(gap.Frame.Meta.Detail, "--no-journal") {
		t.Fatalf("gap: %+v", gap)
	}
	if n := s.Store().Len(); n != 3 {
		t.Fatalf("%d frames, want the gap and two", n)
	}
	// The proxy going away ends the feed (bounded), and says why.
	fmt.Fprint(there, `{"type":"bye","reason":"the server exited"}`+"\n")
	select {
	case <-a.Done():
	case <-time.After(waitLong):
		t.Fatal("bye did not end the feed")
	}
	if !strings.Contains(a.Ended(), "the server exited") {
		t.Fatalf("ended: %q", a.Ended())
	}
}

// An HTTP proxy takes no injected request: the session's call fails at
// once and says where such calls go instead.
func TestAttachRefusesInjectOverHTTP(t *testing.T) {
	here, there := net.Pipe()
	defer there.Close()
	go func() {
		br := bufio.NewReader(there)
		for {
			if _, err := br.ReadString('\n'); err != nil {
				return
			}
		}
	}()
	a := NewAttach(&Conn{Hello: Hello{Name: "web", Transport: "http", Can: []string{"cancel"}}, c: here, br: bufio.NewReader(here)})
	s, _ := session.Follow(a, session.Options{IDPrefix: "you-"})
	s.Start()
	defer s.Close()
	_, err := s.Call("tools/list", nil).Wait(t.Context())
	if err == nil || !strings.Contains(err.Error(), "session of its own") {
		t.Fatalf("err %v", err)
	}
}

// Frames the socket reports missed are read from the journal where the
// last one read ended, with their lines' places; the socket's frames after
// them go on from there.
func TestAttachMissedFromTheJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	h, _ := json.Marshal(journal.Header{Format: journal.Format, Target: "stdio: x"})
	lines := []string{string(h) + "\n"}
	for i := uint64(1); i <= 30; i++ {
		lines = append(lines, string(journal.AppendRecord(nil, i, transport.Frame{Time: time.Unix(1, int64(i)), Dir: transport.In,
			Kind: transport.Message, Data: []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"n","params":{"i":%d}}`, i))})))
	}
	os.WriteFile(path, []byte(strings.Join(lines[:11], "")), 0o600) // the header and frames 1-10
	here, there := net.Pipe()
	defer there.Close()
	a := NewAttach(&Conn{Hello: Hello{Name: "j", Transport: "stdio", Journal: path}, c: here, br: bufio.NewReader(here)})
	defer a.Close()
	got := make(chan session.Fed, 64)
	if err := a.StartFeed(func(f session.Fed) { got <- f }, func(string, json.RawMessage) {}); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(there)
	if l, _ := br.ReadString('\n'); !strings.Contains(l, `"after":10`) {
		t.Fatalf("subscribe %q", l)
	}
	go func() {
		for {
			if _, err := br.ReadString('\n'); err != nil {
				return
			}
		}
	}()
	// The proxy wrote 11-30 meanwhile; the viewer missed 11-28.
	os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600)
	fmt.Fprint(there, `{"type":"missed","from":11,"to":28,"count":18}`+"\n", lines[29], lines[30])
	off := int64(0)
	for i := 0; i < 30; i++ {
		if i == 0 {
			off = int64(len(lines[0]))
		}
		var f session.Fed
		select {
		case f = <-got:
		case <-time.After(waitLong):
			t.Fatalf("frame %d did not come", i+1)
		}
		if f.Seq != uint64(i+1) || f.Off != off || f.Len != len(lines[i+1]) || !strings.Contains(string(f.Frame.Data), fmt.Sprintf(`"i":%d}`, i+1)) {
			t.Fatalf("frame %d: seq %d at %d+%d, want at %d+%d: %s", i+1, f.Seq, f.Off, f.Len, off, len(lines[i+1]), f.Frame.Data)
		}
		off += int64(f.Len)
	}
}

// A viewer whose delivery is busy (a session ingesting, a catch-up from
// the journal) still reads the socket, so the proxy never takes it for
// one that stopped reading: frames past its inbox are dropped there and
// read back from the journal, in order, none lost.
func TestAttachReadsTheSocketWhileDeliveryIsBusy(t *testing.T) {
	was := attachQueueBytes
	t.Cleanup(func() { attachQueueBytes = was })
	attachQueueBytes = 2 << 10 // a few lines: most of the flood is dropped and read back

	const n = 2000
	path := filepath.Join(t.TempDir(), "j.jsonl")
	h, _ := json.Marshal(journal.Header{Format: journal.Format, Target: "stdio: x"})
	lines := []string{string(h) + "\n"}
	for i := uint64(1); i <= n; i++ {
		lines = append(lines, string(journal.AppendRecord(nil, i, transport.Frame{Time: time.Unix(1, int64(i)), Dir: transport.In,
			Kind: transport.Message, Data: []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"n","params":{"i":%d}}`, i))})))
	}
	os.WriteFile(path, []byte(strings.Join(lines[:11], "")), 0o600) // the header and frames 1-10
	here, there := net.Pipe()                                       // unbuffered: a write waits for the viewer to read
	defer there.Close()
	a := NewAttach(&Conn{Hello: Hello{Name: "j", Transport: "stdio", Journal: path}, c: here, br: bufio.NewReader(here)})
	defer a.Close()
	busy := make(chan struct{})
	got := make(chan session.Fed, n)
	if err := a.StartFeed(func(f session.Fed) {
		if f.Seq == 11 {
			<-busy // delivery stalls on the first frame the socket sent
		}
		got <- f
	}, func(string, json.RawMessage) {}); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(there)
	if l, _ := br.ReadString('\n'); !strings.Contains(l, `"after":10`) {
		t.Fatalf("subscribe %q", l)
	}
	go func() {
		for {
			if _, err := br.ReadString('\n'); err != nil {
				return
			}
		}
	}()
	os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600) // the proxy journals before it sends
	sent := make(chan error, 1)
	go func() {
		for _, l := range lines[11:] {
			if _, err := io.WriteString(there, l); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	select {
	case err := <-sent:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitLong): // a hang guard
		t.Fatal("the viewer stopped reading the socket while its delivery was busy")
	}
	close(busy)
	for i := uint64(1); i <= n; i++ {
		var f session.Fed
		select {
		case f = <-got:
		case <-time.After(waitLong):
			t.Fatalf("frame %d did not come", i)
		}
		if f.Seq != i || !strings.Contains(string(f.Frame.Data), fmt.Sprintf(`"i":%d}`, i)) {
			t.Fatalf("frame %d: seq %d %s", i, f.Seq, f.Frame.Data)
		}
	}
	select {
	case <-a.Done():
		t.Fatalf("the viewer ended: %s", a.Ended())
	default:
	}
}
