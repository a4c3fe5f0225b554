package session

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpscope/framestore"
	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/testkit/waitfor"
	"mcpscope/transport"
)

// writeJournal writes a journal of frames (numbered from 1) and returns its path.
func writeJournal(t *testing.T, target string, frames ...transport.Frame) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "j.jsonl")
	h, _ := json.Marshal(journal.Header{Format: journal.Format, Started: time.Unix(100, 0).UTC(), Target: target, PID: 1})
	buf := append(h, '\n')
	for i, f := range frames {
		if f.Time.IsZero() {
			f.Time = time.Unix(100, int64(i)*int64(time.Millisecond)).UTC()
		}
		buf = journal.AppendRecord(buf, uint64(i+1), f)
	}
	if err := os.WriteFile(path, buf, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func out(data string) transport.Frame {
	return transport.Frame{Dir: transport.Out, Kind: transport.Message, Data: []byte(data)}
}

func in(data string) transport.Frame {
	return transport.Frame{Dir: transport.In, Kind: transport.Message, Data: []byte(data)}
}

func via(f transport.Frame, v string) transport.Frame { f.Meta.Via = v; return f }

// waitLoaded waits (bounded) for Open's background reading to end.
func waitLoaded(t *testing.T, s *Session) Loading {
	t.Helper()
	select {
	case <-s.Loaded():
	case <-time.After(2 * time.Minute): // a hang guard: -race on a loaded machine is slow
		t.Fatal("the journal was not read within 2 minutes")
	}
	return s.Loading()
}

// Open returns before the frames are read and reads them in the
// background; the session then holds what Load would have made.
func TestOpenReadsInTheBackground(t *testing.T) {
	path := writeJournal(t, "stdio: node server.js",
		out(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`),
		in(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`),
		in(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`))
	s, h, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if h.Target != "stdio: node server.js" || s.Info().Target != h.Target || s.Info().JournalPath != path {
		t.Fatalf("header %+v, info %+v", h, s.Info())
	}
	l := waitLoaded(t, s)
	if l.Err != nil || l.Read != l.Size || l.Size == 0 {
		t.Fatalf("loading: %+v", l)
	}
	if s.Store().Len() != 3 || s.Store().Last() != 3 {
		t.Fatalf("store: %d frames, last %d", s.Store().Len(), s.Store().Last())
	}
	if c := s.Lookup("1"); c == nil || c.Snapshot().State != StateOK || !c.Snapshot().Adopted {
		t.Fatalf("call 1: %+v", c)
	}
}

func TestOpenSaysWhatIsNotAJournal(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"empty": "", "text": "hello\n"} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		if _, _, err := Open(p); !errors.Is(err, journal.ErrNotJournal) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

// The known gaps of a journal read back: the client's own
// notifications/cancelled ends its call cancelled (a timeout's as a
// timeout); the error mcpscope proxy gave a host for a cancel ends the
// host's call cancelled; server requests are not answered again.
func TestLoadAppliesCancels(t *testing.T) {
	path := writeJournal(t, "http: http://127.0.0.1:1/mcp",
		out(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`),
		out(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}`),
		in(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`),
		out(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow"}}`),
		out(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"timeout"}}`),
		via(out(`{"jsonrpc":"2.0","id":"h-3","method":"tools/call","params":{"name":"slow"}}`), transport.ViaHost),
		via(in(`{"jsonrpc":"2.0","id":"h-3","error":{"code":-32800,"message":"request cancelled from mcpscope"}}`), transport.ViaMcpscope),
		via(out(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"h-3","reason":"cancelled from mcpscope"}}`), transport.ViaMcpscope),
		via(in(`{"jsonrpc":"2.0","id":"h-3","result":{}}`), transport.ViaDropped),
		in(`{"jsonrpc":"2.0","id":"s1","method":"roots/list"}`))
	s, _, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c1 := s.Lookup("1").Snapshot()
	if c1.State != StateCancelled || !strings.Contains(c1.Failure.Reason, "cancelled by the client") || !strings.Contains(c1.Failure.Reason, "user") || c1.Late != 1 {
		t.Fatalf("call 1: %s %+v late %d", c1.State, c1.Failure, c1.Late)
	}
	c2 := s.Lookup("2").Snapshot()
	if c2.State != StateError || !errors.Is(c2.Err(), ErrTimeout) {
		t.Fatalf("call 2: %s %v", c2.State, c2.Err())
	}
	c3 := s.Lookup(`"h-3"`).Snapshot()
	if c3.State != StateCancelled || c3.RPCError == nil || c3.RPCError.Code != -32800 || c3.Late != 1 || c3.Via != transport.ViaHost {
		t.Fatalf("call h-3: %+v", c3)
	}
	if n := s.Info().Pending; n != 0 {
		t.Fatalf("%d calls left pending", n)
	}
	// The late answers are in the details; the rows stay cancelled.
	for _, c := range []CallSnapshot{c1, c3} {
		if w := StateWord(&c); w != "cancelled" {
			t.Errorf("call %s is %q, want cancelled (late %d)", c.Key, w, c.Late)
		}
	}
}

// blockResponder never answers: a server request put to it stays in
// serverReq for as long as the test looks.
type blockResponder struct{}

func (blockResponder) Respond(ctx context.Context, _ ServerRequest) (json.RawMessage, *journal.RPCError) {
	<-ctx.Done()
	return nil, nil
}

// MRTR rounds and re-issues read back are linked as they were live.
func TestLoadLinksRoundsAndReissues(t *testing.T) {
	path := writeJournal(t, "http: http://127.0.0.1:1/mcp",
		transport.Frame{Dir: transport.Local, Kind: transport.Event, Meta: transport.Meta{Event: transport.EvNote, Detail: "era: modern (pinned with --era)"}},
		out(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}`),
		in(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create"}},"requestState":"s1"}}`),
		out(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","inputResponses":{"a":{"action":"accept"}},"requestState":"s1"}}`),
		in(`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`),
		out(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{"n":1},"_meta":{"progressToken":"mcpscope-3"}}}`),
		transport.Frame{Dir: transport.Local, Kind: transport.Event, Meta: transport.Meta{Event: transport.EvStreamDropped, Stream: "post:3"}},
		out(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow","arguments":{"n":1},"_meta":{"progressToken":"mcpscope-4"}}}`),
		in(`{"jsonrpc":"2.0","id":4,"result":{"content":[]}}`))
	s, _, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Era() != protocol.EraModern {
		t.Fatalf("era %q", s.Era())
	}
	r1, r2 := s.Lookup("1").Snapshot(), s.Lookup("2").Snapshot()
	if r1.Next != "2" || r2.Round != 1 || r2.Parent != "1" {
		t.Fatalf("rounds not linked: %+v / %+v", r1, r2)
	}
	if res, err := s.Lookup("1").WaitFinal(t.Context()); err != nil || !strings.Contains(string(res), "content") {
		t.Fatalf("WaitFinal: %s %v", res, err)
	}
	c3, c4 := s.Lookup("3").Snapshot(), s.Lookup("4").Snapshot()
	if c3.Next != "4" || !errors.Is(c3.Err(), ErrReissued) || c4.ReissueOf != "3" || c4.State != StateOK {
		t.Fatalf("re-issue not linked: %+v / %+v", c3, c4)
	}
}

// A stream that ends in the initialize era without event ids ends its
// call (it could not be resumed); one with event ids waits for the resume.
func TestLoadStreamEnds(t *testing.T) {
	path := writeJournal(t, "http: http://127.0.0.1:1/mcp",
		out(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`),
		transport.Frame{Dir: transport.Local, Kind: transport.Event, Meta: transport.Meta{Event: transport.EvStreamDropped, Stream: "post:1"}},
		out(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}`),
		transport.Frame{Dir: transport.In, Kind: transport.Event, Meta: transport.Meta{Event: transport.EvPrime, Stream: "post:2", EventID: "e1"}},
		transport.Frame{Dir: transport.Local, Kind: transport.Event, Meta: transport.Meta{Event: transport.EvStreamDropped, Stream: "post:2"}},
		transport.Frame{Dir: transport.In, Kind: transport.Message, Data: []byte(`{"jsonrpc":"2.0","id":2,"result":{}}`),
			Meta: transport.Meta{Stream: "get:2", Resumes: "post:2", EventID: "e2"}})
	s, _, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if c := s.Lookup("1").Snapshot(); c.State != StateError || !strings.Contains(c.Failure.Reason, "broke") {
		t.Fatalf("call 1: %+v", c)
	}
	if c := s.Lookup("2").Snapshot(); c.State != StateOK || c.Late != 0 {
		t.Fatalf("call 2: %+v", c)
	}
}

// An offline session's catalog is what the frames hold: the last tools/list
// and the pages its cursor asked for.
func TestRecordedListing(t *testing.T) {
	path := writeJournal(t, "stdio: x",
		out(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
		in(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"old"}]}}`),
		out(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`),
		in(`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a"}],"nextCursor":"c2"}}`),
		out(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"c2"}}`),
		in(`{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"b"}]}}`))
	s, _, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := s.List("tools/list", "tools")
	if !l.Step() {
		t.Fatal("a recorded listing is over at once")
	}
	items, err := l.Result()
	if err != nil || len(items) != 2 || !strings.Contains(string(items[0]), `"a"`) || !strings.Contains(string(items[1]), `"b"`) {
		t.Fatalf("items %s, %v", items, err)
	}
	if _, err := s.List("prompts/list", "prompts").Result(); err == nil || !strings.Contains(err.Error(), "no prompts/list answer") {
		t.Fatalf("prompts: %v", err)
	}
	if n := len(s.Calls()); n != 3 {
		t.Fatalf("listing sent something: %d calls", n)
	}
}

// fakeFeed is a Feed a test drives: it delivers frames it is given, with
// their numbers, and records what the session sends.
type fakeFeed struct {
	journal string
	fn      func(Fed)
	wire    func(string, json.RawMessage)
	mu      sync.Mutex
	sent    []transport.Outgoing
	cancels []uint64
	done    chan struct{}
	once    sync.Once
}

func (f *fakeFeed) JournalPath() string { return f.journal }
func (f *fakeFeed) StartFeed(fn func(Fed), wire func(string, json.RawMessage)) error {
	f.fn, f.wire = fn, wire
	return nil
}
func (f *fakeFeed) Start(transport.Sink) error { return errors.New("a Feed is started with StartFeed") }
func (f *fakeFeed) Send(m transport.Outgoing, done func(error)) {
	f.mu.Lock()
	f.sent = append(f.sent, m)
	f.mu.Unlock()
	done(nil)
}
func (f *fakeFeed) Close() error          { f.once.Do(func() { close(f.done) }); return nil }
func (f *fakeFeed) Done() <-chan struct{} { return f.done }
func (f *fakeFeed) Describe() string      { return "proxy test" }
func (f *fakeFeed) CancelForeign(seq uint64, _ json.RawMessage, _ string, done func(error)) {
	f.mu.Lock()
	f.cancels = append(f.cancels, seq)
	f.mu.Unlock()
	done(nil)
}

func (f *fakeFeed) feed(seq uint64, fr transport.Frame) {
	if fr.Time.IsZero() {
		fr.Time = time.Now()
	}
	f.fn(Fed{Seq: seq, Frame: fr, Off: -1})
}

func (f *fakeFeed) sentData() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, m := range f.sent {
		out = append(out, string(m.Data))
	}
	return out
}

// A session over a Feed keeps the Feed's numbering (gaps too), adopts the
// host's calls, keeps its own calls apart under IDPrefix ids, finds them
// again under the ids and tokens they had on the wire, marks a server
// request that arrives meanwhile as the host's, and cancels a host's call
// through the Feed.
func TestFollowFeed(t *testing.T) {
	ff := &fakeFeed{done: make(chan struct{})}
	s, err := Follow(ff, Options{IDPrefix: "you-", Responder: blockResponder{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ff.feed(5, via(out(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":1}}}`), transport.ViaHost))
	ff.feed(9, via(in(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`), transport.ViaHost))
	if s.Store().Last() != 9 {
		t.Fatalf("last seq %d, want the feed's 9", s.Store().Last())
	}
	host := s.Lookup("1")
	if sn := host.Snapshot(); !sn.Adopted || sn.Seq != 5 || sn.Via != transport.ViaHost || sn.Progress.Updates != 1 {
		t.Fatalf("host call: %+v", sn)
	}

	own := s.Call("tools/call", map[string]any{"name": "echo"})
	if own.Key != `"you-1"` || own.Snapshot().Adopted {
		t.Fatalf("own call key %s", own.Key)
	}
	waitfor.Within(2*time.Minute, func() bool { return len(ff.sentData()) > 0 }) // a hang guard
	if sent := ff.sentData(); len(sent) != 1 || !strings.Contains(sent[0], `"id":"you-1"`) || !strings.Contains(sent[0], `"progressToken":"mcpscope-you-1"`) {
		t.Fatalf("sent %q", sent)
	}
	// The host's id 1 is not the session's own: a host request with the
	// same number as an own call would have been adopted anyway.
	ff.wire(own.Key, json.RawMessage(`"mcpscope-ab-1"`))
	ff.feed(10, via(out(`{"jsonrpc":"2.0","id":"mcpscope-ab-1","method":"tools/call","params":{"name":"echo","_meta":{"progressToken":"mcpscope-ab-p1"}}}`), transport.ViaViewer))
	ff.feed(11, via(in(`{"jsonrpc":"2.0","id":"s-1","method":"sampling/createMessage","params":{}}`), transport.ViaHost))
	ff.feed(12, via(in(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpscope-ab-p1","progress":1}}`), transport.ViaViewer))
	ff.feed(13, via(in(`{"jsonrpc":"2.0","id":"mcpscope-ab-1","result":{"content":[]}}`), transport.ViaViewer))
	if sn := own.Snapshot(); sn.State != StateOK || sn.Seq != 10 || sn.Progress.Updates != 1 {
		t.Fatalf("own call: %+v", sn)
	}
	if n := len(s.Calls()); n != 2 {
		t.Fatalf("%d calls, want the host's and the own one", n)
	}
	if it := s.Store().Get(11); it == nil || it.Note != NoteOwnRequest {
		t.Fatalf("server request: %+v", it)
	}
	s.mu.Lock()
	asked := len(s.serverReq)
	s.mu.Unlock()
	if asked != 0 {
		t.Fatal("the session put the host's server request to its own responder")
	}
	if it := s.Store().Get(13); it == nil || it.CallKey != own.Key {
		t.Fatalf("reply: %+v", it)
	}

	if err := s.CancelForeign(own, "", nil); err == nil {
		t.Fatal("CancelForeign took the session's own call")
	}
	errc := make(chan error, 1)
	if err := s.CancelForeign(host, "", func(err error) { errc <- err }); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil || ff.cancels[0] != 5 {
		t.Fatalf("cancel: %v %v", err, ff.cancels)
	}
	if host.Snapshot().State.Ended() {
		t.Fatal("the host's call ended before the proxy's error came")
	}
	ff.feed(14, via(in(`{"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"request cancelled from mcpscope"}}`), transport.ViaMcpscope))
	if sn := host.Snapshot(); sn.State != StateCancelled {
		t.Fatalf("host call after the proxy's error: %+v", sn)
	}
	// Frames without a line in a journal are kept, window or not.
	if it := s.Store().Get(5); it == nil || !strings.Contains(string(it.Frame.Data), `"slow"`) {
		t.Fatalf("frame 5: %+v", it)
	}
}

// A Feed's frames are read back from its journal once the window lets
// them go.
func TestFollowReadsBackFromTheFeedsJournal(t *testing.T) {
	var frames []transport.Frame
	for i := range framestore.Window + 10 {
		frames = append(frames, in(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"`+strings.Repeat("x", i%7)+`"}}`))
	}
	path := writeJournal(t, "stdio: x", frames...)
	ff := &fakeFeed{journal: path, done: make(chan struct{})}
	s, err := Follow(ff, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	defer s.Close()
	var off int64
	b, _ := os.ReadFile(path)
	off = int64(strings.IndexByte(string(b), '\n') + 1)
	lines := strings.SplitAfter(string(b[off:]), "\n")
	for i, f := range frames {
		f.Time = time.Unix(100, int64(i)*int64(time.Millisecond)).UTC()
		ff.fn(Fed{Seq: uint64(i + 1), Frame: f, Off: off, Len: len(lines[i])})
		off += int64(len(lines[i]))
	}
	if it := s.Store().Get(1); it == nil || it.Note != "" || string(it.Frame.Data) != string(frames[0].Data) {
		t.Fatalf("frame 1 read back: %+v", it)
	}
}
