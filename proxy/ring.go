package proxy

// ring keeps the last ringFrames records (at most ringBytes of them) for
// subscribe-after. It copies them into storage of its own, reused round and
// round, so that nothing is allocated per record and the writer can reuse
// its buffer; what it hands out is copied again (see each). A record over
// ringRecordMax is kept as its seq only: the viewer reads it from the
// journal.
//
// The store grows (doubling, up to ringBytes) only when a record would
// otherwise push out older ones while fewer than ringFrames are kept.
type ring struct {
	ents  []ringEntry // circular, oldest at ents[start]
	start int
	count int
	store []byte
	// Positions only grow: a record at position p is at store[p%len(store):],
	// never split across the store's end (a record that would be starts at
	// the next multiple of len(store)). The records kept lie between the
	// oldest one's position and head, so they never overlap.
	head  int
	bytes int // bytes of the records kept
}

type ringEntry struct {
	seq  uint64
	pos  int
	n    int
	kept bool // false: too big, read it from the journal
}

const ringStoreMin = 64 << 10

func (r *ring) len() int { return r.count }

// at is the i-th entry, oldest first.
func (r *ring) at(i int) *ringEntry { return &r.ents[(r.start+i)&(ringFrames-1)] }

// Both sizes are powers of two (the store's is ringStoreMin doubled, at most
// ringBytes), so a position is cut to its slot with a mask, not a division:
// every line of a flood passes through put, and its divisions were most of
// publish's time (a 1M-line stdio flood, one CPU profile each: publish 90
// ms of 680 before, 20 ms of 550 after). These fail to compile otherwise.
var (
	_ [0]struct{} = [ringFrames & (ringFrames - 1)]struct{}{}
	_ [0]struct{} = [ringStoreMin & (ringStoreMin - 1)]struct{}{}
	_ [0]struct{} = [ringBytes & (ringBytes - 1)]struct{}{}
)

// slot is where position p lies in the store.
func (r *ring) slot(p int) int { return p & (len(r.store) - 1) }

func (r *ring) pop() {
	e := r.at(0)
	r.bytes -= e.n
	*e = ringEntry{}
	r.start = (r.start + 1) & (ringFrames - 1)
	r.count--
}

func (r *ring) push(e ringEntry) {
	if r.ents == nil {
		r.ents = make([]ringEntry, ringFrames) // at and pop rely on this length
	}
	if r.count == len(r.ents) {
		r.pop()
	}
	*r.at(r.count) = e
	r.count++
	r.bytes += e.n
}

// put keeps rec, the record of seq.
func (r *ring) put(seq uint64, rec []byte) {
	n := len(rec)
	if n > ringRecordMax {
		r.push(ringEntry{seq: seq, pos: r.head})
		return
	}
	if len(r.store) == 0 {
		r.grow(n)
	}
	if r.count == ringFrames {
		r.pop() // the frame bound first: its room may be enough
	}
	for r.count > 0 && r.bytes+n > ringBytes {
		r.pop()
	}
	pos := r.place(n)
	if r.count > 0 && r.at(0).pos < pos+n-len(r.store) && len(r.store) < ringBytes {
		r.grow(n) // rather than push out records while fewer than ringFrames are kept
		pos = r.place(n)
	}
	for r.count > 0 && r.at(0).pos < pos+n-len(r.store) {
		r.pop()
	}
	off := r.slot(pos)
	copy(r.store[off:off+n], rec)
	r.push(ringEntry{seq: seq, pos: pos, n: n, kept: true})
	r.head = pos + n
}

// place is the position a record of n bytes gets: head, or the start of
// the store's next round when it would not fit before the store's end.
func (r *ring) place(n int) int {
	size := len(r.store)
	if size == 0 {
		return r.head
	}
	if r.head&(size-1)+n > size {
		return r.head&^(size-1) + size
	}
	return r.head
}

// grow moves the records kept to a store at least twice as big (up to
// ringBytes), one after the other from its start.
func (r *ring) grow(n int) {
	size := max(ringStoreMin, 2*len(r.store))
	for size < r.bytes+n && size < ringBytes {
		size *= 2
	}
	store := make([]byte, min(size, ringBytes))
	w := 0
	for i := 0; i < r.count; i++ {
		e := r.at(i)
		if e.kept {
			off := r.slot(e.pos)
			copy(store[w:], r.store[off:off+e.n])
		}
		e.pos = w
		w += e.n
	}
	r.store, r.head = store, w
}

// each calls fn with the records after seq after, oldest first, each a
// copy of its own (rec nil: too big, not kept).
func (r *ring) each(after uint64, fn func(seq uint64, rec []byte)) {
	for i := 0; i < r.count; i++ {
		e := r.at(i)
		if e.seq <= after {
			continue
		}
		var rec []byte
		if e.kept {
			off := r.slot(e.pos)
			rec = append([]byte(nil), r.store[off:off+e.n]...)
		}
		fn(e.seq, rec)
	}
}

// firstSeq is the seq of the oldest record kept, 0 when none is.
func (r *ring) firstSeq() uint64 {
	if r.count == 0 {
		return 0
	}
	return r.at(0).seq
}
