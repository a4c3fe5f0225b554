package redisstore_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/internal/xdg"
	"mcpscope/statestore"
	"mcpscope/statestore/redisstore"
	"mcpscope/testkit/redistest"
)

func openFallback(t *testing.T, url, root string) *redisstore.Store {
	t.Helper()
	s, err := redisstore.Open(redisstore.Options{URL: url, FallbackRoot: root, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func handles(l []statestore.Detached) []string {
	var hs []string
	for _, d := range l {
		hs = append(hs, d.Handle)
	}
	return hs
}

// Every URL that reaches one Redis database shares one fallback folder,
// whatever its scheme, user or password; another Redis or database has
// its own, and none is the plain file store's.
func TestFallbackFolderIsPerRedis(t *testing.T) {
	root := t.TempDir()
	dir := func(url string) string { return openFallback(t, url, root).FallbackDir() }
	a := dir("redis://127.0.0.1:6390/2")
	for _, same := range []string{"redis://:pw@127.0.0.1:6390/2", "rediss://ops@127.0.0.1:6390/2"} {
		if got := dir(same); got != a {
			t.Errorf("%s: fallback %s, want %s (the same Redis database)", same, got, a)
		}
	}
	for _, other := range []string{"redis://127.0.0.1:6390/3", "redis://127.0.0.1:6391/2", "redis://10.0.0.1:6390/2"} {
		if got := dir(other); got == a {
			t.Errorf("%s shares the fallback %s of another Redis", other, a)
		}
	}
	if filepath.Dir(a) != root {
		t.Errorf("fallback %s is not under %s", a, root)
	}
}

// A record that fell back from Redis A (unreachable at Put) is listed,
// labelled, under A once A answers, and under neither Redis B nor the
// plain file store; a rejoin through A (claim, fenced write, fenced
// delete) moves it into Redis and then leaves nothing, in Redis or in the
// folder. The label is no part of the record's seal.
func TestFallbackRecordIsListedUnderItsRedisOnly(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv(statestore.EnvStateKey, "a-test-state-key-0123456789")
	root := filepath.Join(xdg.StateDir(), "fallback")
	srvA, srvB := redistest.Start(t), redistest.Start(t)
	a, b := openFallback(t, srvA.URL(0), root), openFallback(t, srvB.URL(0), root)
	plain := statestore.Default()
	if err := plain.Put(statestore.Detached{Handle: "plain-1", Method: "tools/call"}); err != nil {
		t.Fatal(err)
	}

	srvA.Kill()
	d := statestore.Detached{Handle: "h1", Method: "tools/call", Name: "slow", Started: time.Now()}
	statestore.SealRecord(&d)
	err := a.Put(d)
	var se *statestore.StoredElsewhere
	if !errors.As(err, &se) || !strings.Contains(se.Where, a.FallbackDir()) {
		t.Fatalf("put while Redis A is down: %v; want it kept in %s", err, a.FallbackDir())
	}

	if l, err := b.List(); err != nil || len(l) != 0 {
		t.Fatalf("Redis B lists %v (%v); want nothing: the record fell back from A", handles(l), err)
	}
	if _, err := b.Get("h1"); !errors.Is(err, statestore.ErrNoSuchCall) {
		t.Fatalf("Redis B reads A's local copy: %v", err)
	}
	if l, err := plain.List(); err != nil || strings.Join(handles(l), ",") != "plain-1" {
		t.Fatalf("the plain file store lists %v (%v); want plain-1 alone", handles(l), err)
	}

	srvA.Restart(t)
	l, err := a.List()
	if err != nil || len(l) != 1 || l[0].Handle != "h1" {
		t.Fatalf("Redis A lists %v (%v); want h1", handles(l), err)
	}
	if l[0].Fallback != a.FallbackDir() {
		t.Fatalf("h1 listed with Fallback %q; want %s", l[0].Fallback, a.FallbackDir())
	}
	if !statestore.RecordSealed(l[0]) {
		t.Fatal("the local copy's label broke its seal")
	}
	got, err := a.Get("h1")
	if err != nil || got.Fallback != a.FallbackDir() {
		t.Fatalf("get h1 through A: %+v %v", got, err)
	}

	// A rejoin: the claim, then the record named with its new owner (only
	// over the record as it is: the local copy counts), then the end.
	lease, err := a.Claim(statestore.CallLease("h1"))
	if err != nil {
		t.Fatal(err)
	}
	me := statestore.Me()
	got.Owner = &me
	if err := a.PutFenced(got, lease, false); err != nil {
		t.Fatalf("the rejoin's first write of a local copy: %v", err)
	}
	if n := records(t, a.FallbackDir()); len(n) != 0 {
		t.Fatalf("local copy left after the record went to Redis: %v", n)
	}
	if inRedis, err := a.Get("h1"); err != nil || inRedis.Fallback != "" || inRedis.Owner == nil {
		t.Fatalf("h1 in Redis after the rejoin's write: %+v %v", inRedis, err)
	}
	if err := a.DeleteFenced("h1", lease); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(lease); err != nil {
		t.Fatal(err)
	}
	if left := keys(t, srvA.URL(0)); len(left) != 0 {
		t.Fatalf("keys left in Redis A: %v", left)
	}
	if n := records(t, a.FallbackDir()); len(n) != 0 {
		t.Fatalf("files left in the fallback: %v", n)
	}
}

// records lists the record files in dir.
func records(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			out = append(out, e.Name())
		}
	}
	return out
}

// While Redis is still down, a local copy can be rejoined on the machine
// that kept it: listed (with the error: the list is partial), read,
// claimed in the fallback folder (a second claim there refused), written
// and marked under that claim, and deleted by it. A claim through Redis
// once it answers again is refused while the local claim lives; nothing
// is left anywhere after.
func TestFallbackCopyIsRejoinedWhileRedisIsDown(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv(statestore.EnvStateKey, "a-test-state-key-0123456789")
	root := filepath.Join(xdg.StateDir(), "fallback")
	srv := redistest.Start(t)
	a, other := openFallback(t, srv.URL(0), root), openFallback(t, srv.URL(0), root)
	srv.Kill()
	d := statestore.Detached{Handle: "h2", Method: "tools/call", Name: "slow", Started: time.Now()}
	statestore.SealRecord(&d)
	var se *statestore.StoredElsewhere
	if err := a.Put(d); !errors.As(err, &se) {
		t.Fatalf("put while Redis is down: %v", err)
	}

	l, err := a.List()
	var down *redisstore.UnreachableError
	if !errors.As(err, &down) || len(l) != 1 || l[0].Handle != "h2" || l[0].Fallback == "" {
		t.Fatalf("list while Redis is down: %v %v; want the local copy h2 and the error", handles(l), err)
	}
	got, err := a.Get("h2")
	if err != nil || got.Fallback != a.FallbackDir() {
		t.Fatalf("get while Redis is down: %+v %v", got, err)
	}
	lease, err := a.Claim(statestore.CallLease("h2"))
	if err != nil {
		t.Fatalf("claim of a local copy while Redis is down: %v", err)
	}
	var held *statestore.HeldError
	if _, err := other.Claim(statestore.CallLease("h2")); !errors.As(err, &held) {
		t.Fatalf("a second claim of the local copy: %v; want it held", err)
	}
	if hs, err := a.Holders(statestore.CallLease("h2")); err != nil || len(hs) != 1 || hs[0].Token != lease.Token {
		t.Fatalf("holders while Redis is down: %+v %v", hs, err)
	}
	me := statestore.Me()
	got.Owner = &me
	if err := a.PutFenced(got, lease, false); err != nil {
		t.Fatalf("fenced write under the local claim: %v", err)
	}
	if err := a.MarkFenced("h2", statestore.Mark{EventID: "3", Progress: statestore.Progress{Updates: 3, Value: 3, Total: 6}}, lease); err != nil {
		t.Fatalf("fenced mark under the local claim: %v", err)
	}
	if err := a.Renew(&lease); err != nil {
		t.Fatalf("renewal of the local claim: %v", err)
	}

	srv.Restart(t)
	if _, err := other.Claim(statestore.CallLease("h2")); !errors.As(err, &held) || held.Holder.Token != lease.Token {
		t.Fatalf("a claim through Redis while the local claim lives: %v; want it held by the local claim", err)
	}
	if err := a.DeleteFenced("h2", lease); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(lease); err != nil {
		t.Fatal(err)
	}
	if n := records(t, a.FallbackDir()); len(n) != 0 {
		t.Fatalf("files left in the fallback: %v", n)
	}
	if left := keys(t, srv.URL(0)); len(left) != 0 {
		t.Fatalf("keys left in Redis: %v", left)
	}
}
