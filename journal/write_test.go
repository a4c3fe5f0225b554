package journal

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Append returns where each line lands; what the writer has not written
// yet reads back from its queue, and everything is in the file after Flush.
func TestJournalPositions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := Create(path, "test")
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
		if err := j.ReadBack(b, p.off); err != nil {
			t.Fatal(err)
		}
		seq, f, err := ParseLine(b[:p.n-1], true, false)
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

// A closed journal is still read back (record prints the frames that came
// in while its session closed), from its path while that names the same
// file; a file put in its place is not read as the
func TestJournalReadsBackOnceClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := Create(path, "test")
	if err != nil {
		t.Fatal(err)
	}
	f := frameIn(1, progressLine(1))
	off, n, err := j.Append(1, f)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, n)
	if err := j.ReadBack(got, off); err != nil || !bytes.Equal(got, AppendRecord(nil, 1, f)) {
		t.Fatalf("read back after Close: %q (%v)", got, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := j.ReadBack(got, off); err == nil {
		t.Fatal("a file put in the closed journal's place was read as the journal")
	}
}
