package session

import (
	"cmp"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"io"
	"math"
	"os"
	"slices"

	"mcpscope/journal"
)

// An opened journal's calls, once ended, go out of memory: each is written
// as a record to a file of the session's own (unlinked, so it goes with the
// process) and read back when asked for. Memory keeps a hash of each one's
// key (and, once a progress asks, of its token): 10-15 bytes a call where
// a Call and its progress took hundreds (400 MB at ten million frames).
//
// Only what an opened journal never changes again goes: an ended tool call
// adopted from the journal, holding nothing in memory (its params and
// result stay in the journal), with no link to another call (MRTR rounds,
// re-issues, tasks, listens stay). While the journal is read, a call the
// correlation asks for again (a late answer, a late progress, a cancel)
// comes back into memory, as it was, and goes again later. A call that
// ever went is found through the hashes from then on, in memory or not;
// the maps by key and token keep the calls that never went, so the newest
// call under a key or token is the one found, as when every call stayed.
// Anything else (a pane, once read) is handed a copy, which nothing writes.

// spillBatch is how many calls the reading makes between sweeps of the
// ones that ended; spillMin, how many calls a journal has before any goes
// out of memory (a small journal keeps its calls, as a live session does).
// A session takes both when it is opened (tests set them low).
var spillBatch, spillMin = 4096, 1 << 16

// spill is where a session's spilled calls are: call i's record in slot i
// of f (slotSize bytes at i*slotSize), or, when longer, at the end of big
// with the slot saying where. A call is out of memory when its place in
// the session's order is nil, so memory needs nothing a call to find it.
type spill struct {
	f, big  *os.File
	bigSize int64
	// buf is slots from slot bufAt on not yet written to f.
	buf          []byte
	bufAt        int
	keys, tokens spillIndex
	// tokensOn: tokens are indexed. Only a progress that finds no call in
	// memory asks for one (a late one, or an unknown token), so the index
	// is made then, from the records, and kept from then on.
	tokensOn   bool
	later      []int        // calls not yet ended at a sweep, to look at again
	back       map[int]bool // calls brought back into memory: hashed already
	from       int          // calls before from have been swept
	loaded     bool         // the journal is read: calls are read back as copies
	rec, slot  []byte       // scratch: a record being written, a slot read
	err        error        // the files failed: nothing more goes (what went is read back)
	n          int          // calls out of memory now
	batch, min int          // spillBatch and spillMin when opened
}

// slotSize is the room a record has in its slot: most records (a tool
// call with its progress) take about a hundred bytes.
const slotSize = 256

func newSpill() *spill {
	var fs [2]*os.File
	for i := range fs {
		f, err := os.CreateTemp("", "mcpscope-calls-*")
		if err != nil {
			if i > 0 {
				fs[0].Close()
			}
			return nil // memory keeps every call, as before
		}
		_ = os.Remove(f.Name()) // it goes with the process
		fs[i] = f
	}
	return &spill{f: fs[0], big: fs[1], batch: spillBatch, min: spillMin}
}

func (sp *spill) close() {
	if sp != nil && sp.err == nil {
		sp.f.Close()
		sp.big.Close()
		sp.err = os.ErrClosed
	}
}

// put writes call i's record (its length, a uvarint, first: appendCall's)
// into its slot, in the buffer.
func (sp *spill) put(i int, rec []byte) error {
	if len(rec)+1 > slotSize {
		if _, err := sp.big.WriteAt(rec, sp.bigSize); err != nil {
			return err
		}
	}
	slot, err := sp.slotFor(i)
	if err != nil {
		return err
	}
	clear(slot)
	if len(rec)+1 <= slotSize {
		slot[0] = 1
		copy(slot[1:], rec)
	} else {
		slot[0] = 2
		binary.PutUvarint(slot[1:], uint64(sp.bigSize))
		sp.bigSize += int64(len(rec))
	}
	return nil
}

// slotFor is slot i's room in the buffer: where it is when the buffer has
// it, else added to it (flushing the buffer first when i is not near).
func (sp *spill) slotFor(i int) ([]byte, error) {
	end := sp.bufAt + len(sp.buf)/slotSize
	switch {
	case i >= sp.bufAt && i < end:
	case i >= end && i-end < 64 && len(sp.buf) < 256<<10:
		// A slot a little further on: the ones between come as the file
		// has them (a call out of memory keeps its record there).
		gap := len(sp.buf)
		sp.buf = append(sp.buf, make([]byte, (i-end+1)*slotSize)...)
		if _, err := sp.f.ReadAt(sp.buf[gap:len(sp.buf)-slotSize], int64(end)*slotSize); err != nil && !errors.Is(err, io.EOF) {
			sp.buf = sp.buf[:gap]
			return nil, err
		}
	default:
		if err := sp.flush(); err != nil {
			return nil, err
		}
		sp.bufAt, sp.buf = i, append(sp.buf, make([]byte, slotSize)...)
	}
	return sp.buf[(i-sp.bufAt)*slotSize:][:slotSize], nil
}

func (sp *spill) flush() error {
	if len(sp.buf) > 0 {
		if _, err := sp.f.WriteAt(sp.buf, int64(sp.bufAt)*slotSize); err != nil {
			return err
		}
	}
	sp.buf = sp.buf[:0]
	return nil
}

// spillSeed makes the hashes of keys and tokens; it is the process's own.
var spillSeed = maphash.MakeSeed()

// spillIndex finds spilled calls by a string's hash: open addressing over
// slots of the hash's top 32 bits and the call's number + 1. A hit is
// checked against the record; a miss costs no reading. Its size is any
// number, grown by half when four fifths are taken (a hash's slot is its
// 32 bits scaled to the size), so it holds 1.25-1.9 slots a call, where
// doubling held up to 2.7: a quarter of what an opened journal keeps.
type spillIndex struct {
	slots []uint64
	n     int
}

func (x *spillIndex) add(s string, i int) {
	if (x.n+1)*5 > len(x.slots)*4 {
		old := x.slots
		x.slots = make([]uint64, max(1024, len(old)+len(old)/2))
		x.n = 0
		for _, v := range old {
			if v != 0 {
				x.put(v)
			}
		}
	}
	x.put(uint64(uint32(maphash.String(spillSeed, s)>>32))<<32 | uint64(i+1))
}

// home is the slot a hash's search starts at.
func (x *spillIndex) home(h32 uint64) int { return int(h32 * uint64(len(x.slots)) >> 32) }

func (x *spillIndex) put(v uint64) {
	for k := x.home(v >> 32); ; k++ {
		if k == len(x.slots) {
			k = 0
		}
		if x.slots[k] == 0 {
			x.slots[k] = v
			x.n++
			return
		}
	}
}

// each calls fn with every call whose string may be s, until fn says stop.
func (x *spillIndex) each(s string, fn func(i int) bool) {
	if len(x.slots) == 0 {
		return
	}
	h := uint64(uint32(maphash.String(spillSeed, s) >> 32))
	for k := x.home(h); ; k++ {
		if k == len(x.slots) {
			k = 0
		}
		v := x.slots[k]
		if v == 0 {
			return
		}
		if v>>32 == h && !fn(int(v&0xFFFFFFFF)-1) {
			return
		}
	}
}

// spillable reports whether c may go out of memory (s.mu held).
func (s *Session) spillable(c *Call) bool {
	if !c.adopted || c.held != nil || c.Method != "tools/call" || !c.st().Ended() || c.st() == StateDetached ||
		c.followed || c.persisted || c.claiming || c.markOff || c.rt == rtInputRequired || c.rt == rtTask {
		return false
	}
	e := c.ex.Load()
	if e == nil {
		return true
	}
	// What an extra may hold and go with the call: the rest links it to
	// other calls, to tasks or to a store.
	if e.failure != nil && (e.failure.Cause != nil || failureKind(e.failure.Kind) < 0) {
		return false
	}
	return e.opts.Timeout == 0 && e.opts.MaxTimeout == 0 && !e.opts.NoProgressToken && e.opts.Headers == nil &&
		e.opts.modernVersion == "" && !e.opts.probe && !e.opts.asTask && e.opts.reissueOf == "" && e.opts.reissues == 0 &&
		e.opts.round == 0 && e.opts.parent == "" && e.opts.listen == nil && e.opts.listenAttempt == 0 &&
		e.round == 0 && e.parent == "" && e.idleFor == 0 && e.hardAt.IsZero() && e.hardLeft == 0 && e.ack == nil &&
		e.reissueWhy == "" && e.sessionID == "" && e.idle == nil && e.hard == nil && e.next == nil && e.chainErr == nil &&
		e.chain == nil && e.taskID == "" && e.listen == nil && e.listenAttempt == 0 && e.relisten == nil &&
		e.wireKey == "" && e.rejoinedBy == nil && e.endedAway == "" && e.handle == "" && e.persistTimer == nil &&
		e.claim == nil && !e.recordGone && e.inDoubt == ""
}

// failureKinds are the kinds a spilled call's failure may have, by number.
var failureKinds = []error{nil, ErrTimeout, ErrIdleTimeout, ErrMaxTimeout, ErrCancelled, ErrClosed, ErrTaskEnded,
	ErrSend, ErrReissued, ErrRoundLimit}

func failureKind(k error) int {
	for i, e := range failureKinds {
		if e == k {
			return i
		}
	}
	return -1
}

// sweepLocked sends out of memory the calls that ended since the last
// sweep, and the ones that were running then and have ended since.
func (s *Session) sweepLocked() {
	sp := s.spill
	if sp == nil || sp.err != nil || s.order.len() < sp.min {
		return
	}
	later := sp.later
	sp.later = nil
	for _, i := range later {
		s.spillCallLocked(i)
	}
	for ; sp.from < s.order.len(); sp.from++ {
		s.spillCallLocked(sp.from)
	}
}

// spillCallLocked sends call i out of memory when it may go, and keeps it
// to look at again when it has not ended yet.
func (s *Session) spillCallLocked(i int) {
	sp, c := s.spill, s.order.at(i)
	if c == nil {
		return
	}
	if !c.st().Ended() && c.adopted && c.Method == "tools/call" {
		sp.later = append(sp.later, i)
		return
	}
	if !s.spillable(c) {
		return
	}
	sp.rec = appendCall(sp.rec[:0], c)
	if err := sp.put(i, sp.rec); err != nil {
		sp.err = err // the call stays in memory, and every one after it
		return
	}
	if sp.back[i] {
		delete(sp.back, i) // going again: hashed when it first went
	} else {
		sp.keys.add(c.Key, i)
		if c.Token != "" && sp.tokensOn {
			sp.tokens.add(c.Token, i)
		}
	}
	if c.Token != "" && s.byToken[c.Token] == c {
		delete(s.byToken, c.Token)
	}
	s.calls.forget(c)
	s.order.set(i, nil)
	sp.n++
}

// spilledLocked is call i read back from its record (nil: it is in
// memory), a copy; with back, while the journal is read, the call itself,
// back in memory to go again at a later sweep (the maps are left as they
// are: it is found through the hashes, spilledByLocked).
func (s *Session) spilledLocked(i int, back bool) *Call {
	sp := s.spill
	if sp == nil || i >= s.order.len() || s.order.at(i) != nil {
		return nil
	}
	c, err := sp.read(i)
	if err != nil {
		// The file failed under the session: a call that says so beats a
		// crash, and the journal still holds its frames.
		c := &Call{s: s, Key: "?", Method: "tools/call", adopted: true, code: codeError}
		c.ex.Store(&callExtra{failure: &Failure{Reason: "could not read the call back from its temporary file: " + err.Error(), Cause: err}})
		return c
	}
	return s.readBackLocked(i, c, back)
}

// readBackLocked is spilledLocked's call i once read from its record.
func (s *Session) readBackLocked(i int, c *Call, back bool) *Call {
	sp := s.spill
	c.s = s
	c.Method, c.Name = s.shared.get(c.Method), s.shared.get(c.Name)
	if sp.loaded {
		c.Token = "" // as dropReadBackIndexes left every ended call
	}
	if !back || sp.loaded {
		return c
	}
	sp.n--
	s.order.set(i, c)
	if sp.back == nil {
		sp.back = map[int]bool{}
	}
	sp.back[i] = true
	sp.later = append(sp.later, i)
	return c
}

// spilledByLocked is the newest call that ever went out of memory whose
// key (or, token, its progress token) is str, nil when none; while the
// journal is read, back in memory (the correlation may change it).
func (s *Session) spilledByLocked(str string, token bool) *Call {
	sp := s.spill
	if sp == nil || sp.keys.n == 0 {
		return nil
	}
	x := &sp.keys
	if token {
		if sp.loaded {
			return nil // no progress comes after the reading
		}
		if !sp.tokensOn {
			s.indexTokensLocked()
		}
		x = &sp.tokens
	}
	best, read := -1, (*Call)(nil) // read: best's call, when read from its record
	x.each(str, func(i int) bool {
		if i <= best {
			return true // an older one
		}
		c, fromRecord := s.order.at(i), false // in memory: brought back
		if c == nil {
			if r, err := sp.read(i); err == nil {
				c, fromRecord = r, true
			}
		}
		if c != nil && (!token && c.Key == str || token && c.Token == str) {
			best, read = i, nil
			if fromRecord {
				read = c
			}
		}
		return true
	})
	switch {
	case best < 0:
		return nil
	case read == nil:
		return s.order.at(best)
	}
	return s.readBackLocked(best, read, true)
}

// indexTokensLocked indexes the tokens of the calls that ever went out of
// memory (a slot written; a call brought back keeps its record there, and
// its token), reading their slots a megabyte at a time, and keeps
// indexing them from now on.
func (s *Session) indexTokensLocked() {
	sp := s.spill
	sp.tokensOn = true
	if err := sp.flush(); err != nil {
		sp.err = err
		return
	}
	const run = 4096
	block := make([]byte, run*slotSize)
	for from := 0; from < s.order.len(); from += run {
		n, err := sp.f.ReadAt(block, int64(from)*slotSize)
		if err != nil && !errors.Is(err, io.EOF) {
			sp.err = err
			return
		}
		for i := from; i < min(from+run, s.order.len()); i++ {
			if (i-from+1)*slotSize > n || block[(i-from)*slotSize] == 0 {
				continue // never went
			}
			b, err := sp.inSlot(block[(i-from)*slotSize:][:slotSize])
			if err != nil {
				continue
			}
			if _, tok, err := keysIn(b); err == nil && tok != "" {
				sp.tokens.add(tok, i)
			}
		}
	}
}

// The record: its length, then the call's fields (see appendCall).

// record is call i's record.
func (sp *spill) record(i int) ([]byte, error) {
	var slot []byte
	if end := sp.bufAt + len(sp.buf)/slotSize; i >= sp.bufAt && i < end {
		slot = sp.buf[(i-sp.bufAt)*slotSize:][:slotSize]
	} else {
		sp.slot = slices.Grow(sp.slot[:0], slotSize)[:slotSize]
		if _, err := sp.f.ReadAt(sp.slot, int64(i)*slotSize); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		slot = sp.slot
	}
	return sp.inSlot(slot)
}

// inSlot is the record a slot holds, or says where.
func (sp *spill) inSlot(slot []byte) ([]byte, error) {
	switch slot[0] {
	case 1:
		n, k := binary.Uvarint(slot[1:])
		if k <= 0 || 1+k+int(n) > len(slot) {
			return nil, errDamaged
		}
		return slot[1+k : 1+k+int(n)], nil
	case 2:
		at, k := binary.Uvarint(slot[1:])
		if k <= 0 {
			return nil, errDamaged
		}
		var head [binary.MaxVarintLen64]byte
		m, err := sp.big.ReadAt(head[:], int64(at))
		n, k := binary.Uvarint(head[:m])
		if k <= 0 {
			return nil, cmp.Or(err, errDamaged)
		}
		b := make([]byte, n)
		if _, err := sp.big.ReadAt(b, int64(at)+int64(k)); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		return b, nil
	}
	return nil, errDamaged
}

var errDamaged = errors.New("a damaged record")

func (sp *spill) read(i int) (*Call, error) {
	b, err := sp.record(i)
	if err != nil {
		return nil, err
	}
	d := decoder{b: b}
	c := decodeCall(&d)
	if d.bad {
		return nil, errDamaged
	}
	return c, nil
}

// keysIn is the key and token a record names.
func keysIn(b []byte) (key, token string, err error) {
	d := decoder{b: b}
	key = d.str()
	d.bytes()
	d.str()
	d.str()
	token = d.str()
	if d.bad {
		return "", "", errDamaged
	}
	return key, token, nil
}

// appendCall appends c's record to b.
func appendCall(b []byte, c *Call) []byte {
	var e encoder
	e.str(c.Key)
	e.bytes(c.ID)
	e.str(c.Method)
	e.str(c.Name)
	e.str(c.Token)
	e.uint(c.Seq)
	e.int(c.started)
	e.int(c.ended)
	e.int(int64(c.updates))
	e.int(int64(c.late))
	var flags uint64
	for k, f := range []bool{c.givenUp, c.isError, c.adopted, c.paramsOut} {
		if f {
			flags |= 1 << k
		}
	}
	e.uint(flags)
	e.uint(uint64(c.rt))
	e.uint(uint64(c.code))
	e.uint(c.resultSeq)
	e.uint(c.respSeq)
	if p := c.progress; e.has(p != nil) {
		e.float(p.value)
		e.float(p.total)
		e.float(p.firstValue)
		e.str(p.message)
		e.int(p.firstAt)
		e.int(p.lastAt)
	}
	if x := c.ex.Load(); e.has(x != nil) {
		e.str(x.unmatched)
		e.str(x.via)
		e.str(x.resultTypeAs)
		if r := x.rpcErr; e.has(r != nil) {
			e.int(r.Code)
			e.str(r.Message)
			e.bytes(r.Data)
		}
		if f := x.failure; f != nil {
			e.uint(1 + uint64(failureKind(f.Kind)))
			e.str(f.Reason)
		} else {
			e.uint(0)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(e.b)))
	return append(b, e.b...)
}

func decodeCall(d *decoder) *Call {
	c := &Call{Key: d.str(), ID: d.bytes(), Method: d.str(), Name: d.str(), Token: d.str(), Seq: d.uint()}
	c.started, c.ended = d.int(), d.int()
	c.updates, c.late = int32(d.int()), int32(d.int())
	flags := d.uint()
	c.givenUp, c.isError, c.adopted, c.paramsOut = flags&1 != 0, flags&2 != 0, flags&4 != 0, flags&8 != 0
	c.rt, c.code = resultTypeCode(d.uint()), stateCode(d.uint())
	if int(c.code) >= len(stateNames) {
		d.bad = true
		c.code = codeError
	}
	c.resultSeq, c.respSeq = d.uint(), d.uint()
	if d.uint() == 1 {
		c.progress = &callProgress{value: d.float(), total: d.float(), firstValue: d.float(), message: d.str(), firstAt: d.int(), lastAt: d.int()}
	}
	if d.uint() == 1 {
		x := &callExtra{unmatched: d.str(), via: d.str(), resultTypeAs: d.str()}
		if d.uint() == 1 {
			x.rpcErr = &journal.RPCError{Code: d.int(), Message: d.str(), Data: d.bytes()}
		}
		if k := d.uint(); k > 0 {
			kind := 0
			if int(k-1) < len(failureKinds) {
				kind = int(k - 1)
			} else {
				d.bad = true
			}
			x.failure = &Failure{Kind: failureKinds[kind], Reason: d.str()}
		}
		c.ex.Store(x)
	}
	return c
}

type encoder struct{ b []byte }

// has writes whether what follows is there (1) or not (0), and says.
func (e *encoder) has(ok bool) bool {
	if ok {
		e.uint(1)
	} else {
		e.uint(0)
	}
	return ok
}

func (e *encoder) uint(v uint64)   { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) int(v int64)     { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) float(v float64) { e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v)) }
func (e *encoder) str(v string)    { e.uint(uint64(len(v))); e.b = append(e.b, v...) }
func (e *encoder) bytes(v []byte) {
	if v == nil {
		e.uint(0)
		return
	}
	e.uint(uint64(len(v)) + 1)
	e.b = append(e.b, v...)
}

type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) uint() uint64 {
	v, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[k:]
	return v
}

// int reads what encoder.int wrote: binary.AppendVarint's zig-zag.
func (d *decoder) int() int64 {
	u := d.uint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (d *decoder) float() float64 {
	if len(d.b) < 8 {
		d.bad = true
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

func (d *decoder) take(n uint64) []byte {
	if n > uint64(len(d.b)) {
		d.bad = true
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string { return string(d.take(d.uint())) }

func (d *decoder) bytes() []byte {
	n := d.uint()
	if n == 0 {
		return nil
	}
	return append([]byte(nil), d.take(n-1)...)
}
