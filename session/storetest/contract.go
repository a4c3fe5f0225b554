// Package storetest is the contract every session.StateStore backend
// passes: one table of tests, run over the file store and Redis.
package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"mcpscope/session"
)

// Backend makes a fresh, empty store whose leases live ttl, and lists what
// the store holds (keys, files) so a test can see nothing is left behind.
type Backend struct {
	Name      string
	New       func(t *testing.T, ttl time.Duration) session.StateStore
	Leftovers func(t *testing.T, s session.StateStore) []string
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
	} {
		t.Run(b.Name+"/"+tc.name, func(t *testing.T) { tc.run(t, b) })
	}
}

func record(h string) session.Detached {
	me := session.Me()
	return session.Detached{Handle: h, Target: "http://127.0.0.1:1/mcp", Transport: "http", Era: "legacy",
		ProtocolVersion: "2025-11-25", SessionID: "sess-1", RequestID: json.RawMessage("7"), Method: "tools/call",
		Name: "slow", ProgressToken: json.RawMessage(`"tok"`), LastEventIDs: map[string]string{"post:7": "ev-3"},
		TaskID: "", Progress: session.Progress{Updates: 3, Value: 3, Total: 10},
		SecretRefs: map[string]string{"Authorization": "env:MCPSCOPE_BEARER"}, Owner: &me, Started: time.Now().Add(-time.Minute)}
}

func recordRoundTrip(t *testing.T, b Backend) {
	s := b.New(t, session.DefaultLeaseTTL)
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
	if _, err := s.Get("nope"); !errors.Is(err, session.ErrNoSuchCall) {
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
	s := b.New(t, session.DefaultLeaseTTL)
	l, err := s.Claim("call:a")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Claim("call:a")
	var he *session.HeldError
	if !errors.As(err, &he) {
		t.Fatalf("second claim: %v", err)
	}
	if he.Holder.Owner != session.Me() || he.Holder.Token != l.Token || !he.Holder.Expires.After(time.Now()) {
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
	s := b.New(t, session.DefaultLeaseTTL)
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
	if err := s.Renew(&other); !errors.Is(err, session.ErrLeaseLost) {
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
func waitClaim(t *testing.T, s session.StateStore, name string) session.Lease {
	deadline := time.Now().Add(30 * time.Second)
	for {
		l, err := s.Claim(name)
		if err == nil {
			return l
		}
		var he *session.HeldError
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
	if err := s.Renew(&dead); !errors.Is(err, session.ErrLeaseLost) {
		t.Fatalf("the dead holder renewed a lease another took: %v", err)
	}
	if hs, _ := s.Holders("call:a"); len(hs) != 1 || hs[0].Token != l.Token {
		t.Fatalf("holders after takeover: %+v", hs)
	}
}

func racesOneWinner(t *testing.T, b Backend) {
	s := b.New(t, session.DefaultLeaseTTL)
	for round := 0; round < 20; round++ {
		name := fmt.Sprintf("call:race-%d", round)
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			winners []session.Lease
			losers  []*session.HeldError
		)
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l, err := s.Claim(name)
				mu.Lock()
				defer mu.Unlock()
				var he *session.HeldError
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
	s := b.New(t, session.DefaultLeaseTTL)
	name := session.SessionLease("http://127.0.0.1:1/mcp", "sess-1")
	a, err := s.Share(name)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Share(name)
	if err != nil {
		t.Fatal(err)
	}
	users, err := session.SessionUsers(s, "http://127.0.0.1:1/mcp", "sess-1", a)
	if err != nil || len(users) != 1 || users[0].Token != c.Token {
		t.Fatalf("users besides a: %+v %v", users, err)
	}
	if err := s.Renew(&c); err != nil {
		t.Fatalf("renew a share: %v", err)
	}
	_ = s.Release(c)
	if users, _ := session.SessionUsers(s, "http://127.0.0.1:1/mcp", "sess-1", a); len(users) != 0 {
		t.Fatalf("a released share still counts: %+v", users)
	}
	_ = s.Release(a)
	if hs, _ := s.Holders(name); len(hs) != 0 {
		t.Fatalf("holders after both left: %+v", hs)
	}
}

func callState(t *testing.T, b Backend) {
	s := b.New(t, session.DefaultLeaseTTL)
	d := record("st")
	if got := session.CallState(s, d); got.State != "expired" {
		t.Fatalf("an owner without a lease: %+v", got)
	}
	h, err := session.Hold(s, session.CallLease("st"), false)
	if err != nil {
		t.Fatal(err)
	}
	if got := session.CallState(s, d); got.State != "held" || got.Holder.Owner != session.Me() {
		t.Fatalf("held: %+v", got)
	}
	h.Release()
	d.Owner = nil
	if got := session.CallState(s, d); got.State != "free" {
		t.Fatalf("detached: %+v", got)
	}
}

func cyclesLeaveNothing(t *testing.T, b Backend) {
	s := b.New(t, session.DefaultLeaseTTL)
	for i := 0; i < 20; i++ {
		h := fmt.Sprintf("cycle-%d", i)
		d := record(h)
		if err := s.Put(d); err != nil {
			t.Fatal(err)
		}
		owner, err := session.Hold(s, session.CallLease(h), false)
		if err != nil {
			t.Fatal(err)
		}
		sess, err := session.Hold(s, session.SessionLease(d.Target, d.SessionID), true)
		if err != nil {
			t.Fatal(err)
		}
		d.Owner = nil
		if err := s.Put(d); err != nil { // detached
			t.Fatal(err)
		}
		owner.Release()
		rejoiner, err := session.Hold(s, session.CallLease(h), false)
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
	s := b.New(t, session.DefaultLeaseTTL)
	d := record("m1") // 3 steps, post:7 at ev-3
	if err := s.Put(d); err != nil {
		t.Fatal(err)
	}
	m := session.Mark{Stream: "post:7", EventID: "ev-5", Progress: session.Progress{Updates: 5, Value: 5, Total: 10}}
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
	if _, err := s.Get("m1"); !errors.Is(err, session.ErrNoSuchCall) {
		t.Fatalf("a mark brought back a deleted record: %v", err)
	}
	if left := b.Leftovers(t, s); len(left) != 0 {
		t.Fatalf("left after Delete and a late mark: %v", left)
	}
}
