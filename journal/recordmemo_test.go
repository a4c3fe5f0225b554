package journal

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"mcpscope/transport"
)

// TestRecordMemoIsAppendRecord: whatever came before it, a record the
// journal's memo writes is appendRecord's, byte for byte. The frames are
// a flood's lines, changed from a random point on (the memo's case) or
// made of pieces that each escape their own way: quotes, controls, DEL,
// characters of 2 to 4 bytes, ones a terminal must not see, and data that
// is not UTF-8; with times, directions, kinds and metas that change.
func TestRecordMemoIsAppendRecord(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"flood","data":"n `,
		`"`, `\`, "\n", "\x01", "\x7f", "é", "日本", "\u202e", "\u2028", "\ufeff", "\u0085", "x",
		"0123456789abcdef", "}}", " ", "\xf0\x9f\x98\x80"}
	t0 := time.Date(2026, 11, 27, 1, 2, 3, 456789000, time.UTC)
	dirs := []transport.Dir{transport.In, transport.Out}
	var m recordMemo
	var prev []byte
	for n := range 100000 {
		var data []byte
		switch r.IntN(4) {
		case 0:
			data = append(data, prev[:r.IntN(len(prev)+1)]...)
		case 1:
			data = append(data, prev...)
		}
		for k := r.IntN(6); k > 0; k-- {
			data = append(data, pieces[r.IntN(len(pieces))]...)
		}
		if r.IntN(50) == 0 {
			data = append(data, 0xff) // not UTF-8: b64
		}
		f := transport.Frame{Time: t0.Add(time.Duration(r.IntN(3)) * time.Microsecond), Dir: dirs[r.IntN(2)],
			Kind: transport.Message, Data: data, Meta: transport.Meta{PID: r.IntN(2) * 4242}}
		switch r.IntN(40) {
		case 0:
			f.Kind = transport.Stderr
		case 1:
			f.Kind = transport.Garbage
		case 2:
			f.Meta.Via = "x"
		}
		seq := uint64(n + 1)
		got := m.append([]byte("before"), seq, &f)
		if want := appendRecord([]byte("before"), seq, &f); !bytes.Equal(got, want) {
			t.Fatalf("frame %d (%q):\n got %s\nwant %s", n, data, got, want)
		}
		prev = data
	}
}

// SeqDigits counts up as strconv writes, across carries and new digits,
// and after a seq that is not the next.
func TestSeqDigits(t *testing.T) {
	var d SeqDigits
	for _, start := range []uint64{1, 7, 98, 999, 1_099_995, 5, 1<<64 - 3} {
		for seq := start; seq >= start && seq < start+12; seq++ {
			if got, want := string(d.Append(nil, seq)), strconv.FormatUint(seq, 10); got != want {
				t.Fatalf("seq %d written %s", seq, got)
			}
		}
	}
}
