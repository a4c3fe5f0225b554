package statestore

import (
	"os"
	"strconv"
	"testing"
)

// The file store's marks: the newest whole line wins, a line torn by a
// crash mid-write is skipped (and does not spoil the next), the file stays
// small however many steps are marked, and nothing is marked for a record
// that is gone.
func TestFileStoreMarksAppendAndCompact(t *testing.T) {
	fs := &FileStore{Dir: t.TempDir()}
	d := Detached{Handle: "h1", Target: "http://x/mcp", SessionID: "s", Method: "tools/call"}
	if err := fs.Put(d); err != nil {
		t.Fatal(err)
	}
	mark := func(n int) Mark {
		return Mark{Stream: "post:1", EventID: "ev" + strconv.Itoa(n), Progress: Progress{Updates: n}}
	}
	steps := func() int {
		got, err := fs.Get("h1")
		if err != nil {
			t.Fatal(err)
		}
		return got.Progress.Updates
	}
	for n := 1; n <= 3; n++ {
		if err := fs.Mark("h1", mark(n)); err != nil {
			t.Fatal(err)
		}
	}
	if got := steps(); got != 3 {
		t.Fatalf("after 3 marks the record reads %d steps", got)
	}
	p, _ := fs.path("h1")
	f, err := os.OpenFile(markPath(p), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"stream":"post:1","eventId":"ev4","progress":{"upd`) // a crash mid-write
	f.Close()
	if got := steps(); got != 3 {
		t.Fatalf("a torn mark: the record reads %d steps, want 3", got)
	}
	if err := fs.Mark("h1", mark(5)); err != nil {
		t.Fatal(err)
	}
	if got := steps(); got != 5 {
		t.Fatalf("the mark after a torn one reads %d steps, want 5", got)
	}
	for n := 6; n <= 5000; n++ {
		if err := fs.Mark("h1", mark(n)); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := os.Stat(markPath(p)); err != nil || st.Size() > markCompactAt+200 {
		t.Fatalf("the mark file after 5000 steps: %v, %d bytes", err, st.Size())
	}
	if got := steps(); got != 5000 {
		t.Fatalf("after 5000 marks the record reads %d steps", got)
	}
	if err := fs.Delete("h1"); err != nil {
		t.Fatal(err)
	}
	if err := fs.Mark("h1", mark(5001)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(markPath(p)); !os.IsNotExist(err) {
		t.Fatalf("a mark written for a record that is gone: %v", err)
	}
}
