package journal

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
	if _, err := Read(f, func(_ uint64, fr transport.Frame) error { got = len(fr.Data); return nil }); err != nil {
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

// Journals written before meta moved ahead of the data read the same.
func TestReadJournalOldLayout(t *testing.T) {
	line := `{"seq":7,"t":"2026-01-02T03:04:05.000000006Z","dir":"in","kind":"message","raw":"{\"a\":\"\u00e9\n\ud83d\ude00\ud800\"}","meta":{"pid":42}}` + "\n"
	var got transport.Frame
	if _, err := Read(strings.NewReader(line), func(_ uint64, f transport.Frame) error { got = f; return nil }); err != nil {
		t.Fatal(err)
	}
	if string(got.Data) != "{\"a\":\"é\n😀\uFFFD\"}" || got.Meta.PID != 42 || got.Time.Nanosecond() != 6 {
		t.Fatalf("old layout read as %q %+v", got.Data, got.Meta)
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
	h, err := Read(bytes.NewReader(b), func(seq uint64, _ transport.Frame) error {
		seqs = append(seqs, seq)
		return nil
	})
	var d *Damage
	if !errors.As(err, &d) {
		t.Fatalf("want a *Damage, got %v", err)
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
		h, err := Read(strings.NewReader(content), func(uint64, transport.Frame) error { n++; return nil })
		return h, n, err
	}
	if h, n, err := read(""); err != nil || n != 0 || h.Format != "" {
		t.Fatalf("empty: %+v %d %v", h, n, err)
	}
	if h, n, err := read(`{"format":"mcpscope-journal/1","target":"x"}` + "\n"); err != nil || n != 0 || h.Format != Format {
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
