package framestore_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/framestore"
	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/testkit/journaltest"
	"mcpscope/transport"
)

// longKey is a call id longer than a record holds: its key is numbered
// in memory instead.
const longKey = `"a-call-id-longer-than-an-index-record-holds-0001"`

// indexJournal writes a journal of n progress notifications of two calls
// (one with a short id, one with an id longer than a record holds), with
// their requests and responses, reads it once so the index is written
// beside it, and returns its path.
func indexJournal(t *testing.T, n int) string {
	t.Helper()
	at := func(i int) time.Time { return time.Unix(1700000000, int64(i)).UTC() }
	frames := []transport.Frame{
		{Time: at(0), Dir: transport.Out, Kind: transport.Message,
			Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":"t"}}}`)},
		{Time: at(0), Dir: transport.Out, Kind: transport.Message,
			Data: []byte(`{"jsonrpc":"2.0","id":` + longKey + `,"method":"tools/call","params":{"name":"b","_meta":{"progressToken":"u"}}}`)},
	}
	for i := 1; i <= n; i++ {
		tok := "t"
		if i%3 == 0 {
			tok = "u"
		}
		frames = append(frames, frameIn(i, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%q,"progress":%d}}`, tok, i)))
	}
	frames = append(frames, frameIn(n+1, `{"jsonrpc":"2.0","id":1,"result":{}}`),
		frameIn(n+2, `{"jsonrpc":"2.0","id":`+longKey+`,"result":{}}`),
		frameIn(n+3, `{"jsonrpc":"2.0","id":77,"result":{}}`)) // a note
	path := journaltest.Write(t, "j.jsonl", journal.Header{}, frames...)
	loadIndexed(t, path).Close()
	return path
}

func frameIn(i int, data string) transport.Frame {
	return transport.Frame{Time: time.Unix(1700000000, int64(i)).UTC(), Dir: transport.In, Kind: transport.Message, Data: []byte(data)}
}

func progressLine(i int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":%d,"message":"step %d"}}`, i, i)
}

// journaled is a live session writing a journal (and its index).
func journaled(t *testing.T) *session.Session {
	t.Helper()
	j, err := journal.Create(filepath.Join(t.TempDir(), "j.jsonl"), "test")
	if err != nil {
		t.Fatal(err)
	}
	s := session.New(nil, session.Options{Journal: j, Timeout: -1, MaxTimeout: -1})
	t.Cleanup(func() { s.Close(); j.Close() })
	return s
}

// entries is every index entry of a store.
func entries(st *framestore.Store) []framestore.Entry {
	var out []framestore.Entry
	st.Scan(0, 0, func(e framestore.Entry) bool { out = append(out, e); return true })
	return out
}

func loadIndexed(t *testing.T, path string) *session.Session {
	t.Helper()
	s, _, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func sameEntries(t *testing.T, what string, got, want []framestore.Entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !got[i].Time.Equal(want[i].Time) || got[i].Seq != want[i].Seq || got[i].Method != want[i].Method ||
			got[i].CallKey != want[i].CallKey || got[i].Note != want[i].Note || got[i].Dir != want[i].Dir ||
			got[i].Kind != want[i].Kind || got[i].Class != want[i].Class || got[i].Cut != want[i].Cut {
			t.Fatalf("%s: entry %d = %+v, want %+v", what, i, got[i], want[i])
		}
	}
}

// A journaled session writes its index beside the journal; a session
// that reads the journal again finds it agreeing (and writes nothing),
// and one that finds it deleted or stale writes it again, the same.
func TestIndexFileRebuiltWhenDeletedOrStale(t *testing.T) {
	n := 3*journal.IndexPageRecords + 100
	path := indexJournal(t, n)
	idx := journal.IndexPath(path)
	written, err := os.ReadFile(idx)
	if err != nil {
		t.Fatalf("the first reader left no index beside its journal: %v", err)
	}
	if want := journal.IndexHeader + (n+5)*journal.IndexRecord; len(written) != want {
		t.Fatalf("index file is %d bytes, want %d (a header and a record per frame)", len(written), want)
	}

	s := loadIndexed(t, path)
	if framestore.IndexOf(s.Store()) == nil || !framestore.IndexOf(s.Store()).Checking() || framestore.IndexOf(s.Store()).Path() != idx {
		t.Fatalf("Load did not check the index it found: %+v", framestore.IndexOf(s.Store()))
	}
	want := entries(s.Store())
	if len(want) != n+5 || want[1].CallKey != longKey || want[4].CallKey != longKey || want[2].CallKey != "1" ||
		want[n+4].Note != "response to unknown id 77" {
		t.Fatalf("entries read: %d, %+v %+v %+v", len(want), want[1], want[2], want[n+4])
	}
	s.Close()

	if err := os.Remove(idx); err != nil {
		t.Fatal(err)
	}
	s = loadIndexed(t, path)
	sameEntries(t, "after deleting the index", entries(s.Store()), want)
	s.Close()
	again, err := os.ReadFile(idx)
	if err != nil {
		t.Fatalf("the index was not written again: %v", err)
	}
	if !bytes.Equal(again, written) {
		t.Fatal("the index written again from the journal differs from the one the first reader wrote")
	}

	// The journal grows (another process appended a frame): the index is stale.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(journal.AppendRecord(nil, uint64(n+6), frameIn(n+4, progressLine(1))))
	f.Close()
	s = loadIndexed(t, path)
	if framestore.IndexOf(s.Store()).Checking() {
		t.Fatal("an index whose journal grew since was checked as if current")
	}
	if got := entries(s.Store()); len(got) != n+6 {
		t.Fatalf("after the journal grew: %d entries, want %d", len(got), n+6)
	}
	s.Close()
	if st, _ := os.Stat(idx); st == nil || st.Size() != int64(journal.IndexHeader+(n+6)*journal.IndexRecord) {
		t.Fatalf("the stale index was not rewritten whole: %v", st)
	}
}

// A hostile or damaged index file, whatever its header says, is never
// believed over the journal: the entries are the journal's, and the file
// is repaired.
func TestIndexHostileFileIgnoredAndRebuilt(t *testing.T) {
	framestore.SetCachePages(t, 1) // entries come back from the file, not from what was just computed
	n := 2*journal.IndexPageRecords + 10
	path := indexJournal(t, n)
	idx := journal.IndexPath(path)
	good, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	s := loadIndexed(t, path)
	want := entries(s.Store())
	s.Close()

	damage := map[string]func([]byte) []byte{
		"records rewritten under a valid header": func(b []byte) []byte {
			for i := journal.IndexHeader + journal.IndexRecord; i < len(b); i += 7 * journal.IndexRecord {
				binary.LittleEndian.PutUint64(b[i:], 1<<62)         // offset far past the journal
				b[i+20], b[i+28] = 0xFE, framestore.KeyLong         // an unknown method, a key number never given
				binary.LittleEndian.PutUint32(b[i+29:], 0xFFFFFFFE) // …this one
			}
			return b
		},
		"truncated mid-record": func(b []byte) []byte { return b[:len(b)-journal.IndexRecord*journal.IndexPageRecords-13] },
		"whole records cut, count kept": func(b []byte) []byte {
			return b[:len(b)-3*journal.IndexRecord]
		},
		"a header from another journal": func(b []byte) []byte {
			b[16] ^= 0xFF
			binary.LittleEndian.PutUint64(b[56:], fnv64a(b[:56]))
			return b
		},
		"garbage":                         func([]byte) []byte { return []byte(strings.Repeat("not an index\n", 999)) },
		"empty":                           func([]byte) []byte { return nil },
		"a header only, claiming records": func(b []byte) []byte { return b[:journal.IndexHeader] },
	}
	for name, hurt := range damage {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(idx, hurt(bytes.Clone(good)), 0o600); err != nil {
				t.Fatal(err)
			}
			// The journal's mtime is what the good header recorded.
			s := loadIndexed(t, path)
			sameEntries(t, name, entries(s.Store()), want)
			if it := s.Store().Get(2); it == nil || it.CallKey != longKey || !strings.Contains(string(it.Frame.Data), longKey) {
				t.Fatalf("%s: frame 2 read back wrong: %+v", name, it)
			}
			s.Close()
			if fixed, _ := os.ReadFile(idx); !bytes.Equal(fixed, good) {
				t.Fatalf("%s: the index was not rebuilt from the journal (%d bytes, want %d)", name, len(fixed), len(good))
			}
		})
	}
}

// Index pages and decoded frames the window let go of come back exact:
// finding and filtering across the evicted region sees every frame.
func TestIndexWindowEvictedAndReadBack(t *testing.T) {
	framestore.SetCachePages(t, 2)
	n := 6*journal.IndexPageRecords + 5
	s := journaled(t)
	var data [][]byte
	for i := 1; i <= n; i++ {
		line := progressLine(i)
		if i%1000 == 0 {
			line = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"needle ` + fmt.Sprint(i) + `"}}`
		}
		data = append(data, []byte(line))
		s.Ingest(frameIn(i, line))
	}
	st := s.Store()
	first := entries(st)
	cached, own := framestore.PagesHeld(st)
	if cached > 2 || framestore.IndexOf(st) == nil || own != 0 {
		t.Fatalf("memory holds %d index pages read back (bound 2) and %d of its own; index file %v", cached, own, framestore.IndexOf(st))
	}
	// Entries read back, page by page, out of order, equal what was stored.
	for _, seq := range []uint64{1, uint64(n), 2, journal.IndexPageRecords + 1, uint64(n) - 1, 3*journal.IndexPageRecords + 7, 5} {
		e, ok := st.Entry(seq)
		if !ok || e.Seq != seq || !e.Time.Equal(first[seq-1].Time) || e.Method != first[seq-1].Method {
			t.Fatalf("entry %d read back: %+v, want %+v", seq, e, first[seq-1])
		}
	}
	// Frames out of the window come back byte-exact.
	for _, seq := range []uint64{1, journal.IndexPageRecords, 2*journal.IndexPageRecords + 3, uint64(n)} {
		it := st.Get(seq)
		if it == nil || !bytes.Equal(it.Frame.Data, data[seq-1]) {
			t.Fatalf("frame %d read back: %+v", seq, it)
		}
		b, err := st.Bytes(seq)
		if err != nil || !bytes.Equal(b, data[seq-1]) {
			t.Fatalf("Bytes(%d) = %q, %v", seq, b, err)
		}
	}
	// A filter over the whole session finds what is in evicted pages.
	var found []uint64
	st.Scan(0, 0, func(e framestore.Entry) bool {
		if e.Method == "notifications/message" {
			found = append(found, e.Seq)
		}
		return true
	})
	if len(found) != n/1000 || found[0] != 1000 {
		t.Fatalf("the filter found %v, want every 1000th frame", found)
	}
	for _, seq := range found {
		if it := st.Get(seq); it == nil || !strings.Contains(string(it.Frame.Data), fmt.Sprintf("needle %d", seq)) {
			t.Fatalf("found frame %d reads back as %+v", seq, it)
		}
	}
	all := st.Since(0, 0)
	if len(all) != n {
		t.Fatalf("Since(0) gave %d of %d", len(all), n)
	}
	for i, it := range all {
		if !bytes.Equal(it.Frame.Data, data[i]) {
			t.Fatalf("Since: frame %d is %q", it.Seq, it.Frame.Data)
		}
	}
}

// A second reader of a journal whose index another holds writes a
// private one, and a journal in a directory that takes no file has its
// index in the cache directory.
func TestIndexElsewhereWhenHeldOrReadOnly(t *testing.T) {
	path := indexJournal(t, 10)
	a := loadIndexed(t, path)
	b := loadIndexed(t, path)
	if framestore.IndexOf(a.Store()) == nil || framestore.IndexOf(a.Store()).Path() != journal.IndexPath(path) {
		t.Fatalf("the first reader does not use the index beside the journal: %+v", framestore.IndexOf(a.Store()))
	}
	if framestore.IndexOf(b.Store()) == nil || framestore.IndexOf(b.Store()).Path() != "" {
		t.Fatalf("the second reader shares the first's index file: %+v", framestore.IndexOf(b.Store()))
	}
	sameEntries(t, "the private index", entries(b.Store()), entries(a.Store()))

	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(dir, "j.jsonl")
	if err := os.Symlink(path, ro); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(journal.IndexPath(ro), 0o700); err != nil { // where the index would go takes no file
		t.Fatal(err)
	}
	c := loadIndexed(t, ro)
	if framestore.IndexOf(c.Store()) == nil || framestore.IndexOf(c.Store()).Path() != journal.CacheIndexPath(ro) || !strings.HasPrefix(framestore.IndexOf(c.Store()).Path(), cache) {
		t.Fatalf("index of a journal whose directory takes none: %+v", framestore.IndexOf(c.Store()))
	}
	sameEntries(t, "the cache directory's index", entries(c.Store()), entries(a.Store()))
	if journal.IndexSize(ro) == 0 {
		t.Fatal("IndexSize does not count the cache directory's index")
	}
	c.Close()
	os.Remove(journal.IndexPath(ro))
	if err := journal.RemoveIndex(ro); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(journal.CacheIndexPath(ro)); !os.IsNotExist(err) {
		t.Fatalf("RemoveIndex left the cache directory's index: %v", err)
	}
}

// An index file that stops taking writes (a full disk) costs memory, not
// frames: the pages it did not take stay in memory and every entry is
// still found.
func TestIndexFileFailingKeepsPagesInMemory(t *testing.T) {
	s := journaled(t)
	st := s.Store()
	idx := framestore.IndexOf(st)
	if idx == nil {
		t.Fatal("a journaled session has no index file")
	}
	idx.Close() // every write and read from now on fails
	n := 3*journal.IndexPageRecords + 9
	for i := 1; i <= n; i++ {
		s.Ingest(frameIn(i, progressLine(i)))
	}
	if _, own := framestore.PagesHeld(st); idx.Err() == nil || own != 3 {
		t.Fatalf("after the file failed: err %v, %d pages held in memory, want 3", idx.Err(), own)
	}
	got := entries(st)
	if len(got) != n {
		t.Fatalf("%d entries of %d", len(got), n)
	}
	for i, e := range got {
		if e.Seq != uint64(i+1) || e.Method != "notifications/progress" || !e.Time.Equal(time.Unix(1700000000, int64(i+1))) {
			t.Fatalf("entry %d: %+v", i, e)
		}
	}
	if it := st.Get(1); it == nil || string(it.Frame.Data) != progressLine(1) {
		t.Fatalf("frame 1: %+v", it)
	}
}

// An index path that is a symlink, or a hard link to someone's file, is
// never written through: the session keeps a private index, and the file
// the link names is left as it was.
func TestIndexNeverWritesThroughAPlantedLink(t *testing.T) {
	path := indexJournal(t, 10)
	want := entries(loadIndexed(t, path).Store())
	os.Remove(journal.IndexPath(path))
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, plant := range []string{"symlink", "dangling symlink", "hard link"} {
		t.Run(plant, func(t *testing.T) {
			victim := filepath.Join(t.TempDir(), "precious")
			const content = "someone's file\n"
			if plant != "dangling symlink" {
				if err := os.WriteFile(victim, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			link := os.Symlink
			if plant == "hard link" {
				link = os.Link
			}
			for _, p := range []string{journal.IndexPath(path), journal.CacheIndexPath(path)} {
				os.MkdirAll(filepath.Dir(p), 0o700)
				if err := link(victim, p); err != nil {
					t.Fatal(err)
				}
				defer os.Remove(p)
			}
			s := loadIndexed(t, path)
			if framestore.IndexOf(s.Store()) == nil || framestore.IndexOf(s.Store()).Path() != "" {
				t.Fatalf("the index is %+v, want a private one", framestore.IndexOf(s.Store()))
			}
			sameEntries(t, "the private index", entries(s.Store()), want)
			s.Close()
			b, err := os.ReadFile(victim)
			switch {
			case plant == "dangling symlink" && !os.IsNotExist(err):
				t.Fatalf("the link's target was created: %v, %d bytes", err, len(b))
			case plant != "dangling symlink" && string(b) != content:
				t.Fatalf("the link's target was written: %d bytes, %q…", len(b), b[:min(len(b), 16)])
			}
		})
	}
}

// fnv64a is the checksum an index header ends with (FNV-1a, 64 bits, of
// its first 56 bytes).
func fnv64a(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}
