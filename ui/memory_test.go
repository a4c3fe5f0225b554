package ui

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"mcpscope/framestore"
	"mcpscope/journal"
	"mcpscope/session"
)

// journaledSession is a live session over the fake transport that writes
// a journal, as every session does unless told not to.
func journaledSession(t testing.TB, r session.Responder) (*session.Session, *fakeTransport) {
	t.Helper()
	j, err := journal.Create(filepath.Join(t.TempDir(), "j.jsonl"), "fake")
	if err != nil {
		t.Fatal(err)
	}
	f := newFake()
	s := session.New(f, session.Options{Responder: r, Journal: j, Timeout: -1, MaxTimeout: -1})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, f
}

func logLine(i int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"line %d"}}`, i)
}

// The model keeps no frames: after a flood its memory is the store's
// index and its own rows (tens of bytes a frame), however many frames
// went by. It used to keep every item twice over (~1 KiB a frame).
func TestModelMemoryPerFrame(t *testing.T) {
	s, f := journaledSession(t, nil)
	m := newTestModel(t, s, 120, 40)
	n := 100_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < n; i++ {
		f.inject(logLine(i))
		if i%1000 == 0 {
			m.Update(storeChangedMsg{})
		}
	}
	m.Update(storeChangedMsg{})
	if got := m.h.noteLen(); got != n {
		t.Fatalf("the pane has %d rows, want %d", got, n)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(n)
	t.Logf("%.0f bytes of live heap per frame after %d frames", per, n)
	if per > 200 {
		t.Fatalf("the model and its session hold %.0f bytes per frame after %d frames; want tens (an index, not the frames)", per, n)
	}
	runtime.KeepAlive(m)
}

// Memory stays flat under a long flood: the index's records go to the
// file beside the journal, memory keeps a few pages of them, and a pane's
// rows of consecutive frames cost 8 bytes a block of 512. At 2n frames the
// index holds what it held at n (it used to grow by ~45 bytes a frame).
func TestModelMemoryFlatAfterTheBurst(t *testing.T) {
	s, f := journaledSession(t, nil)
	m := newTestModel(t, s, 120, 40)
	n := 100_000
	flood := func(from int) {
		for i := from; i < from+n; i++ {
			f.inject(logLine(i))
			if i%1000 == 0 {
				m.Update(storeChangedMsg{})
			}
		}
		m.Update(storeChangedMsg{})
	}
	flood(0)
	held := s.Store().IndexMemory()
	flood(n)
	if got := m.h.noteLen(); got != 2*n {
		t.Fatalf("the pane has %d rows, want %d", got, 2*n)
	}
	if now := s.Store().IndexMemory(); now > held || now > 8<<20 {
		t.Fatalf("the store's index holds %d bytes in memory at %d frames, %d at %d: it grows with the session", now, 2*n, held, n)
	}
	for k := range m.h.rows {
		if l := &m.h.rows[k]; len(l.words) > 0 || len(l.blocks) > 2*n/blockSeqs+1 {
			t.Fatalf("rows of kind %d after a flood of consecutive frames: %d blocks, %d bitmap words; want a block a %d frames and no bitmap", k, len(l.blocks), len(l.words), blockSeqs)
		}
	}
	press(m, "focus-next", "top")
	if !strings.Contains(screen(m), "line 0") {
		t.Fatalf("the top of the pane does not show the first frame:\n%s", screen(m))
	}
}

// A pane's rows give back the frame numbers added, whatever their pattern
// (floods, alternating kinds, gaps of whole blocks), and trim as the
// forgotten frames go, letting old blocks go too.
func TestMemorySeqListRows(t *testing.T) {
	var l seqList
	l.base = 5
	var want []uint64
	rng := rand.New(rand.NewPCG(1, 2))
	seq := uint64(5)
	for seq < 5_000_000 {
		switch p := rng.IntN(100); {
		case p < 2: // a gap of whole blocks
			seq += uint64(rng.IntN(3 * blockSeqs))
		case p < 10: // a flood
			for range rng.IntN(2000) {
				l.add(seq)
				want = append(want, seq)
				seq++
			}
		default: // kinds alternating
			if seq%3 != 0 {
				l.add(seq)
				want = append(want, seq)
			}
			seq++
		}
	}
	check := func(from int) {
		t.Helper()
		if l.len() != len(want)-from {
			t.Fatalf("len %d, want %d", l.len(), len(want)-from)
		}
		for i := from; i < len(want); i += 1 + rng.IntN(97) {
			if got := l.at(i - from); got != want[i] {
				t.Fatalf("row %d is frame %d, want %d", i-from, got, want[i])
			}
		}
		if got := l.at(len(want) - 1 - from); got != want[len(want)-1] {
			t.Fatalf("the last row is frame %d, want %d", got, want[len(want)-1])
		}
	}
	check(0)
	blocks := len(l.blocks)
	prev := 0
	for _, below := range []uint64{1000, 3_000_000, 4_000_000} {
		n := l.trimBelow(below)
		from := sortSearch(want, below)
		if n != from-prev {
			t.Fatalf("trimBelow(%d) dropped %d rows, want %d", below, n, from-prev)
		}
		prev = from
		check(from)
	}
	if len(l.blocks) >= blocks/2 {
		t.Fatalf("after trimming most rows %d blocks of %d are held: the old ones do not go", len(l.blocks), blocks)
	}
}

// Rows of alternating kinds cost a bitmap, not 8 bytes a run: a million
// frames, every other one a row, in about a bit and a fraction a frame.
func TestMemorySeqListAlternatingIsABitmap(t *testing.T) {
	var l seqList
	l.base = 1
	const frames = 1_000_000
	for seq := uint64(1); seq <= frames; seq += 2 {
		l.add(seq)
	}
	if bytes := 8*len(l.blocks) + 8*len(l.words); bytes > frames/512*72+72 {
		t.Fatalf("%d rows over %d frames hold %d bytes; want at most %d", l.len(), frames, bytes, frames/512*72+72)
	}
	if got := l.at(l.len() - 1); got != frames-1 {
		t.Fatalf("the last row is frame %d, want %d", got, frames-1)
	}
}

func sortSearch(s []uint64, v uint64) int {
	for i, x := range s {
		if x >= v {
			return i
		}
	}
	return len(s)
}

// Scrolling back past the window reads the oldest frames back from the
// journal: the first row is the first frame, and its detail shows it.
func TestNotesScrollBackToTheFirstFrame(t *testing.T) {
	s, f := journaledSession(t, nil)
	m := newTestModel(t, s, 120, 40)
	n := 3 * framestore.Window
	for i := 0; i < n; i++ {
		f.inject(logLine(i))
	}
	m.Update(storeChangedMsg{})
	press(m, "focus-next", "top")
	if !strings.Contains(screen(m), "line 0") {
		t.Fatalf("the top of the pane does not show the first frame:\n%s", screen(m))
	}
	press(m, "open")
	if sc := screen(m); !strings.Contains(sc, `"data": "line 0"`) {
		t.Fatalf("the detail of the first frame:\n%s", sc)
	}
}

// A session without a journal keeps a window and says so at the top of
// the pane.
func TestNoJournalSaysWhatItForgot(t *testing.T) {
	s, f := liveSession(t, nil)
	m := newTestModel(t, s, 120, 40)
	for i := 0; i < framestore.NoJournalWindow+50; i++ {
		f.inject(logLine(i))
		if i%10000 == 0 {
			m.Update(storeChangedMsg{})
		}
	}
	m.Update(storeChangedMsg{})
	press(m, "focus-next", "top")
	sc := screen(m)
	if !strings.Contains(sc, "older frames not kept (no journal)") || !strings.Contains(sc, "older rows not kept: no journal") {
		t.Fatalf("no word of the forgotten frames:\n%s", sc)
	}
	if !strings.Contains(sc, "line 50") {
		t.Fatalf("the oldest kept frame is not at the top:\n%s", sc)
	}
	if got := m.h.noteLen(); got != framestore.NoJournalWindow {
		t.Fatalf("%d rows, want the window (%d)", got, framestore.NoJournalWindow)
	}
}
