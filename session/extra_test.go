package session

import (
	"os"
	"reflect"
	"sync"
	"testing"
	"time"
	"unsafe"

	"mcpscope/statestore"
)

// TestMain checks, after every test of the package has run, that nothing
// wrote through x into the callExtra that calls without one share.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && !reflect.ValueOf(&noExtra).Elem().IsZero() {
		println("noExtra was written through x (write through xw):", noExtra.opts.reissueOf, noExtra.taskID, noExtra.handle)
		code = 1
	}
	os.Exit(code)
}

// A journal read back holds a Call for every call: a finished tool call
// keeps no callExtra, no channel and neither params nor result bytes, and
// still reads back the same params and result, ends Done at once and
// snapshots as before.
func TestOpenedToolCallLeavesItsResultInTheJournal(t *testing.T) {
	path := writeJournal(t, "stdio: node server.js",
		out(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":"p1"}}}`),
		in(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1,"total":2}}`),
		in(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`),
		out(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`),
		in(`{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`))
	s, _, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	waitLoaded(t, s)
	c := s.Lookup("1")
	if c == nil {
		t.Fatal("no call 1")
	}
	s.mu.Lock()
	ex, done, held := c.ex.Load(), c.done, c.held
	s.mu.Unlock()
	if ex != nil || done != nil || held != nil {
		t.Fatalf("a finished adopted tool call holds ex %v, done %v, params and result %+v", ex, done, held)
	}
	if p := c.Params(); string(p) != `{"name":"echo","_meta":{"progressToken":"p1"}}` {
		t.Fatalf("params read back %s", p)
	}
	sn := c.Snapshot()
	if sn.State != StateOK || !sn.ResultInJournal || !sn.ParamsInJournal || sn.Params != nil || sn.Result != nil || sn.ResultType != "complete" || sn.Progress.Updates != 1 || sn.RespSeq != 3 {
		t.Fatalf("snapshot %+v", sn)
	}
	res, err := c.Result()
	if err != nil || string(res) != `{"content":[{"type":"text","text":"hi"}]}` {
		t.Fatalf("result %s, %v", res, err)
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("Done of an ended call is not closed")
	}
	if res, err := c.Wait(t.Context()); err != nil || string(res) != `{"content":[{"type":"text","text":"hi"}]}` {
		t.Fatalf("wait: %s, %v", res, err)
	}
	// A listing's result stays held: the session reads it again.
	if l := s.Lookup("2").Snapshot(); l.ResultInJournal || l.ParamsInJournal || string(l.Result) != `{"tools":[]}` {
		t.Fatalf("tools/list snapshot %+v", l)
	}
}

// A session holds a Call for every call: what a call holds whatever it
// is stays within the 240-byte size class (it was 752 bytes, the 768
// class, before the rarely-set fields moved to callExtra, 416 before its
// times were held as unix nanoseconds, 320 before its resultType was held
// as a byte and its errors moved to callExtra, and 288 before its params
// and result moved behind one pointer and its state became a byte).
func TestCallStaysSmall(t *testing.T) {
	if n := unsafe.Sizeof(Call{}); n > 192 {
		t.Fatalf("a Call is %d bytes: move what most calls never set into callExtra", n)
	}
}

// A call holds its State as a byte: every State comes back as it was set,
// a new call is pending, and the code of StateError is the one an unknown
// state falls to.
func TestCallStateRoundTrips(t *testing.T) {
	var c Call
	if c.st() != StatePending {
		t.Fatalf("a new call is %q, want pending", c.st())
	}
	for _, st := range []State{StateStreaming, StateOK, StateError, StateCancelled, StateDetached, StatePending} {
		c.setState(st)
		if c.st() != st {
			t.Fatalf("set %q, read %q", st, c.st())
		}
	}
	if stateNames[codeError] != StateError {
		t.Fatalf("codeError names %q", stateNames[codeError])
	}
	c.setState("bogus")
	if c.st() != StateError {
		t.Fatalf("an unknown state reads %q, want error", c.st())
	}
}

// A call's callExtra is made once even when xw runs on two goroutines and
// x reads it without the session's lock (persistMu paths, the store's
// watch): every writer gets the same one, and the race detector sees no
// race on the pointer (a plain pointer raced here, and a call locking
// persistMu through the shared zero extra unlocked another's).
func TestExtraMadeOnceAcrossGoroutines(t *testing.T) {
	for range 50 {
		c := &Call{}
		const n = 8
		got := make(chan *callExtra, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					_ = c.x().handle
				}
				got <- c.xw()
			}()
		}
		wg.Wait()
		close(got)
		first := c.ex.Load()
		for e := range got {
			if e != first {
				t.Fatal("xw made two callExtras for one call: a write through one is lost")
			}
		}
		c.xw().persistMu.Lock()
		c.xw().handle = "h"       // what persistMu guards
		c.xw().persistMu.Unlock() // the same mutex: no "unlock of unlocked mutex"
	}
}

// A journal read back holds a Call for every call: calls of one method
// share one copy of its name, not a copy each from the decoder.
func TestOpenedCallsShareTheirMethodName(t *testing.T) {
	path := writeJournal(t, "stdio: node server.js",
		out(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`),
		in(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`),
		out(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`),
		in(`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`))
	s, _, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	waitLoaded(t, s)
	a, b := s.Lookup("1"), s.Lookup("2")
	if a == nil || b == nil || a.Method != "tools/call" || b.Method != "tools/call" {
		t.Fatalf("calls %v %v", a, b)
	}
	if unsafe.StringData(a.Method) != unsafe.StringData(b.Method) {
		t.Fatal("two calls of tools/call hold a copy of the method name each")
	}
}

// A call without progress holds none (a journal read back has a Call for
// every call); progress set comes back as it was set, and again when it
// changes.
func TestCallProgressRoundTrips(t *testing.T) {
	var c Call
	c.setProgressLocked(statestore.Progress{})
	if c.progress != nil {
		t.Fatal("a call without progress holds a progress record")
	}
	at := time.Unix(1700000000, 123456789)
	for i, p := range []statestore.Progress{
		{Value: 1, Total: 10, Message: "one", Updates: 1, FirstValue: 1, FirstAt: at, LastAt: at},
		{Value: 7, Total: 10, Message: "seven", Updates: 4, FirstValue: 1, FirstAt: at, LastAt: at.Add(time.Second)},
	} {
		c.setProgressLocked(p)
		got := c.progressLocked()
		if got.Value != p.Value || got.Total != p.Total || got.Message != p.Message || got.Updates != p.Updates ||
			got.FirstValue != p.FirstValue || !got.FirstAt.Equal(p.FirstAt) || !got.LastAt.Equal(p.LastAt) {
			t.Fatalf("progress %d: set %+v, read %+v", i, p, got)
		}
	}
}
