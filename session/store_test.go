package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"mcpscope/transport"
)

// journaled is an offline-style session (no transport) writing a journal.
func journaled(t *testing.T) (*Session, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := CreateJournal(path, "test")
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
	n := 3 * Window
	for i := 1; i <= n; i++ {
		s.Ingest(frameIn(i, progressLine(i)))
	}
	s.Ingest(frameIn(n+1, `{"jsonrpc":"2.0","id":99,"result":{}}`))
	st := s.Store()
	if got := st.Len(); got != n+2 {
		t.Fatalf("Len = %d, want every frame (%d)", got, n+2)
	}
	st.mu.RLock()
	inRing := st.inRing(2)
	st.mu.RUnlock()
	if inRing != nil {
		t.Fatal("frame 2 is still decoded in memory: the window did not move")
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
	st.Scan(0, 0, func(e Entry) bool {
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
	for i := 1; i <= NoJournalWindow+extra; i++ {
		s.Ingest(frameIn(i, progressLine(i)))
	}
	st := s.Store()
	if st.Len() != NoJournalWindow || st.Dropped() != uint64(extra) || st.First() != uint64(extra+1) {
		t.Fatalf("Len %d Dropped %d First %d, want %d %d %d", st.Len(), st.Dropped(), st.First(), NoJournalWindow, extra, extra+1)
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

// A frame over MaxHeldFrame is journaled whole but held as its head; the
// exact bytes come back from the journal, before and after the window
// moved on.
func TestStoreHoldsHugeFramesAsAHead(t *testing.T) {
	s, _ := journaled(t)
	big := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat(`x\"\\é`, MaxHeldFrame/2) + `"}}`
	s.Ingest(frameIn(1, big))
	st := s.Store()
	check := func(when string) {
		it := st.Get(1)
		if it == nil || !it.Cut || it.Size != len(big) || len(it.Frame.Data) > HeldPrefix || !strings.HasPrefix(big, string(it.Frame.Data)) {
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
	for i := 2; i <= Window+2; i++ {
		s.Ingest(frameIn(i, progressLine(i)))
	}
	check("read back")
}

// Append returns where each line lands; what the writer has not written
// yet reads back from its queue, and everything is in the file after Flush.
func TestJournalPositions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := CreateJournal(path, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	type at struct {
		off int64
		n   int
	}
	var pos []at
	for i := 1; i <= 5000; i++ {
		off, n, err := j.Append(uint64(i), frameIn(i, progressLine(i)))
		if err != nil {
			t.Fatal(err)
		}
		pos = append(pos, at{off, n})
	}
	for i, p := range pos { // some of these are still queued
		b := make([]byte, p.n)
		if err := j.readAt(b, p.off); err != nil {
			t.Fatal(err)
		}
		seq, f, err := parseRecord(b[:p.n-1], true, false)
		if err != nil || seq != uint64(i+1) || string(f.Data) != progressLine(i+1) {
			t.Fatalf("line %d read back as %d %q %v", i+1, seq, f.Data, err)
		}
	}
	if err := j.Flush(); err != nil {
		t.Fatal(err)
	}
	file, _ := os.ReadFile(path)
	last := pos[len(pos)-1]
	if int64(len(file)) != last.off+int64(last.n) {
		t.Fatalf("file has %d bytes, the last line ends at %d", len(file), last.off+int64(last.n))
	}
}

// Lines that are not records are reported by number and skipped; what
// surrounds them is read, and a torn last line is reported too.
func TestReadJournalReportsBadLinesAndGoesOn(t *testing.T) {
	var b []byte
	b = append(b, `{"format":"mcpscope-journal/1","started":"2026-01-01T00:00:00Z","target":"x","pid":1}`+"\n"...)
	b = AppendRecord(b, 1, frameIn(1, `{"a":1}`))
	b = append(b, "garbage here\n"...)
	b = AppendRecord(b, 2, frameIn(2, `{"b":2}`))
	b = append(b, `{"foo":1}`+"\n"...)
	b = AppendRecord(b, 3, frameIn(3, `{"c":3}`))
	b = append(b, `{"seq":4,"t":"`...)
	var seqs []uint64
	h, err := ReadJournal(bytes.NewReader(b), func(seq uint64, _ transport.Frame) error {
		seqs = append(seqs, seq)
		return nil
	})
	var d *JournalDamage
	if !errors.As(err, &d) {
		t.Fatalf("want a *JournalDamage, got %v", err)
	}
	if fmt.Sprint(seqs) != "[1 2 3]" || h.Target != "x" {
		t.Fatalf("read %v (target %q), want [1 2 3]", seqs, h.Target)
	}
	if d.Count != 2 || d.Bad[0].Line != 3 || d.Bad[1].Line != 5 || d.Torn != 7 {
		t.Fatalf("damage: %+v", d)
	}
	if msg := err.Error(); !strings.Contains(msg, "line 3") || !strings.Contains(msg, "incomplete") {
		t.Fatalf("the message does not say where: %s", msg)
	}
}

func TestReadJournalTellsWhatAFileIs(t *testing.T) {
	read := func(content string) (Header, int, error) {
		n := 0
		h, err := ReadJournal(strings.NewReader(content), func(uint64, transport.Frame) error { n++; return nil })
		return h, n, err
	}
	if h, n, err := read(""); err != nil || n != 0 || h.Format != "" {
		t.Fatalf("empty: %+v %d %v", h, n, err)
	}
	if h, n, err := read(`{"format":"mcpscope-journal/1","target":"x"}` + "\n"); err != nil || n != 0 || h.Format != JournalFormat {
		t.Fatalf("header only: %+v %d %v", h, n, err)
	}
	if _, _, err := read(`{"name":"package.json","version":"1.0.0"}` + "\n" + `{"x":1}` + "\n"); !errors.Is(err, ErrNotJournal) {
		t.Fatalf("a JSON file that is no journal: %v", err)
	}
	if _, _, err := read(`{"format":"mcpscope-journal/9"}` + "\n"); err == nil || !strings.Contains(err.Error(), "newer mcpscope") {
		t.Fatalf("a newer format: %v", err)
	}
	// record's output has no header: its first line is a record.
	rec := string(AppendRecord(nil, 1, frameIn(1, `{"a":1}`)))
	if _, n, err := read(rec); err != nil || n != 1 {
		t.Fatalf("headerless records: %d %v", n, err)
	}
}

// Journals written before meta moved ahead of the data read the same.
func TestReadJournalOldLayout(t *testing.T) {
	line := `{"seq":7,"t":"2026-01-02T03:04:05.000000006Z","dir":"in","kind":"message","raw":"{\"a\":\"\u00e9\n\ud83d\ude00\ud800\"}","meta":{"pid":42}}` + "\n"
	var got transport.Frame
	if _, err := ReadJournal(strings.NewReader(line), func(_ uint64, f transport.Frame) error { got = f; return nil }); err != nil {
		t.Fatal(err)
	}
	if string(got.Data) != "{\"a\":\"é\n😀\uFFFD\"}" || got.Meta.PID != 42 || got.Time.Nanosecond() != 6 {
		t.Fatalf("old layout read as %q %+v", got.Data, got.Meta)
	}
}

// A huge line costs about its size to read, not a chain of growing copies
// (it cost three times its size and more).
func TestReadJournalHugeLineOnce(t *testing.T) {
	size := 32 << 20
	path := filepath.Join(t.TempDir(), "big.jsonl")
	data := bytes.Repeat([]byte("a"), size)
	line := AppendRecord(nil, 1, transport.Frame{Time: time.Unix(1, 0).UTC(), Dir: transport.In, Kind: transport.Garbage, Data: data})
	if err := os.WriteFile(path, line, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got := 0
	if _, err := ReadJournal(f, func(_ uint64, fr transport.Frame) error { got = len(fr.Data); return nil }); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	if got != size {
		t.Fatalf("read %d bytes of data, want %d", got, size)
	}
	if alloc > uint64(size)*5/4 {
		t.Fatalf("reading a %d MiB line allocated %d MiB; want about its size", size>>20, alloc>>20)
	}
	t.Logf("a %d MiB line allocated %.1f MiB to read", size>>20, float64(alloc)/(1<<20))
}

// Load keeps the file open and reads old frames back from it.
func TestLoadReadsFramesBackFromTheFile(t *testing.T) {
	s, path := journaled(t)
	for i := 1; i <= 2*Window; i++ {
		s.Ingest(frameIn(i, progressLine(i)))
	}
	s.journal.Flush()
	off, h, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	if h.Target != "test" || off.Store().Len() != 2*Window {
		t.Fatalf("loaded %d frames of %q", off.Store().Len(), h.Target)
	}
	if it := off.Store().Get(1); it == nil || string(it.Frame.Data) != progressLine(1) {
		t.Fatalf("frame 1 from the file: %+v", it)
	}
}

// FuzzRecordReaderMatchesJSON: whatever the hand-written record reader
// accepts, encoding/json reads as the same frame.
func FuzzRecordReaderMatchesJSON(f *testing.F) {
	f.Add(AppendRecord(nil, 3, frameIn(3, progressLine(3))))
	f.Add([]byte(`{"seq":7,"t":"2026-01-02T03:04:05.000000006+01:30","dir":"in","kind":"message","raw":"{\"a\":\"\u00e9\n\ud83d\ude00\ud800\"}","meta":{"pid":42}}`))
	f.Add([]byte(`{"seq":1,"t":"2026-02-31T00:00:00Z","dir":"local","kind":"event","meta":{"event":"exited","exitCode":0}}`))
	f.Add([]byte(`{"seq":2,"t":"2026-01-01T00:00:00.5-07:00","dir":"in","kind":"garbage","b64":"/w=="}`))
	// The head read in place, and lines that only nearly start with it.
	f.Add([]byte(`{"seq":1234567890123456789,"t":"2026-01-01T00:00:59.123456789Z","dir":"local","kind":"stderr","raw":"x","seq":3}`))
	f.Add([]byte(`{"seq":4,"t":"2026-01-01T00:00:60Z","dir":"in","kind":"message","raw":"x"}`))
	f.Add([]byte(`{"seq":5,"t":"2026-01-01T24:00:00Z","dir":"up","kind":"message","raw":"x"}`))
	f.Add([]byte(`{"seq":6,"t":"2026-01-01T00:00:00Z","dir":"in","kind":"message","dir":"out","t":"2027-01-01T00:00:00Z","raw":"x"}`))
	f.Add([]byte(`{"seq":00,"dir":"local","kind":"stderr"}`)) // a leading zero is not JSON
	f.Add([]byte(`{"seq":01,"t":"2026-01-01T00:00:00Z","dir":"in","kind":"message","raw":"x"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		line = bytes.TrimSuffix(line, []byte("\n"))
		var fr transport.Frame
		seq, ok := fastRecord(bytes.Clone(line), false, false, nil, &fr)
		if !ok {
			return
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("the fast reader took %q, encoding/json refuses it: %v", line, err)
		}
		want, err := rec.Frame()
		if err != nil {
			t.Fatalf("the fast reader took %q: %v", line, err)
		}
		redactMeta(&want.Meta) // the fast reader's meta comes redacted
		if seq != rec.Seq || !fr.Time.Equal(want.Time) || fr.Dir != want.Dir || fr.Kind != want.Kind ||
			!bytes.Equal(fr.Data, want.Data) || !reflect.DeepEqual(fr.Meta, want.Meta) {
			t.Fatalf("%q: fast %d %v %q %+v, json %d %v %q %+v", line, seq, fr.Time, fr.Data, fr.Meta, rec.Seq, want.Time, want.Data, want.Meta)
		}
	})
}

// A call whose result is over MaxHeldFrame does not pin it: the journal
// has it, and Result (and Wait) read it back exactly.
func TestHugeResultStaysInTheJournal(t *testing.T) {
	s, _ := journaled(t)
	s.Ingest(transport.Frame{Time: time.Now(), Dir: transport.Out, Kind: transport.Message,
		Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"big://x"}}`)})
	result := `{"contents":[{"uri":"big://x","text":"` + strings.Repeat("0123456789", MaxHeldFrame/5) + `"}]}`
	s.Ingest(frameIn(2, `{"jsonrpc":"2.0","id":1,"result":`+result+`}`))
	c := s.Lookup("1")
	sn := c.Snapshot()
	if sn.State != StateOK || sn.Result != nil || !sn.ResultInJournal {
		t.Fatalf("snapshot: state %s, %d bytes held, in journal %v", sn.State, len(sn.Result), sn.ResultInJournal)
	}
	for i := 3; i < Window+10; i++ {
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
	if _, err := ReadJournal(f, func(_ uint64, fr transport.Frame) error { kinds = append(kinds, fr.Kind); return nil }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(kinds) != fmt.Sprint([]transport.Kind{transport.Garbage, transport.Message}) {
		t.Fatalf("journaled as %v, want [garbage message]", kinds)
	}
	if it := s.Store().Get(2); it.Note != "not a JSON-RPC message" {
		t.Fatalf("valid JSON that is no message: note %q", it.Note)
	}
}
