package session

import (
	"path/filepath"
	"testing"

	"mcpscope/journal"
)

// Without a window (record without --filter), the store keeps no frame
// decoded: every item asked for is read back from the journal, whole and
// correlated, and ingest uses its own items again, so an item a reader
// holds must never change under it.
func TestStoreWithoutWindowReadsEverythingBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := journal.Create(path, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	s := New(nil, Options{Journal: j, Timeout: -1, MaxTimeout: -1})
	st := s.Store()
	if !st.NoWindow() {
		t.Fatal("a journaled store refused to keep no window")
	}
	s.Ingest(frameIn(1, progressLine(1)))
	held := st.Get(1)
	n := 100 // more than three of the slab's chunks of 32
	for i := 2; i <= n; i++ {
		s.Ingest(frameIn(i, progressLine(i)))
	}
	if held == nil || string(held.Frame.Data) != progressLine(1) || held.Env == nil || held.Env.Method != "notifications/progress" || held.Seq != 1 {
		t.Fatalf("an item held while more frames came in changed: %+v", held)
	}
	all := st.Since(0, 0)
	if len(all) != n {
		t.Fatalf("Since(0) gave %d items, want %d", len(all), n)
	}
	for i, it := range all {
		if it.Seq != uint64(i+1) || string(it.Frame.Data) != progressLine(i+1) || it.Env == nil || it.Note != "progress for unknown token \"t\"" {
			t.Fatalf("item %d read back wrong: seq %d %s env %v note %q", i+1, it.Seq, it.Frame.Data, it.Env != nil, it.Note)
		}
	}
	// Without a journal there is nothing to read back: the window stays.
	bare := New(nil, Options{Timeout: -1, MaxTimeout: -1})
	if bare.Store().NoWindow() {
		t.Fatal("a store without a journal gave up its window")
	}
	bare.Ingest(frameIn(1, progressLine(1)))
	if it := bare.Store().Get(1); it == nil || string(it.Frame.Data) != progressLine(1) {
		t.Fatalf("a store without a journal lost its frame: %+v", it)
	}
}
