// Package framestore is what a session holds of its frames: an index of
// every frame, the newest decoded, and the journal behind them from which
// anything older is read back on demand.
package framestore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"time"

	"mcpscope/journal"
	"mcpscope/transport"
)

// Item is one frame as the session understood it. Items are immutable once
// stored: what changes over time (a call's state) lives in Call.
type Item struct {
	Seq   uint64
	Frame transport.Frame
	Env   *journal.Envelope   // the decoded message, when Frame holds one
	Batch []*journal.Envelope // the messages of a batch frame
	Class journal.Class
	// CallKey names the client call this item belongs to (its request,
	// response or progress), "" otherwise.
	CallKey string
	// Note is what the session noticed about this frame ("late response",
	// "response to unknown id 9", "not JSON-RPC").
	Note string
	// Cut: the frame is larger than MaxHeldFrame, so memory holds only
	// its first HeldPrefix bytes in Frame.Data (and an envelope without
	// params or result); Size is its whole length and Store.Bytes reads
	// it all back from the journal.
	Cut  bool
	Size int
}

// Entry is the index's account of one frame: what the index keeps of
// every frame of the session (journal.IndexRecord bytes, in the index file beside
// a journal), enough to count, filter and find frames without reading
// them back.
type Entry struct {
	Seq     uint64
	Time    time.Time
	Dir     transport.Dir
	Kind    transport.Kind
	Class   journal.Class
	Method  string // the JSON-RPC method, "" when none
	CallKey string
	Note    string
	Cut     bool // held in memory as a prefix (see Item.Cut)
}

// Bounds of what memory holds.
const (
	// MaxHeldFrame is the largest frame held whole in memory when a
	// journal has it; a larger one is held as its first HeldPrefix bytes.
	MaxHeldFrame = 1 << 20
	HeldPrefix   = 64 << 10
	// Window is how many decoded frames a journaled session keeps at
	// hand (the newest), WindowBytes how many bytes of them at most;
	// older frames are read back from the journal when asked for.
	Window      = 4096
	WindowBytes = 32 << 20
	// NoJournalWindow and NoJournalBytes bound a session without a
	// journal: it keeps the newest frames and forgets the rest (Dropped).
	NoJournalWindow = 65536
	NoJournalBytes  = 64 << 20
	// maxPaged bounds the frames kept after being read back.
	maxPaged = 1024
	// itemOverhead is what an item costs besides its data, for the
	// window's byte bound.
	itemOverhead = 512
)

// entry is one frame in the index: where its line is in the journal and
// what correlation made of it, as an journal.IndexRecord-byte record holds it.
type entry struct {
	off   int64  // journal offset of the frame's line; -1: not in a journal
	t     int64  // frame time, Unix nanoseconds
	n     uint32 // the line's length, its newline included (0: 4 GiB or more)
	meth  uint16 // method + 1 in the method table (0: none)
	note  uint16 // note + 1 in the note table (0: none)
	dir   transport.Dir
	kind  transport.Kind
	class journal.Class
	flags uint8
	klen  uint8 // the call key's length in key (0: none; keyLong: numbered in the key table)
	key   [keyInline]byte
}

const (
	flagCut uint8 = 1 << iota // the frame is held as a prefix
)

const (
	// keyInline is the longest call key a record holds itself; longer
	// ones (rare: ids are mostly short) are numbered in memory.
	keyInline = journal.IndexRecord - 29
	keyLong   = 0xFF
)

// cachePages is how many pages read back (or just written) memory keeps:
// 1 MiB, 16,384 frames' records (a page read back is one pread).
var cachePages = 8

// putRecord writes e as a record (journal.IndexRecord bytes, little-endian).
func putRecord(b []byte, e *entry) {
	_ = b[journal.IndexRecord-1]
	binary.LittleEndian.PutUint64(b[0:], uint64(e.off))
	binary.LittleEndian.PutUint64(b[8:], uint64(e.t))
	binary.LittleEndian.PutUint32(b[16:], e.n)
	binary.LittleEndian.PutUint16(b[20:], e.meth)
	binary.LittleEndian.PutUint16(b[22:], e.note)
	b[24], b[25], b[26], b[27], b[28] = byte(e.dir), byte(e.kind), byte(e.class), e.flags, e.klen
	copy(b[29:], e.key[:])
}

// getRecord reads a record back.
func getRecord(b []byte) entry {
	_ = b[journal.IndexRecord-1]
	e := entry{off: int64(binary.LittleEndian.Uint64(b[0:])), t: int64(binary.LittleEndian.Uint64(b[8:])),
		n: binary.LittleEndian.Uint32(b[16:]), meth: binary.LittleEndian.Uint16(b[20:]), note: binary.LittleEndian.Uint16(b[22:]),
		dir: transport.Dir(b[24]), kind: transport.Kind(b[25]), class: journal.Class(b[26]), flags: b[27], klen: b[28]}
	copy(e.key[:], b[29:])
	return e
}

// gapEntry stands for a seq the journal skipped (or a record that cannot
// be read back): no frame.
var gapEntry = entry{off: -1}

// Pager reads bytes of the journal back.
type Pager interface {
	ReadBack(p []byte, off int64) error
}

// Store is the session's memory of its frames: an index of every frame
// (Entry, 32 bytes each), the newest frames decoded (the window), and the
// journal behind it from which anything older is read back on demand.
// Without a journal, the window is all there is: older frames are
// forgotten and counted (Dropped). Readers (the UI) pull with Since and
// Get and are woken by Changed; ingest never waits for them.
type Store struct {
	mu       sync.RWMutex
	src      Pager // nil: nothing to read back from
	window   int
	winBytes int

	first uint64 // seq of the oldest entry kept (0: none yet)
	next  uint64 // seq after the newest entry
	cbase uint64 // seq of record 0 (page 0's first)
	nrec  uint64 // records, gaps included (next - cbase)

	// The index: pages of journal.IndexPageRecords records. With an index file (idx), the
	// pages before the last are in the file, and memory holds the last
	// (tail) and a few read back (cache). Without one, or for a page the
	// file failed to take, memory holds them (pages).
	idx       *journal.Index
	tail      []byte
	pages     map[uint64][]byte
	pagesLo   uint64 // no pages below this one (a session without a journal forgets them)
	cmu       sync.Mutex
	cache     map[uint64][]byte
	cacheKeys []uint64
	closed    bool

	ring      []ringSlot // the window: ring[seq % len(ring)]; only seqs in [ringLo, next)
	ringLo    uint64     // oldest seq in the ring
	ringBytes int

	spare []byte // an index page the cache let go of, for the next tail (under mu's write lock)

	methods intern
	notes   intern
	keys    intern

	dropped uint64
	gaps    int            // index entries for seqs a journal skipped (no frame)
	cutSize map[uint64]int // data length of the frames held as a prefix (rare: each is over MaxHeldFrame)
	changed chan struct{}

	pmu        sync.Mutex
	paged      map[uint64]*Item
	pagedOrder []uint64

	// pinned are frames that are not in the journal behind the store (a
	// Feed's frame whose line is unknown, a frame the journal failed to
	// take): kept here, up to maxPinned, since they cannot be read back.
	pinned      map[uint64]*Item
	pinnedOrder []uint64
}

// maxPinned bounds the frames kept because the journal cannot give them
// back.
const maxPinned = 1 << 16

// intern numbers strings so the index holds 16- or 32-bit references.
type intern struct {
	ids  map[string]uint32
	strs []string
	max  int
	last uint32 // the id given last: a flood names one method over and over
}

func (t *intern) id(s string) uint32 {
	if s == "" {
		return 0
	}
	if t.last != 0 && t.strs[t.last-1] == s {
		return t.last
	}
	if id, ok := t.ids[s]; ok {
		t.last = id
		return id
	}
	if len(t.strs) >= t.max {
		return uint32(t.max) // the last slot: "too many to keep"
	}
	if t.ids == nil {
		t.ids = map[string]uint32{}
	}
	t.strs = append(t.strs, s)
	id := uint32(len(t.strs))
	t.ids[s] = id
	return id
}

func (t *intern) str(id uint32) string {
	if id == 0 || int(id) > len(t.strs) {
		return ""
	}
	return t.strs[id-1]
}

// noteOverflow stands for notes past the note table's room.
const noteOverflow = "(a note the session made here; too many distinct notes to keep them all)"

// New makes a store; src is the journal frames are read back from
// (nil: none), idx the index file beside it (nil: the index is kept in
// memory).
func New(src Pager, idx *journal.Index) *Store {
	s := &Store{src: src, idx: idx, window: Window, winBytes: WindowBytes, changed: make(chan struct{}, 1), paged: map[uint64]*Item{},
		pages: map[uint64][]byte{}, cache: map[uint64][]byte{}}
	if src == nil && idx != nil {
		idx.Close()
		s.idx = nil
	}
	if src == nil {
		s.window, s.winBytes = NoJournalWindow, NoJournalBytes
	}
	s.ring = make([]ringSlot, s.window)
	s.methods.max, s.notes.max, s.keys.max = 1<<16-1, 1<<16-1, 1<<32-2
	s.notes.strs = make([]string, 0, 16)
	return s
}

// Add stores an item; pos is its line in the journal (off -1: none). It
// reports whether the store let go of it (it keeps no window, and the
// journal has the frame): then nothing of the store refers to it.
func (s *Store) Add(it *Item, pos journal.LinePos) (free bool) {
	e := entry{off: pos.Off, t: it.Frame.Time.UnixNano(), dir: it.Frame.Dir, kind: it.Frame.Kind, class: it.Class}
	if pos.N < 1<<32 {
		e.n = uint32(pos.N)
	}
	if pos.Off >= 0 && len(it.Frame.Data) > MaxHeldFrame {
		it = cutItem(it)
		e.flags |= flagCut
	}
	s.mu.Lock()
	if it.Cut {
		if s.cutSize == nil {
			s.cutSize = map[uint64]int{}
		}
		s.cutSize[it.Seq] = it.Size
	}
	if s.first == 0 {
		s.first, s.next, s.cbase, s.ringLo = it.Seq, it.Seq, it.Seq, it.Seq
		if s.idx != nil && s.idx.Checking() && s.idx.First() != it.Seq {
			s.idx.Reset() // another numbering: none of its records can agree
		}
	}
	for s.next < it.Seq { // a gap (damaged journal lines): keep seqs dense
		s.appendEntry(&gapEntry)
		s.next++
		s.gaps++
	}
	if m := methodOf(it); m != "" {
		e.meth = uint16(s.methods.id(m))
	}
	if it.Note != "" {
		e.note = uint16(s.notes.id(it.Note))
	}
	if k := it.CallKey; len(k) > keyInline {
		e.klen = keyLong
		binary.LittleEndian.PutUint32(e.key[:], s.keys.id(k))
	} else {
		e.klen = uint8(copy(e.key[:], k))
	}
	s.appendEntry(&e)
	s.next = it.Seq + 1
	s.keep(it)
	free = len(s.ring) == 0
	if pos.Off < 0 && s.src != nil {
		s.pin(it)
		free = false
	}
	s.mu.Unlock()
	s.Notify()
	return free
}

// NoWindow makes the store keep no frames decoded in memory: every frame
// asked for (Since, Get) is read back from the journal. It is for a reader
// that needs only the journal's lines (record without --filter): ingest
// then allocates nothing per frame that outlives the frame's ingest. Without
// a journal to read back from it does nothing and reports false.
func (s *Store) NoWindow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.src == nil {
		return false
	}
	s.ring, s.ringBytes, s.ringLo = nil, 0, s.next
	return true
}

// appendEntry adds the record of seq s.next (called with mu held).
func (s *Store) appendEntry(e *entry) {
	k := s.nrec / journal.IndexPageRecords
	var rec [journal.IndexRecord]byte
	putRecord(rec[:], e)
	s.nrec++
	if s.idx == nil {
		if s.pages[k] == nil {
			s.pages[k] = make([]byte, 0, journal.IndexPageBytes)
		}
		s.pages[k] = append(s.pages[k], rec[:]...)
		return
	}
	if s.tail == nil {
		s.tail, s.spare = s.spare, nil
		if s.tail == nil {
			s.tail = make([]byte, 0, journal.IndexPageBytes)
		}
	}
	s.tail = append(s.tail, rec[:]...)
	if len(s.tail) == journal.IndexPageBytes { // the page is whole: to the file
		s.idx.PutPage(int(k), s.tail)
		if s.idx.Err() != nil {
			s.pages[k] = s.tail // the file failed: memory keeps it
		} else {
			s.cachePage(k, s.tail)
		}
		s.tail = nil
	}
}

// page returns the records of page k, nil when they cannot be had (the
// file failed). Called with mu held (read or write).
func (s *Store) page(k uint64) []byte {
	if s.idx != nil && k == s.nrec/journal.IndexPageRecords {
		return s.tail
	}
	if p := s.pages[k]; p != nil {
		return p
	}
	if s.idx == nil || s.closed {
		return nil
	}
	s.cmu.Lock()
	p := s.cache[k]
	s.cmu.Unlock()
	if p != nil {
		return p
	}
	p = make([]byte, journal.IndexPageBytes)
	if s.idx.ReadPage(int(k), p) != nil {
		return nil
	}
	s.cachePage(k, p)
	return p
}

// cachePage keeps page k among the few read back (or just written).
func (s *Store) cachePage(k uint64, p []byte) {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	if _, ok := s.cache[k]; ok {
		return
	}
	if len(s.cacheKeys) >= cachePages {
		if old := s.cache[s.cacheKeys[0]]; cap(old) == journal.IndexPageBytes {
			// The next tail, once no reader can hold it: appendEntry
			// takes it under mu's write lock (a reader under the read
			// lock may be reading it now).
			s.spare = old[:0]
		}
		delete(s.cache, s.cacheKeys[0])
		s.cacheKeys = append(s.cacheKeys[:0], s.cacheKeys[1:]...)
	}
	s.cache[k] = p
	s.cacheKeys = append(s.cacheKeys, k)
}

// entryAt is the entry of seq, which must be in [first, next): a gap
// when its record cannot be read back.
func (s *Store) entryAt(seq uint64) entry {
	c := newPageCursor()
	return c.entry(s, seq)
}

// pageCursor reads index entries in seq order with one page lookup for
// each page's records (JournalLines and Scan walk thousands in a row).
type pageCursor struct {
	k    uint64
	page []byte
}

func newPageCursor() pageCursor { return pageCursor{k: ^uint64(0)} }

// turn moves the cursor to page k: apart from entry so that entry, a
// step of every walk, stays small enough to inline.
func (c *pageCursor) turn(s *Store, k uint64) { c.k, c.page = k, s.page(k) }

// entry is seq's entry (seq in [first, next), the read lock held): a gap
// when its record cannot be read back.
func (c *pageCursor) entry(s *Store, seq uint64) entry {
	d := seq - s.cbase
	if k := d / journal.IndexPageRecords; k != c.k {
		c.turn(s, k)
	}
	i := int(d%journal.IndexPageRecords) * journal.IndexRecord
	if i+journal.IndexRecord > len(c.page) {
		return gapEntry
	}
	return getRecord(c.page[i : i+journal.IndexRecord])
}

// keyOf is the call key an entry names ("" when none).
func (s *Store) keyOf(e *entry) string {
	switch e.klen {
	case 0:
		return ""
	case keyLong:
		return s.keys.str(binary.LittleEndian.Uint32(e.key[:]))
	}
	return string(e.key[:min(int(e.klen), keyInline)])
}

// Finish writes what the index file lacks (the last page) and stamps
// its header with the journal as it is now, so the next session that
// reads the journal finds an index that agrees with it.
func (s *Store) Finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idx == nil || s.closed {
		return
	}
	if len(s.tail) > 0 {
		s.idx.PutPage(int(s.nrec/journal.IndexPageRecords), s.tail)
	}
	s.idx.Stamp(s.cbase, int64(s.nrec))
}

// Close finishes the index file and lets go of it.
func (s *Store) Close() {
	s.Finish()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idx != nil && !s.closed {
		s.closed = true
		s.idx.Close()
	}
}

// ringSlot is one place of the window: the item and its itemBytes, so
// evicting it later does not touch the item (by then it is cold in the
// cache: reading it was most of keep's time under a flood).
type ringSlot struct {
	it   *Item
	size int
}

// keep puts it in the window, evicting the oldest items past its bounds
// first, so its slot is free (the slot of seq-len(ring) held an item the
// window's byte count then never let go of).
func (s *Store) keep(it *Item) {
	n := uint64(len(s.ring))
	if n == 0 { // NoWindow
		return
	}
	size := itemBytes(it)
	for s.ringLo < it.Seq && (it.Seq-s.ringLo >= n || s.ringBytes+size > s.winBytes) {
		old := &s.ring[s.ringLo%n] // ringLo's item, or nothing (a seq the journal skipped)
		s.ringBytes -= old.size
		*old = ringSlot{}
		s.ringLo++
	}
	s.ring[it.Seq%n] = ringSlot{it: it, size: size}
	s.ringBytes += size
	if s.src == nil && s.ringLo > s.first {
		s.forget(s.ringLo)
	}
}

func itemBytes(it *Item) int { return len(it.Frame.Data) + itemOverhead }

// pin keeps an item the journal cannot give back (called with mu held).
func (s *Store) pin(it *Item) {
	if s.pinned == nil {
		s.pinned = map[uint64]*Item{}
	}
	if len(s.pinnedOrder) >= maxPinned {
		delete(s.pinned, s.pinnedOrder[0])
		s.pinnedOrder = s.pinnedOrder[1:]
	}
	s.pinned[it.Seq] = it
	s.pinnedOrder = append(s.pinnedOrder, it.Seq)
}

// forget drops index entries before seq: a session without a journal
// cannot read them back, so it keeps no account of them either.
func (s *Store) forget(seq uint64) {
	s.dropped += seq - s.first
	s.first = seq
	for ; s.pagesLo < (seq-s.cbase)/journal.IndexPageRecords; s.pagesLo++ {
		delete(s.pages, s.pagesLo)
	}
}

// cutItem is what memory keeps of a frame over MaxHeldFrame: its head,
// and an envelope without the params and result that would pin it all.
func cutItem(it *Item) *Item {
	c := *it
	c.Cut, c.Size = true, len(it.Frame.Data)
	c.Frame.Data = bytes.Clone(it.Frame.Data[:HeldPrefix])
	c.Env = journal.SmallEnvelope(it.Env)
	c.Batch = nil
	return &c
}

// methodOf is the method an item's index entry names.
func methodOf(it *Item) string {
	if it.Env != nil {
		return it.Env.Method
	}
	return ""
}

// Notify wakes one waiting reader; wake-ups coalesce.
func (s *Store) Notify() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// Changed receives a value after items were added or session state changed.
func (s *Store) Changed() <-chan struct{} { return s.changed }

// Len is how many frames the index holds: every frame of the session
// with a journal, the window without one.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return int(s.next-s.first) - s.gaps
}

// First is the oldest seq the index holds (0 when empty); frames before
// it were dropped (a session without a journal).
func (s *Store) First() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.first
}

// Last is the newest seq, 0 when empty.
func (s *Store) Last() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.first == 0 {
		return 0
	}
	return s.next - 1
}

// Dropped counts frames a session without a journal no longer keeps at
// all (it holds a window of NoJournalWindow frames).
func (s *Store) Dropped() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.dropped
}

// IndexMemory is the bytes of index records memory holds: the last page
// and the pages read back, with an index file; every record kept,
// without one.
func (s *Store) IndexMemory() int {
	s.mu.RLock()
	n := cap(s.tail)
	for _, p := range s.pages {
		n += cap(p)
	}
	s.mu.RUnlock()
	s.cmu.Lock()
	for _, p := range s.cache {
		n += cap(p)
	}
	s.cmu.Unlock()
	return n
}

// Journaled reports whether older frames can be read back.
func (s *Store) Journaled() bool { return s.src != nil }

// Entry returns the index entry of seq.
func (s *Store) Entry(seq uint64) (Entry, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.has(seq) {
		return Entry{}, false
	}
	e := s.entryAt(seq)
	return s.public(seq, &e), true
}

func (s *Store) has(seq uint64) bool { return s.first != 0 && seq >= s.first && seq < s.next }

func (s *Store) public(seq uint64, e *entry) Entry {
	out := Entry{Seq: seq, Time: time.Unix(0, e.t), Dir: e.dir, Kind: e.kind, Class: e.class,
		Method: s.methods.str(uint32(e.meth)), CallKey: s.keyOf(e), Cut: e.flags&flagCut != 0}
	if e.note != 0 {
		out.Note = s.noteText(e.note)
	}
	return out
}

func (s *Store) noteText(id uint16) string {
	if int(id) > len(s.notes.strs) {
		return noteOverflow
	}
	return s.notes.str(uint32(id))
}

// Scan calls fn with the index entry of every frame with from <= seq <=
// to (to 0: the newest), in order, until fn returns false. It holds the
// store's read lock: fn must be quick and must not call the store.
func (s *Store) Scan(from, to uint64, fn func(Entry) bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.first == 0 {
		return
	}
	from = max(from, s.first)
	if to == 0 || to >= s.next {
		to = s.next - 1
	}
	c := newPageCursor()
	for seq := from; seq <= to; seq++ {
		e := c.entry(s, seq)
		if !fn(s.public(seq, &e)) {
			return
		}
	}
}

// Get returns the item with seq: from the window, or read back from the
// journal. nil when the store does not have it (a session without a
// journal forgot it). A frame the journal cannot give back is an item
// whose Note says why.
func (s *Store) Get(seq uint64) *Item {
	s.mu.RLock()
	if !s.has(seq) {
		s.mu.RUnlock()
		return nil
	}
	if it := s.inRing(seq); it != nil {
		s.mu.RUnlock()
		return it
	}
	if it := s.pinned[seq]; it != nil {
		s.mu.RUnlock()
		return it
	}
	e := s.entryAt(seq)
	s.mu.RUnlock()
	if e.kind == 0 {
		return nil // a seq the journal skipped
	}
	s.pmu.Lock()
	it := s.paged[seq]
	s.pmu.Unlock()
	if it != nil {
		return it
	}
	it = s.pageIn(seq, e, nil)
	s.pmu.Lock()
	if len(s.pagedOrder) >= maxPaged {
		delete(s.paged, s.pagedOrder[0])
		s.pagedOrder = s.pagedOrder[1:]
	}
	s.paged[seq] = it
	s.pagedOrder = append(s.pagedOrder, seq)
	s.pmu.Unlock()
	return it
}

func (s *Store) inRing(seq uint64) *Item {
	if seq < s.ringLo || len(s.ring) == 0 {
		return nil
	}
	if it := s.ring[seq%uint64(len(s.ring))].it; it != nil && it.Seq == seq {
		return it
	}
	return nil
}

// Since returns up to max items with Seq > seq (max <= 0: all), reading
// back from the journal what the window no longer holds.
func (s *Store) Since(seq uint64, max int) []*Item {
	s.mu.RLock()
	if s.first == 0 || seq+1 >= s.next {
		s.mu.RUnlock()
		return nil
	}
	from := seq + 1
	if from < s.first {
		from = s.first
	}
	n := int(s.next - from)
	if max > 0 && n > max {
		n = max
	}
	out := make([]*Item, n)
	var missing []int
	for i := range out {
		if out[i] = s.inRing(from + uint64(i)); out[i] == nil {
			if out[i] = s.pinned[from+uint64(i)]; out[i] == nil {
				missing = append(missing, i)
			}
		}
	}
	var want []entry
	for _, i := range missing {
		want = append(want, s.entryAt(from+uint64(i)))
	}
	s.mu.RUnlock()
	for k := 0; k < len(missing); {
		// A run of frames whose lines follow each other in the file is
		// read with one read.
		j, span := k+1, int(want[k].n)
		for j < len(missing) && adjacent(want[j-1], want[j]) && span+int(want[j].n) <= sinceRead {
			span += int(want[j].n)
			j++
		}
		var buf []byte
		if j-k > 1 {
			buf = make([]byte, span)
			if s.src.ReadBack(buf, want[k].off) != nil {
				buf, j = nil, k+1
			}
		}
		for ; k < j; k++ {
			var line []byte
			if buf != nil {
				line, buf = buf[:want[k].n], buf[want[k].n:]
			}
			if want[k].kind != 0 { // else a seq the journal skipped
				out[missing[k]] = s.pageIn(from+uint64(missing[k]), want[k], line)
			}
		}
	}
	return slices.DeleteFunc(out, func(it *Item) bool { return it == nil })
}

// sinceRead bounds one read of Since.
const sinceRead = 1 << 20

// adjacent reports whether b's line follows a's in the journal, both
// whole frames read the ordinary way.
func adjacent(a, b entry) bool {
	return a.kind != 0 && b.kind != 0 && a.off >= 0 && a.n != 0 && b.n != 0 &&
		(a.flags|b.flags)&flagCut == 0 && a.off+int64(a.n) == b.off
}

// Bytes returns the exact bytes of frame seq, read back from the journal
// when memory holds only their head (or nothing).
func (s *Store) Bytes(seq uint64) ([]byte, error) {
	s.mu.RLock()
	if !s.has(seq) {
		s.mu.RUnlock()
		return nil, fmt.Errorf("frame #%d is not kept (no journal behind the session)", seq)
	}
	it := s.inRing(seq)
	if it == nil {
		it = s.pinned[seq]
	}
	e := s.entryAt(seq)
	s.mu.RUnlock()
	if it != nil && !it.Cut {
		return it.Frame.Data, nil
	}
	_, f, err := s.readFrame(e, false)
	if err != nil {
		return nil, err
	}
	return f.Data, nil
}

// pageIn reads frame seq back from the journal (line: its bytes, when
// they were read with others) and decodes it again.
func (s *Store) pageIn(seq uint64, e entry, line []byte) *Item {
	it := &Item{Seq: seq, Class: e.class, Frame: transport.Frame{Time: time.Unix(0, e.t), Dir: e.dir, Kind: e.kind}}
	s.mu.RLock()
	it.CallKey = s.keyOf(&e)
	if e.note != 0 {
		it.Note = s.noteText(e.note)
	}
	size := s.cutSize[seq]
	s.mu.RUnlock()
	cut := e.flags&flagCut != 0
	var f transport.Frame
	var err error
	if line != nil {
		_, f, err = journal.ParseLine(bytes.TrimSuffix(line, []byte("\n")), true, false)
	} else {
		_, f, err = s.readFrame(e, cut)
	}
	if err != nil {
		it.Note = "not readable from the journal: " + err.Error()
		return it
	}
	it.Frame = f
	if cut {
		it.Cut, it.Size = true, size
		if len(f.Data) > HeldPrefix {
			it.Frame.Data = f.Data[:HeldPrefix]
		}
		it.Env = journal.DecodeHead(f.Data)
		return it
	}
	if f.Kind == transport.Message {
		it.Env, it.Batch, _ = journal.DecodeClass(f.Data)
	}
	return it
}

// readFrame reads an entry's line back. head reads only the start of a
// huge line: the frame then holds the part of its data that is there.
func (s *Store) readFrame(e entry, head bool) (uint64, transport.Frame, error) {
	if s.src == nil || e.off < 0 {
		return 0, transport.Frame{}, fmt.Errorf("the frame is not in a journal")
	}
	n := int(e.n)
	if n == 0 {
		return 0, transport.Frame{}, fmt.Errorf("the frame's line is over 4 GiB")
	}
	if head {
		n = min(n, HeldPrefix+4096)
	}
	buf := make([]byte, n)
	if err := s.src.ReadBack(buf, e.off); err != nil {
		return 0, transport.Frame{}, err
	}
	cut := n < int(e.n)
	if !cut {
		buf = bytes.TrimSuffix(buf, []byte("\n"))
	}
	return journal.ParseLine(buf, true, cut)
}
