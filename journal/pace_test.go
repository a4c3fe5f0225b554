package journal

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"mcpscope/testkit/waitfor"
)

// TestJournalWriterWakesWithoutFlush: a frame appended and never flushed
// reaches the file by itself (the writer is woken Pace after the
// first frame queued), and a queue past journalWakeBytes wakes it at once.
func TestJournalWriterWakesWithoutFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := Create(path, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	header := st.Size()
	waitSize := func(want int64) {
		t.Helper()
		var size int64
		if !waitfor.Within(time.Minute, func() bool { // a hang guard only
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			size = st.Size()
			return size >= want
		}) {
			t.Fatalf("the journal holds %d bytes, want %d: the writer was not woken", size, want)
		}
	}
	off, n, err := j.Append(1, frameIn(1, progressLine(1)))
	if err != nil || off != header {
		t.Fatalf("Append: off %d (want %d), %v", off, header, err)
	}
	waitSize(header + int64(n))
	end := header + int64(n)
	for i := uint64(2); end-header-int64(n) < 2*journalWakeBytes; i++ {
		_, n2, err := j.Append(i, frameIn(int(i), progressLine(int(i))))
		if err != nil {
			t.Fatal(err)
		}
		end += int64(n2)
	}
	waitSize(end)
}
