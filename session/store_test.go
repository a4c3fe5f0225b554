package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/framestore"
	"mcpscope/journal"
	"mcpscope/transport"
)

// journaled is an offline-style session (no transport) writing a journal.
func journaled(t *testing.T) (*Session, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := journal.Create(path, "test")
	if err != nil {
		t.Fatal(err)
	}
	s := New(nil, Options{Journal: j, Timeout: -1, MaxTimeout: -1})
	s.offline = true // requests in frames make their own calls
	t.Cleanup(func() { j.Close() })
	return s, path
}

func frameIn(i int, data string) transport.Frame {
	return transport.Frame{Time: time.Unix(1700000000, int64(i)).UTC(), Dir: transport.In, Kind: transport.Message, Data: []byte(data)}
}

func progressLine(i int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":%d,"message":"step %d"}}`, i, i)
}

// The index keeps every frame of a journaled session while the window
// holds only the newest decoded ones; older frames come back from the
// journal exactly, decoded again, with what correlation noted.
func TestStoreReadsOldFramesBack(t *testing.T) {
	s, _ := journaled(t)
	s.Ingest(transport.Frame{Time: time.Unix(1700000000, 0).UTC(), Dir: transport.Out, Kind: transport.Message,
		Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"t"}}}`)})
	n := 3 * framestore.Window
	for i := 1; i <= n; i++ {
		s.Ingest(frameIn(i, progressLine(i)))
	}
	s.Ingest(frameIn(n+1, `{"jsonrpc":"2.0","id":99,"result":{}}`))
	st := s.Store()
	if got := st.Len(); got != n+2 {
		t.Fatalf("Len = %d, want every frame (%d)", got, n+2)
	}
	it := st.Get(2)
	if it == nil || string(it.Frame.Data) != progressLine(1) || it.Env == nil || it.Env.Method != "notifications/progress" {
		t.Fatalf("frame 2 read back wrong: %+v", it)
	}
	if it.CallKey != "1" || !it.Frame.Time.Equal(time.Unix(1700000000, 1)) {
		t.Fatalf("frame 2 lost its call or time: %q %v", it.CallKey, it.Frame.Time)
	}
	if last := st.Get(uint64(n + 2)); last == nil || last.Note != "response to unknown id 99" {
		t.Fatalf("the last frame's note: %+v", last)
	}
	all := st.Since(0, 0)
	if len(all) != n+2 {
		t.Fatalf("Since(0) gave %d items, want %d", len(all), n+2)
	}
	for i, it := range all[1 : n+1] {
		if string(it.Frame.Data) != progressLine(i+1) {
			t.Fatalf("item %d: %s", it.Seq, it.Frame.Data)
		}
	}
	var progress, noted int
	st.Scan(0, 0, func(e framestore.Entry) bool {
		if e.Method == "notifications/progress" && e.CallKey == "1" {
			progress++
		}
		if e.Note != "" {
			noted++
		}
		return true
	})
	if progress != n || noted != 1 {
		t.Fatalf("the index counts %d progress frames of call 1 and %d notes, want %d and 1", progress, noted, n)
	}
}

// Without a journal, a session keeps a window and says how much it forgot.
func TestStoreWithoutJournalKeepsAWindow(t *testing.T) {
	s := New(nil, Options{Timeout: -1, MaxTimeout: -1})
	extra := 100
	for i := 1; i <= framestore.NoJournalWindow+extra; i++ {
		s.Ingest(frameIn(i, progressLine(i)))
	}
	st := s.Store()
	if st.Len() != framestore.NoJournalWindow || st.Dropped() != uint64(extra) || st.First() != uint64(extra+1) {
		t.Fatalf("Len %d Dropped %d First %d, want %d %d %d", st.Len(), st.Dropped(), st.First(), framestore.NoJournalWindow, extra, extra+1)
	}
	if st.Get(1) != nil {
		t.Fatal("a forgotten frame came back")
	}
	if it := st.Get(uint64(extra + 1)); it == nil || string(it.Frame.Data) != progressLine(extra+1) {
		t.Fatalf("the oldest frame kept: %+v", it)
	}
	if _, err := st.Bytes(1); err == nil {
		t.Fatal("Bytes of a forgotten frame did not fail")
	}
}

// A frame over framestore.MaxHeldFrame is journaled whole but held as its head; the
// exact bytes come back from the journal, before and after the window
// moved on.
func TestStoreHoldsHugeFramesAsAHead(t *testing.T) {
	s, _ := journaled(t)
	big := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat(`x\"\\é`, framestore.MaxHeldFrame/2) + `"}}`
	s.Ingest(frameIn(1, big))
	st := s.Store()
	check := func(when string) {
		it := st.Get(1)
		if it == nil || !it.Cut || it.Size != len(big) || len(it.Frame.Data) > framestore.HeldPrefix || !strings.HasPrefix(big, string(it.Frame.Data)) {
			t.Fatalf("%s: the huge frame in memory: cut %v size %d held %d", when, it.Cut, it.Size, len(it.Frame.Data))
		}
		if it.Env == nil || it.Env.Method != "notifications/message" || it.Env.Params != nil {
			t.Fatalf("%s: its envelope: %+v", when, it.Env)
		}
		b, err := st.Bytes(1)
		if err != nil || string(b) != big {
			t.Fatalf("%s: Bytes gave %d bytes, %v; want the exact %d", when, len(b), err, len(big))
		}
	}
	check("in the window")
	for i := 2; i <= framestore.Window+2; i++ {
		s.Ingest(frameIn(i, progressLine(i)))
	}
	check("read back")
}

// Load keeps the file open and reads old frames back from it.
func TestLoadReadsFramesBackFromTheFile(t *testing.T) {
	s, path := journaled(t)
	for i := 1; i <= 2*framestore.Window; i++ {
		s.Ingest(frameIn(i, progressLine(i)))
	}
	s.journal.Flush()
	off, h, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	if h.Target != "test" || off.Store().Len() != 2*framestore.Window {
		t.Fatalf("loaded %d frames of %q", off.Store().Len(), h.Target)
	}
	if it := off.Store().Get(1); it == nil || string(it.Frame.Data) != progressLine(1) {
		t.Fatalf("frame 1 from the file: %+v", it)
	}
}

// A call whose result is over framestore.MaxHeldFrame does not pin it: the journal
// has it, and Result (and Wait) read it back exactly.
func TestHugeResultStaysInTheJournal(t *testing.T) {
	s, _ := journaled(t)
	s.Ingest(transport.Frame{Time: time.Now(), Dir: transport.Out, Kind: transport.Message,
		Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"big://x"}}`)})
	result := `{"contents":[{"uri":"big://x","text":"` + strings.Repeat("0123456789", framestore.MaxHeldFrame/5) + `"}]}`
	s.Ingest(frameIn(2, `{"jsonrpc":"2.0","id":1,"result":`+result+`}`))
	c := s.Lookup("1")
	sn := c.Snapshot()
	if sn.State != StateOK || sn.Result != nil || !sn.ResultInJournal {
		t.Fatalf("snapshot: state %s, %d bytes held, in journal %v", sn.State, len(sn.Result), sn.ResultInJournal)
	}
	for i := 3; i < framestore.Window+10; i++ {
		s.Ingest(frameIn(i, progressLine(i)))
	}
	got, err := c.Wait(t.Context())
	if err != nil || string(got) != result {
		t.Fatalf("Wait gave %d bytes, %v; want the exact %d", len(got), err, len(result))
	}
}

// The transport files a line as a message by its first byte; the session's
// one pass finds out whether it is JSON and journals it as garbage if not.
func TestIngestFilesBrokenJSONAsGarbage(t *testing.T) {
	s, path := journaled(t)
	s.Ingest(frameIn(1, `{"jsonrpc":"2.0","method":`))
	s.Ingest(frameIn(2, `{"hello":"world"}`))
	s.journal.Flush()
	var kinds []transport.Kind
	f, _ := os.Open(path)
	defer f.Close()
	if _, err := journal.Read(f, func(_ uint64, fr transport.Frame) error { kinds = append(kinds, fr.Kind); return nil }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(kinds) != fmt.Sprint([]transport.Kind{transport.Garbage, transport.Message}) {
		t.Fatalf("journaled as %v, want [garbage message]", kinds)
	}
	if it := s.Store().Get(2); it.Note != "not a JSON-RPC message" {
		t.Fatalf("valid JSON that is no message: note %q", it.Note)
	}
}
