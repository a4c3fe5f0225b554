// Package storetest is the contract every statestore.Store backend passes, run over the file store and Redis.
package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpscope/statestore"
)

// Backend makes a fresh, empty store whose leases live ttl, and lists what
// the store holds (keys, files) so a test can see nothing is left behind.
type Backend struct {
	Name      string
	New       func(t *testing.T, ttl time.Duration) statestore.Store
	Leftovers func(t *testing.T, s statestore.Store) []string
}

// Run runs the contract over b.
func Run(t *testing.T, b Backend) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, Backend)
	}{
		{"RecordRoundTrip", recordRoundTrip},
		{"ClaimIsExclusive", claimIsExclusive},
		{"OnlyTheHolderRenewsAndReleases", onlyHolder},
		{"ExpiredLeaseIsTakenOver", expiredTakenOver},
		{"TwentyRacesOneWinnerEach", racesOneWinner},
		{"SharesCountEveryUser", shares},
		{"CallState", callState},
		{"CyclesLeaveNothing", cyclesLeaveNothing},
		{"MarkKeepsTheNewestStep", markKeepsNewestStep},
		{"FencedWritesRefusedAfterTakeover", fencedAfterTakeover},
		{"FencedWritesGoOnWithoutTakeover", fencedWithoutTakeover},
		{"FencedPutNeverWritesBack", fencedNeverWritesBack},
		{"FenceNumbersGrow", fenceGrows},
		{"FencedRacesOneWriter", fencedRaces},
		{"PausedHolderStopsActing", pausedHolderStops},
		{"StoreLosingTheFenceIsReported", storeLostFence},
	} {
		t.Run(b.Name+"/"+tc.name, func(t *testing.T) { tc.run(t, b) })
	}
}

func record(h string) statestore.Detached {
	me := statestore.Me()
	return statestore.Detached{Handle: h, Target: "http://127.0.0.1:1/mcp", Transport: "http", Era: "legacy",
		ProtocolVersion: "2025-11-25", SessionID: "sess-1", RequestID: json.RawMessage("7"), Method: "tools/call",
		Name: "slow", ProgressToken: json.RawMessage(`"tok"`), LastEventIDs: map[string]string{"post:7": "ev-3"},
		TaskID: "", Progress: statestore.Progress{Updates: 3, Value: 3, Total: 10},
		SecretRefs: map[string]string{"Authorization": "env:MCPSCOPE_BEARER"}, Owner: &me, Started: time.Now().Add(-time.Minute)}
}

func recordRoundTrip(t *testing.T, b Backend) {
	s := b.New(t, statestore.DefaultLeaseTTL)
	d := record("h1")
	if err := s.Put(d); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get("h1")
	if err != nil {
		t.Fatal(err)
	}
	if got.LastEventIDs["post:7"] != "ev-3" || string(got.RequestID) != "7" || got.SessionID != "sess-1" ||
		string(got.ProgressToken) != `"tok"` || got.Progress.Value != 3 || got.Owner == nil || *got.Owner != *d.Owner ||
		got.Era != "legacy" || got.ProtocolVersion != "2025-11-25" || got.SecretRefs["Authorization"] != "env:MCPSCOPE_BEARER" {
		t.Fatalf("round trip lost something: %+v", got)
	}
	if _, err := s.Get("nope"); !errors.Is(err, statestore.ErrNoSuchCall) {
		t.Fatalf("unknown handle: %v", err)
	}
	if err := s.Put(record("h0")); err != nil {
		t.Fatal(err)
	}
	l, err := s.List()
	if err != nil || len(l) != 2 {
		t.Fatalf("list: %d %v", len(l), err)
	}
	if err := s.Delete("h1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("h1"); err != nil {
		t.Fatalf("deleting twice: %v", err)
	}
	if l, _ := s.List(); len(l) != 1 || l[0].Handle != "h0" {
		t.Fatalf("list after delete: %+v", l)
	}
}

func claimIsExclusive(t *testing.T, b Backend) {
	s := b.New(t, statestore.DefaultLeaseTTL)
	l, err := s.Claim("call:a")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Claim("call:a")
	var he *statestore.HeldError
	if !errors.As(err, &he) {
		t.Fatalf("second claim: %v", err)
	}
	if he.Holder.Owner != statestore.Me() || he.Holder.Token != l.Token || !he.Holder.Expires.After(time.Now()) {
		t.Fatalf("the loser is not told who holds it and until when: %+v", he.Holder)
	}
	if _, err := s.Claim("call:b"); err != nil {
		t.Fatalf("another name: %v", err)
	}
	if err := s.Release(l); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim("call:a"); err != nil {
		t.Fatalf("claim after release: %v", err)
	}
}

func onlyHolder(t *testing.T, b Backend) {
	s := b.New(t, statestore.DefaultLeaseTTL)
	l, err := s.Claim("call:a")
	if err != nil {
		t.Fatal(err)
	}
	before := l.Expires
	if err := s.Renew(&l); err != nil || !l.Expires.After(before) {
		t.Fatalf("renew by the holder: %v (%v → %v)", err, before, l.Expires)
	}
	other := l
	other.Token = "not-the-holder"
	if err := s.Renew(&other); !errors.Is(err, statestore.ErrLeaseLost) {
		t.Fatalf("renew by another: %v", err)
	}
	_ = s.Release(other)
	if _, err := s.Claim("call:a"); err == nil {
		t.Fatal("a release by another freed the holder's lease")
	}
	hs, err := s.Holders("call:a")
	if err != nil || len(hs) != 1 || hs[0].Token != l.Token {
		t.Fatalf("holders: %+v %v", hs, err)
	}
}

// waitClaim claims name as soon as the lease on it expires (a hang guard
// bounds it, not an expected time).
func waitClaim(t *testing.T, s statestore.Store, name string) statestore.Lease {
	deadline := time.Now().Add(30 * time.Second)
	for {
		l, err := s.Claim(name)
		if err == nil {
			return l
		}
		var he *statestore.HeldError
		if !errors.As(err, &he) || time.Now().After(deadline) {
			t.Fatalf("claim %s: %v", name, err)
		}
		time.Sleep(time.Until(he.Holder.Expires) + 5*time.Millisecond)
	}
}

func expiredTakenOver(t *testing.T, b Backend) {
	s := b.New(t, 300*time.Millisecond)
	dead, err := s.Claim("call:a") // a holder that never renews: killed
	if err != nil {
		t.Fatal(err)
	}
	l := waitClaim(t, s, "call:a")
	if l.Token == dead.Token {
		t.Fatal("same token")
	}
	if err := s.Renew(&dead); !errors.Is(err, statestore.ErrLeaseLost) {
		t.Fatalf("the dead holder renewed a lease another took: %v", err)
	}
	if hs, _ := s.Holders("call:a"); len(hs) != 1 || hs[0].Token != l.Token {
		t.Fatalf("holders after takeover: %+v", hs)
	}
}

func racesOneWinner(t *testing.T, b Backend) {
	s := b.New(t, statestore.DefaultLeaseTTL)
	for round := 0; round < 20; round++ {
		name := fmt.Sprintf("call:race-%d", round)
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			winners []statestore.Lease
			losers  []*statestore.HeldError
		)
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l, err := s.Claim(name)
				mu.Lock()
				defer mu.Unlock()
				var he *statestore.HeldError
				switch {
				case err == nil:
					winners = append(winners, l)
				case errors.As(err, &he):
					losers = append(losers, he)
				default:
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if len(winners) != 1 || len(losers) != 3 {
			t.Fatalf("round %d: %d winners, %d losers", round, len(winners), len(losers))
		}
		for _, he := range losers {
			if he.Holder.Token != winners[0].Token {
				t.Fatalf("round %d: a loser was told of another holder than the winner", round)
			}
		}
		_ = s.Release(winners[0])
	}
}

func shares(t *testing.T, b Backend) {
	s := b.New(t, statestore.DefaultLeaseTTL)
	name := statestore.SessionLease("http://127.0.0.1:1/mcp", "sess-1")
	a, err := s.Share(name)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Share(name)
	if err != nil {
		t.Fatal(err)
	}
	users, err := statestore.SessionUsers(s, "http://127.0.0.1:1/mcp", "sess-1", a)
	if err != nil || len(users) != 1 || users[0].Token != c.Token {
		t.Fatalf("users besides a: %+v %v", users, err)
	}
	if err := s.Renew(&c); err != nil {
		t.Fatalf("renew a share: %v", err)
	}
	_ = s.Release(c)
	if users, _ := statestore.SessionUsers(s, "http://127.0.0.1:1/mcp", "sess-1", a); len(users) != 0 {
		t.Fatalf("a released share still counts: %+v", users)
	}
	_ = s.Release(a)
	if hs, _ := s.Holders(name); len(hs) != 0 {
		t.Fatalf("holders after both left: %+v", hs)
	}
}

func callState(t *testing.T, b Backend) {
	s := b.New(t, statestore.DefaultLeaseTTL)
	d := record("st")
	if got := statestore.CallState(s, d); got.State != "expired" {
		t.Fatalf("an owner without a lease: %+v", got)
	}
	h, err := statestore.Hold(s, statestore.CallLease("st"), false)
	if err != nil {
		t.Fatal(err)
	}
	if got := statestore.CallState(s, d); got.State != "held" || got.Holder.Owner != statestore.Me() {
		t.Fatalf("held: %+v", got)
	}
	h.Release()
	d.Owner = nil
	if got := statestore.CallState(s, d); got.State != "free" {
		t.Fatalf("detached: %+v", got)
	}
}

func cyclesLeaveNothing(t *testing.T, b Backend) {
	s := b.New(t, statestore.DefaultLeaseTTL)
	for i := 0; i < 20; i++ {
		h := fmt.Sprintf("cycle-%d", i)
		d := record(h)
		if err := s.Put(d); err != nil {
			t.Fatal(err)
		}
		owner, err := statestore.Hold(s, statestore.CallLease(h), false)
		if err != nil {
			t.Fatal(err)
		}
		sess, err := statestore.Hold(s, statestore.SessionLease(d.Target, d.SessionID), true)
		if err != nil {
			t.Fatal(err)
		}
		d.Owner = nil
		if err := s.Put(d); err != nil { // detached
			t.Fatal(err)
		}
		owner.Release()
		rejoiner, err := statestore.Hold(s, statestore.CallLease(h), false)
		if err != nil {
			t.Fatalf("rejoin %d: %v", i, err)
		}
		if err := s.Delete(h); err != nil { // the call ended
			t.Fatal(err)
		}
		rejoiner.Release()
		sess.Release()
	}
	if left := b.Leftovers(t, s); len(left) != 0 {
		t.Fatalf("20 detach/rejoin cycles left %v", left)
	}
}

// A Mark written with each progress step is read back with its record
// while it is newer than the record; a record written later wins; a mark
// of a call whose record is gone writes nothing, and Delete takes both.
func markKeepsNewestStep(t *testing.T, b Backend) {
	s := b.New(t, statestore.DefaultLeaseTTL)
	d := record("m1") // 3 steps, post:7 at ev-3
	if err := s.Put(d); err != nil {
		t.Fatal(err)
	}
	m := statestore.Mark{Stream: "post:7", EventID: "ev-5", Progress: statestore.Progress{Updates: 5, Value: 5, Total: 10}}
	if err := s.Mark("m1", m); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get("m1")
	if err != nil || got.Progress.Updates != 5 || got.LastEventIDs["post:7"] != "ev-5" {
		t.Fatalf("Get after a mark: %+v %v", got, err)
	}
	if l, err := s.List(); err != nil || len(l) != 1 || l[0].Progress.Updates != 5 || l[0].LastEventIDs["post:7"] != "ev-5" {
		t.Fatalf("List after a mark: %+v %v", l, err)
	}
	d.Progress.Updates, d.LastEventIDs = 6, map[string]string{"post:7": "ev-6"}
	if err := s.Put(d); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get("m1"); got.Progress.Updates != 6 || got.LastEventIDs["post:7"] != "ev-6" {
		t.Fatalf("an older mark won over a newer record: %+v", got)
	}
	if err := s.Delete("m1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Mark("m1", m); err != nil { // a step that raced the call's end
		t.Fatal(err)
	}
	if _, err := s.Get("m1"); !errors.Is(err, statestore.ErrNoSuchCall) {
		t.Fatalf("a mark brought back a deleted record: %v", err)
	}
	if left := b.Leftovers(t, s); len(left) != 0 {
		t.Fatalf("left after Delete and a late mark: %v", left)
	}
}

// A holder whose lease expired and was claimed by another writes nothing
// more under it: mark, record, delete and renewal are all refused, and
// the new holder's writes go on.
func fencedAfterTakeover(t *testing.T, b Backend) {
	s := b.New(t, 300*time.Millisecond)
	old, err := s.Claim(statestore.CallLease("f1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutFenced(record("f1"), old, true); err != nil {
		t.Fatal(err)
	}
	cur := waitClaim(t, s, statestore.CallLease("f1"))
	if cur.Fence <= old.Fence {
		t.Fatalf("the new claim's fence %d is not past the old one's %d", cur.Fence, old.Fence)
	}
	m := statestore.Mark{Stream: "post:7", EventID: "ev-9", Progress: statestore.Progress{Updates: 9, Value: 9, Total: 10}}
	if err := s.MarkFenced("f1", m, old); !errors.Is(err, statestore.ErrLeaseLost) {
		t.Fatalf("the old holder's mark: %v", err)
	}
	d := record("f1")
	d.Progress.Updates = 9
	if err := s.PutFenced(d, old, false); !errors.Is(err, statestore.ErrLeaseLost) {
		t.Fatalf("the old holder's record write: %v", err)
	}
	if err := s.DeleteFenced("f1", old); !errors.Is(err, statestore.ErrLeaseLost) {
		t.Fatalf("the old holder's delete: %v", err)
	}
	if err := s.Renew(&old); !errors.Is(err, statestore.ErrLeaseLost) {
		t.Fatalf("the old holder's renewal: %v", err)
	}
	if got, err := s.Get("f1"); err != nil || got.Progress.Updates != 3 {
		t.Fatalf("the record after the old holder's writes: %+v %v", got, err)
	}
	m.EventID, m.Progress.Updates = "ev-4", 4
	if err := s.MarkFenced("f1", m, cur); err != nil {
		t.Fatalf("the new holder's mark: %v", err)
	}
	if err := s.DeleteFenced("f1", cur); err != nil {
		t.Fatalf("the new holder's delete: %v", err)
	}
	if _, err := s.Get("f1"); !errors.Is(err, statestore.ErrNoSuchCall) {
		t.Fatalf("after the new holder's delete: %v", err)
	}
	_ = s.Release(cur)
}

// A lease that merely expired, with no claim since, still fences its
// holder's writes in (nobody else can have acted), and a renewal takes it
// back.
func fencedWithoutTakeover(t *testing.T, b Backend) {
	s := b.New(t, 200*time.Millisecond)
	l, err := s.Claim(statestore.CallLease("f2"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutFenced(record("f2"), l, true); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		if hs, _ := s.Holders(statestore.CallLease("f2")); len(hs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lease never expired")
		}
		time.Sleep(20 * time.Millisecond) // a hang guard's poll: the store's own TTL decides
	}
	m := statestore.Mark{Stream: "post:7", EventID: "ev-4", Progress: statestore.Progress{Updates: 4, Value: 4, Total: 10}}
	if err := s.MarkFenced("f2", m, l); err != nil {
		t.Fatalf("mark after expiry with no other claim: %v", err)
	}
	if err := s.Renew(&l); err != nil {
		t.Fatalf("renewal after expiry with no other claim: %v", err)
	}
	if hs, _ := s.Holders(statestore.CallLease("f2")); len(hs) != 1 || hs[0].Token != l.Token {
		t.Fatalf("holders after the renewal: %+v", hs)
	}
	if _, err := s.Claim(statestore.CallLease("f2")); err == nil {
		t.Fatal("a claim went through a renewed lease")
	}
	_ = s.DeleteFenced("f2", l)
	_ = s.Release(l)
}

// A record deleted at the call's end is never written back by a holder
// that claimed it after (a late rejoiner of a finished call).
func fencedNeverWritesBack(t *testing.T, b Backend) {
	s := b.New(t, statestore.DefaultLeaseTTL)
	first, err := s.Claim(statestore.CallLease("f3"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutFenced(record("f3"), first, true); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteFenced("f3", first); err != nil {
		t.Fatal(err)
	}
	_ = s.Release(first)
	late, err := s.Claim(statestore.CallLease("f3"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutFenced(record("f3"), late, false); !errors.Is(err, statestore.ErrNoSuchCall) {
		t.Fatalf("a late holder's write of a finished call's record: %v", err)
	}
	if l, _ := s.List(); len(l) != 0 {
		t.Fatalf("a finished call's record came back: %+v", l)
	}
	_ = s.Release(late)
	if left := b.Leftovers(t, s); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// Every claim of a call with a record takes a larger fence number, across
// detach and rejoin (release and claim again).
func fenceGrows(t *testing.T, b Backend) {
	s := b.New(t, statestore.DefaultLeaseTTL)
	if err := s.Put(record("f4")); err != nil {
		t.Fatal(err)
	}
	var last int64
	for i := 0; i < 5; i++ {
		l, err := s.Claim(statestore.CallLease("f4"))
		if err != nil {
			t.Fatal(err)
		}
		if l.Fence <= last {
			t.Fatalf("claim %d took fence %d after %d", i, l.Fence, last)
		}
		last = l.Fence
		_ = s.Release(l)
	}
	_ = s.Delete("f4")
}

// Of four processes racing to claim, only the winner's fenced writes go
// through, even when the losers write anyway.
func fencedRaces(t *testing.T, b Backend) {
	s := b.New(t, statestore.DefaultLeaseTTL)
	if err := s.Put(record("f5")); err != nil {
		t.Fatal(err)
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		marked []string
	)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := s.Claim(statestore.CallLease("f5"))
			var he *statestore.HeldError
			if err != nil && !errors.As(err, &he) {
				t.Error(err)
				return
			}
			// A loser that writes with a claim it never got (its own
			// token, no fence) is refused like a stale holder.
			m := statestore.Mark{Stream: "post:7", EventID: fmt.Sprintf("ev-%d", 10+i), Progress: statestore.Progress{Updates: 10 + i}}
			if s.MarkFenced("f5", m, l) == nil {
				mu.Lock()
				marked = append(marked, l.Token)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(marked) != 1 {
		t.Fatalf("%d processes marked under one call's claim", len(marked))
	}
	hs, _ := s.Holders(statestore.CallLease("f5"))
	if len(hs) != 1 || hs[0].Token != marked[0] {
		t.Fatalf("the writer is not the holder: %v %+v", marked, hs)
	}
	_ = s.Delete("f5")
	_ = s.Release(hs[0])
}

// pausing is a store whose renewals wait while paused: the holder's
// process stands still (SIGSTOP, a laptop lid) while the store's clock
// runs.
type pausing struct {
	statestore.Store
	paused chan struct{} // receives while a renewal waits; closed to resume
}

func (p *pausing) Renew(l *statestore.Lease) error {
	if p.paused != nil && !l.Shared {
		<-p.paused
	}
	return p.Store.Renew(l)
}

// A holder paused past its TTL while another claims the call learns it on
// waking: Lost closes, the error names the new holder, and every fenced
// write it tries fails without writing.
func pausedHolderStops(t *testing.T, b Backend) {
	real := b.New(t, 300*time.Millisecond)
	s := &pausing{Store: real, paused: make(chan struct{})}
	name := statestore.CallLease("f6")
	h, err := statestore.Hold(s, name, false)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	if err := h.Write(func(l statestore.Lease) error { return real.PutFenced(record("f6"), l, true) }); err != nil {
		t.Fatal(err)
	}
	other := waitClaim(t, real, name) // the holder's renewals stand still meanwhile
	close(s.paused)                   // wake up
	select {
	case <-h.Lost():
	case <-time.After(30 * time.Second):
		t.Fatal("the woken holder never learnt it lost its lease")
	}
	var lost *statestore.LeaseLostError
	if err := h.LostErr(); !errors.As(err, &lost) || lost.Holder == nil || lost.Holder.Token != other.Token ||
		!strings.Contains(err.Error(), "lost to "+other.Owner.String()) {
		t.Fatalf("the loss does not name the new holder: %v", err)
	}
	m := statestore.Mark{Stream: "post:7", EventID: "ev-8", Progress: statestore.Progress{Updates: 8}}
	if err := h.Write(func(l statestore.Lease) error { return real.MarkFenced("f6", m, l) }); !errors.As(err, &lost) {
		t.Fatalf("a write after the loss: %v", err)
	}
	if got, _ := real.Get("f6"); got.Progress.Updates != 3 {
		t.Fatalf("the lost holder's mark went in: %+v", got.Progress)
	}
	_ = real.Delete("f6")
	_ = real.Release(other)
}

// A store that forgot a claim (Redis restarted without persistence,
// evicted the key; here: its fence removed by hand) refuses the holder's
// writes with ErrStoreLost, which the holder reports.
func storeLostFence(t *testing.T, b Backend) {
	s := b.New(t, statestore.DefaultLeaseTTL)
	l, err := s.Claim(statestore.CallLease("f7"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutFenced(record("f7"), l, true); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("f7"); err != nil { // the record is lost
		t.Fatal(err)
	}
	m := statestore.Mark{Stream: "post:7", EventID: "ev-4", Progress: statestore.Progress{Updates: 4}}
	if err := s.MarkFenced("f7", m, l); !errors.Is(err, statestore.ErrStoreLost) {
		t.Fatalf("a mark of a record the store lost: %v", err)
	}
	_ = s.Release(l)
	if err := s.Renew(&l); err == nil {
		t.Fatal("a released claim renewed")
	}
}
