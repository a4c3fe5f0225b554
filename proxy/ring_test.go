package proxy

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// The ring keeps the newest records, intact, within its bounds: at most
// ringFrames of them, ringBytes of records and a store of ringBytes; and
// it keeps all of the last ringFrames when they take less than ringBytes
// (less the room a record may waste at the store's end).
func TestRingKeepsTheNewestWithinBounds(t *testing.T) {
	oversized := bytes.Repeat([]byte{'z'}, ringRecordMax+1)
	for _, tc := range []struct {
		name     string
		size     func(r *rand.Rand) int
		bigEvery int
		puts     uint64
	}{
		{"flood lines", func(r *rand.Rand) int { return 250 + r.IntN(100) }, 0, 3*ringFrames + 500},
		{"mixed", func(r *rand.Rand) int { return 1 + r.IntN(8<<10) }, 97, 3*ringFrames + 500},
		{"large", func(r *rand.Rand) int { return 64<<10 + r.IntN(ringRecordMax-64<<10) }, 13, 400},
		{"tiny", func(r *rand.Rand) int { return 2 + r.IntN(10) }, 5, 3*ringFrames + 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(3, 4))
			var ring ring
			var sizes []int
			record := func(seq uint64) []byte {
				n := sizes[seq-1]
				return append([]byte(fmt.Sprintf("%d:", seq)), bytes.Repeat([]byte{byte('a' + seq%26)}, n)...)[:n]
			}
			for seq := uint64(1); seq <= tc.puts; seq++ {
				n := tc.size(rnd)
				if tc.bigEvery > 0 && seq%uint64(tc.bigEvery) == 0 {
					n = ringRecordMax + 1
				}
				sizes = append(sizes, n)
				if n > ringRecordMax {
					ring.put(seq, oversized) // refused whatever it holds; making one each time cost seconds
				} else {
					ring.put(seq, record(seq))
				}

				if ring.count > ringFrames || ring.bytes > ringBytes || len(ring.store) > ringBytes {
					t.Fatalf("seq %d: %d frames, %d bytes, store %d", seq, ring.count, ring.bytes, len(ring.store))
				}
				// A full look (each copies up to ringBytes out, and every
				// record is made again to compare) every 509th put, on a
				// different wrap of the store each time, and at the end: a
				// look every 97th put took 10-20 s a case under -race.
				if seq%509 != 0 && seq < tc.puts-3 {
					continue
				}
				want := seq - uint64(ring.count) + 1 // the kept ones are the newest
				total := 0
				ring.each(0, func(s uint64, got []byte) {
					if s != want {
						t.Fatalf("seq %d: ring has %d where %d is due", seq, s, want)
					}
					if sizes[s-1] > ringRecordMax {
						if got != nil {
							t.Fatalf("seq %d: record %d over ringRecordMax kept", seq, s)
						}
					} else {
						if rec := record(s); !bytes.Equal(got, rec) {
							t.Fatalf("seq %d: record %d is %.20q…, want %.20q…", seq, s, got, rec)
						}
						total += len(got)
					}
					want++
				})
				if want != seq+1 {
					t.Fatalf("seq %d: ring ends at %d", seq, want-1)
				}
				if total != ring.bytes {
					t.Fatalf("seq %d: ring counts %d bytes, holds %d", seq, ring.bytes, total)
				}
				// Nothing newer was pushed out that fitted.
				if uint64(ring.count) < min(seq, ringFrames) {
					fit := 0
					for _, n := range sizes[seq-uint64(ring.count)-1 : seq] {
						if n <= ringRecordMax {
							fit += n
						}
					}
					if fit <= ringBytes-2*ringRecordMax {
						t.Fatalf("seq %d: only %d frames kept, but %d bytes with one more would fit", seq, ring.count, fit)
					}
				}
			}
		})
	}
}

func TestRingEachCopies(t *testing.T) {
	var ring ring
	ring.put(1, []byte("one"))
	ring.each(0, func(_ uint64, rec []byte) { rec[0] = 'X' })
	ring.each(0, func(_ uint64, rec []byte) {
		if string(rec) != "one" {
			t.Fatalf("ring record changed through a copy: %q", rec)
		}
	})
}
