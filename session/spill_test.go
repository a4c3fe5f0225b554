package session

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"mcpscope/framestore"
	"mcpscope/transport"
)

// spillJournal is a journal whose calls end every way an opened journal's
// can, with what comes after an end (a late answer, a late progress, a
// cancel, an id used again), among calls that stay in memory.
func spillJournal(t *testing.T) string {
	t.Helper()
	frames := []transport.Frame{
		out(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`),
		in(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`),
		out(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"a"},"_meta":{"progressToken":"p1"}}}`),
		in(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1,"total":4,"message":"one"}}`),
		out(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fetch","_meta":{"progressToken":"p2"}}}`),
		in(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":3,"total":4,"message":"three"}}`),
		in(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"found"}]}}`),
		out(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"the user pressed x"}}`),
		out(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fail"}}`),
		in(`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"no such tool","data":{"tool":"fail"}}}`),
		out(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow"}}`),
		out(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4,"reason":"timeout"}}`),
		out(`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{}}`),
		in(`{"jsonrpc":"2.0","id":5,"result":{"tools":[{"name":"search","inputSchema":{"type":"object"}}]}}`),
	}
	// Calls enough that sweeps come between them, each with progress.
	for i := 10; i < 40; i++ {
		frames = append(frames,
			out(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t%d","_meta":{"progressToken":%d}}}`, i, i%3, i)),
			in(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%d,"progress":%d}}`, i, i)))
		if i%5 != 0 {
			frames = append(frames, in(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[],"isError":%v}}`, i, i%7 == 0)))
		}
	}
	frames = append(frames,
		// After the ends: what must find the calls gone out of memory.
		in(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p2","progress":1}}`),
		in(`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`),
		in(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":4,"total":4}}`),
		in(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`),
		in(`{"jsonrpc":"2.0","id":12,"result":{"content":[]}}`),
		in(`{"jsonrpc":"2.0","id":99,"result":{"content":[]}}`),
		// A token used again by a call while one that had it is brought
		// back (its late answer): the progress is the running call's.
		out(`{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":"shared"}}}`),
		in(`{"jsonrpc":"2.0","id":50,"result":{"content":[]}}`),
		out(`{"jsonrpc":"2.0","id":51,"method":"tools/call","params":{"name":"b","_meta":{"progressToken":"shared"}}}`),
		in(`{"jsonrpc":"2.0","id":50,"result":{"content":[]}}`),
		in(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"shared","progress":1}}`),
		in(`{"jsonrpc":"2.0","id":51,"result":{"content":[]}}`),
		// An id used again once its call ended.
		out(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"again"}}`),
		in(`{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}`),
		in(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`),
		out(`{"jsonrpc":"2.0","id":"never","method":"tools/call","params":{"name":"hang"}}`),
	)
	return writeJournal(t, "stdio: node server.js", frames...)
}

// openSpilling opens path with its calls going out of memory as soon as
// they may (every frame a sweep), or never.
func openSpilling(t *testing.T, path string, spilling bool) *Session {
	t.Helper()
	batch, least := spillBatch, spillMin
	t.Cleanup(func() { spillBatch, spillMin = batch, least })
	spillBatch, spillMin = 1, 0
	if !spilling {
		spillMin = math.MaxInt
	}
	s, _, err := Open(path)
	spillBatch, spillMin = batch, least
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	waitLoaded(t, s)
	return s
}

// An opened journal whose calls went out of memory shows what one whose
// calls stayed shows: every call, in order and by key, its state, times,
// progress, errors, late answers and what is read back; every frame's note
// and call.
func TestSpilledCallsReadBackAsTheyWere(t *testing.T) {
	path := spillJournal(t)
	kept, gone := openSpilling(t, path, false), openSpilling(t, path, true)
	if kept.spill.n != 0 {
		t.Fatalf("%d calls went out of memory with spilling off", kept.spill.n)
	}
	n := kept.CallCount()
	if gone.CallCount() != n || n < 30 {
		t.Fatalf("%d calls spilling, %d not; want the same, 30 or more", gone.CallCount(), n)
	}
	gone.mu.Lock()
	out := 0
	for i := range gone.order.len() {
		if gone.order.at(i) == nil {
			out++
		}
	}
	gone.mu.Unlock()
	if out != gone.spill.n || out < n/2 {
		t.Fatalf("%d of %d calls went out of memory (the spill counts %d); want most of them", out, n, gone.spill.n)
	}
	for i := range n {
		a, b := kept.CallAt(i), gone.CallAt(i)
		sa, sb := a.Snapshot(), b.Snapshot()
		if !reflect.DeepEqual(sa, sb) {
			t.Errorf("call %d (%s):\nkept  %+v\nspilt %+v", i, sa.Key, sa, sb)
		}
		ra, ea := a.Result()
		rb, eb := b.Result()
		if string(a.Params()) != string(b.Params()) || string(ra) != string(rb) || (ea == nil) != (eb == nil) {
			t.Errorf("call %d (%s) reads back params %s result %s (%v), want %s and %s (%v)", i, sa.Key, b.Params(), rb, eb, a.Params(), ra, ea)
		}
		if ka, kb := kept.Lookup(sa.Key), gone.Lookup(sa.Key); !reflect.DeepEqual(ka.Snapshot(), kb.Snapshot()) {
			t.Errorf("Lookup(%s): kept %+v, spilt %+v", sa.Key, ka.Snapshot(), kb.Snapshot())
		}
	}
	var notes []string
	kept.Store().Scan(1, 0, func(e framestore.Entry) bool {
		notes = append(notes, e.CallKey+" | "+e.Note)
		return true
	})
	k := 0
	gone.Store().Scan(1, 0, func(e framestore.Entry) bool {
		if k < len(notes) && e.CallKey+" | "+e.Note != notes[k] {
			t.Errorf("frame %d: %q, want %q", e.Seq, e.CallKey+" | "+e.Note, notes[k])
		}
		k++
		return true
	})
	if k != len(notes) {
		t.Errorf("%d frames spilling, %d not", k, len(notes))
	}
	a, b := kept.Info(), gone.Info()
	a.Started = b.Started // when each was opened
	if !reflect.DeepEqual(a, b) {
		t.Errorf("info:\nkept  %+v\nspilt %+v", a, b)
	}
}

// A call read back once the journal is read is a copy: it does not come
// back into memory, and asking again reads it again.
func TestSpilledCallsStayOutOnceRead(t *testing.T) {
	s := openSpilling(t, spillJournal(t), true)
	before := s.spill.n
	for i := range s.CallCount() {
		s.CallAt(i)
	}
	s.Lookup("12")
	if s.spill.n != before {
		t.Fatalf("reading calls back brought %d into memory", before-s.spill.n)
	}
	if s.Lookup("12") == nil || s.Lookup("12").Snapshot().Late != 1 {
		t.Fatalf("call 12 read back: %+v, want it, with its late answer", s.Lookup("12"))
	}
}

// Every field of a Call, its extra and the extra's options is one the
// spill writes, or one a call that goes has at its zero value (spillable
// checks): a field added later must be placed here, or it would be lost
// on the way out.
func TestSpillKnowsEveryField(t *testing.T) {
	known := map[string]string{
		// Call
		"s": "set on the way back", "Key": "written", "ID": "written", "Method": "written", "Name": "written",
		"Token": "written", "Seq": "written", "started": "written", "ended": "written", "progress": "written",
		"updates": "written", "late": "written", "held": "nil to go", "givenUp": "written", "isError": "written",
		"adopted": "written", "paramsOut": "written", "followed": "false to go", "persisted": "false to go",
		"claiming": "false to go", "markOff": "false to go", "rt": "written", "code": "written",
		"resultSeq": "written", "respSeq": "written", "done": "ended: Done makes it again", "ex": "written",
		// callExtra
		"opts": "zero to go", "round": "zero to go", "parent": "zero to go", "unmatched": "written",
		"idleFor": "zero to go", "hardAt": "zero to go", "hardLeft": "zero to go", "ack": "zero to go",
		"reissueWhy": "zero to go", "via": "written", "rpcErr": "written", "failure": "written",
		"resultTypeAs": "written", "sessionID": "zero to go", "idle": "zero to go", "hard": "zero to go",
		"next": "zero to go", "chainErr": "zero to go", "chain": "zero to go", "taskID": "zero to go",
		"listen": "zero to go", "listenAttempt": "zero to go", "relisten": "zero to go", "wireKey": "zero to go",
		"rejoinedBy": "zero to go", "endedAway": "zero to go", "handle": "zero to go", "persistTimer": "zero to go",
		"claim": "zero to go", "recordGone": "zero to go", "inDoubt": "zero to go", "persistMu": "unlocked",
	}
	// CallOptions, in callExtra.opts: zero to go, every field (spillable).
	for _, f := range []string{"Timeout", "MaxTimeout", "NoProgressToken", "Headers", "modernVersion", "probe", "asTask",
		"reissueOf", "reissues", "round", "parent", "listen", "listenAttempt"} {
		known["opts."+f] = "zero to go"
	}
	for f := range reflect.TypeFor[CallOptions]().Fields() {
		if _, ok := known["opts."+f.Name]; !ok {
			t.Errorf("CallOptions.%s: spillable does not check it is zero (spill.go)", f.Name)
		}
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[Call](), reflect.TypeFor[callExtra]()} {
		for f := range typ.Fields() {
			if _, ok := known[f.Name]; !ok {
				t.Errorf("%s.%s: the spill neither writes it nor checks it is zero (spill.go)", typ.Name(), f.Name)
			}
		}
	}
}

// The spill's slots give back the latest record put in each, whatever
// the order of the puts (a sweep's run, the calls a later sweep takes,
// one brought back and sent out again), with long records beside them.
func TestSpillSlotsKeepTheLatestRecord(t *testing.T) {
	sp := newSpill()
	if sp == nil {
		t.Fatal("no temporary file for the spill")
	}
	defer sp.close()
	rng := rand.New(rand.NewPCG(3, 4))
	want := map[int][]byte{}
	for n := range 20000 {
		i := rng.IntN(3000)
		switch r := rng.IntN(10); {
		case r < 6: // runs: the slot after the last one, or a few on
			i = sp.bufAt + len(sp.buf)/slotSize + rng.IntN(3)
		case r < 7 && len(want) > 0: // a slot already written, written again
			for k := range want {
				i = k
				break
			}
		}
		body := make([]byte, 1+rng.IntN(600))
		for k := range body {
			body[k] = byte(n + k)
		}
		if err := sp.put(i, append(binary.AppendUvarint(nil, uint64(len(body))), body...)); err != nil {
			t.Fatal(err)
		}
		want[i] = body
		if n%997 == 0 {
			for k, w := range want {
				if got, err := sp.record(k); err != nil || string(got) != string(w) {
					t.Fatalf("after %d puts, slot %d holds %d bytes (%v), want %d", n+1, k, len(got), err, len(w))
				}
			}
		}
	}
}

// The order lets a chunk go once none of its calls is in memory, and
// gives its calls back in order around it.
func TestCallOrderLetsEmptyChunksGo(t *testing.T) {
	var o callOrder
	calls := make([]*Call, 3*orderChunk+5)
	for i := range calls {
		calls[i] = &Call{Key: fmt.Sprint(i)}
		o.add(calls[i])
	}
	for i := orderChunk; i < 2*orderChunk; i++ {
		o.set(i, nil)
	}
	if o.chunks[1] != nil {
		t.Fatal("a chunk with no call in memory is still held")
	}
	o.set(orderChunk+7, calls[orderChunk+7]) // one brought back
	for i := 3 * orderChunk; i < len(calls); i++ {
		o.set(i, nil)
	}
	if o.chunks[3] == nil {
		t.Fatal("the last chunk, still filling, was let go")
	}
	var got []string
	for c := range o.from(orderChunk) {
		got = append(got, c.Key)
	}
	if len(got) != 1+orderChunk || got[0] != fmt.Sprint(orderChunk+7) || got[1] != fmt.Sprint(2*orderChunk) {
		t.Fatalf("calls from %d: %d, starting %v; want %d starting %d, %d", orderChunk, len(got), got[:2], 1+orderChunk, orderChunk+7, 2*orderChunk)
	}
	if o.len() != len(calls) || o.at(5) != calls[5] || o.at(orderChunk+8) != nil {
		t.Fatal("the order's length or calls changed")
	}
}

// The index finds every string added, through its growths, and holds
// under two slots a string.
func TestSpillIndexFindsEveryString(t *testing.T) {
	var x spillIndex
	const n = 200_000
	for i := range n {
		x.add(fmt.Sprint("k", i), i)
	}
	for i := 0; i < n; i += 7 {
		found := false
		x.each(fmt.Sprint("k", i), func(j int) bool {
			found = j == i
			return !found
		})
		if !found {
			t.Fatalf("k%d not found", i)
		}
	}
	false_ := 0
	for i := range 10_000 {
		x.each(fmt.Sprint("absent", i), func(int) bool { false_++; return true })
	}
	if false_ > 10 {
		t.Fatalf("%d of 10,000 absent strings matched a slot's hash", false_)
	}
	if len(x.slots) > 2*n {
		t.Fatalf("%d slots for %d strings", len(x.slots), n)
	}
}
