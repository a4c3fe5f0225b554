package journal

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"mcpscope/transport"
)

type readFrame struct {
	seq uint64
	f   transport.Frame
}

// readBoth reads journal with Read and with ReadBorrowed
// (copying each frame's data during the callback, as its readers must).
func readBoth(journal []byte) (eager, borrowed []readFrame, eagerErr, borrowedErr error) {
	_, eagerErr = Read(bytes.NewReader(journal), func(seq uint64, f transport.Frame) error {
		eager = append(eager, readFrame{seq, f})
		return nil
	})
	_, borrowedErr = ReadBorrowed(bytes.NewReader(journal), func(seq uint64, f transport.Frame) error {
		if f.Data != nil {
			f.Data = bytes.Clone(f.Data)
		}
		borrowed = append(borrowed, readFrame{seq, f})
		return nil
	})
	return
}

func sameReads(t *testing.T, journal []byte) {
	t.Helper()
	eager, borrowed, eerr, berr := readBoth(journal)
	if !reflect.DeepEqual(eager, borrowed) {
		t.Fatalf("borrowed read differs:\n eager    %+v\n borrowed %+v", eager, borrowed)
	}
	var ed, bd *Damage
	if (eerr == nil) != (berr == nil) || (eerr != nil && (!errors.As(eerr, &ed) || !errors.As(berr, &bd) || !reflect.DeepEqual(ed, bd))) {
		t.Fatalf("errors differ: eager %v, borrowed %v", eerr, berr)
	}
}

// TestReadJournalBorrowedMatchesReadJournal: the borrowed reader hands
// over the frames Read does, byte for byte, for plain and escaped
// data, lines longer than the read buffer and the scratch buffer, binary
// frames and damaged lines, although its data lives in buffers reused
// from line to line.
func TestReadJournalBorrowedMatchesReadJournal(t *testing.T) {
	at := time.Date(2026, 11, 26, 4, 0, 0, 5, time.UTC)
	msg := func(s string) transport.Frame {
		return transport.Frame{Time: at, Dir: transport.In, Kind: transport.Message, Data: []byte(s)}
	}
	var j []byte
	j = append(j, `{"format":"mcpscope-journal/1","started":"2026-11-26T04:00:00Z","target":"stdio: x","pid":1}`+"\n"...)
	frames := []transport.Frame{
		msg(`{"jsonrpc":"2.0","id":1,"result":{}}`),
		msg("{\"text\":\"tab\\there \\\"quoted\\\" \u00e9 \U0001F600 \u202e\x01\"}"),
		msg(`plain`),
		msg(`{"big":"` + strings.Repeat(`a\"b`, 40000) + `"}`),         // past the read buffer, escaped
		msg(`{"huge":"` + strings.Repeat("x\n\"", 500000) + `"}`),      // past the scratch buffer
		msg(`{"plain":"` + strings.Repeat("0123456789", 10000) + `"}`), // past the read buffer, no escapes
		{Time: at, Dir: transport.In, Kind: transport.Garbage, Data: []byte{0xff, 0x00, '\n', 0xfe}},
		{Time: at, Dir: transport.Local, Kind: transport.Event, Meta: transport.Meta{Event: "exited", ExitCode: new(int)}},
		msg(`{"after":"the last one"}`),
	}
	for i, f := range frames {
		j = AppendRecord(j, uint64(i+1), f)
		if i == 2 {
			j = append(j, "this line is damaged\n"...)
			j = append(j, `{"seq":99,"t":"2026-11-26T04:00:00Z","dir":"in","kind":"message","raw":"a\q"}`+"\n"...)
		}
	}
	eager, _, _, _ := readBoth(j)
	if len(eager) != len(frames) {
		t.Fatalf("Read read %d frames, want %d", len(eager), len(frames))
	}
	sameReads(t, j)
	sameReads(t, append(j, `{"seq":100,"t":"2026-11-26T04:00:00Z","dir":"in","kind":"message","raw":"torn`...))
}

// FuzzReadJournalBorrowed: any two lines after a header read the same
// borrowed as eagerly.
func FuzzReadJournalBorrowed(f *testing.F) {
	f.Add([]byte(`{"seq":7,"t":"2026-01-02T03:04:05.000000006+01:30","dir":"in","kind":"message","raw":"{\"a\":\"\u00e9\n\ud83d\ude00\ud800\"}","meta":{"pid":42}}`),
		[]byte(`{"seq":8,"t":"2026-01-02T03:04:05Z","dir":"out","kind":"message","raw":"x"}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		j := []byte(`{"format":"mcpscope-journal/1","started":"2026-11-26T04:00:00Z","target":"stdio: x","pid":1}` + "\n")
		j = append(append(append(append(j, a...), '\n'), b...), '\n')
		sameReads(t, j)
	})
}
