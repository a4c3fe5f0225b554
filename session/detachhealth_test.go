package session

import (
	"slices"
	"sync"
	"testing"
	"time"

	"mcpscope/statestore"
	"mcpscope/transport"
)

// healthStore is a file store that says how it may lose calls.
type healthStore struct {
	*statestore.FileStore
}

const lossWarning = "this store may lose the calls kept in it"

func (healthStore) Health() []string { return []string{lossWarning} }

// A detach that comes before the call's first debounced write (held back
// here by a write still pending, as a loaded machine holds it) writes the
// first record: the person is told how the store may lose it first (CI
// saw `call --detach` against an evicting Redis print no warning).
func TestDetachBeforeTheFirstWriteWarnsOfLoss(t *testing.T) {
	var (
		mu   sync.Mutex
		told []string
	)
	store := healthStore{&statestore.FileStore{Dir: t.TempDir()}}
	s, c, _ := delayedCall(t, store, func(msg string) { mu.Lock(); told = append(told, msg); mu.Unlock() })
	// The debounced write, still pending: it has not run, so it has not
	// told anything.
	s.mu.Lock()
	s.persisting.Add(1) // as persistLocked does; the detach's Stop gives it back
	c.xw().persistTimer = time.AfterFunc(time.Hour, func() {})
	s.mu.Unlock()
	// A step with an SSE event id on the call's stream: rejoinable now.
	s.Ingest(transport.Frame{Time: time.Now(), Dir: transport.In, Kind: transport.Message,
		Meta: transport.Meta{Stream: "post:" + c.Key, EventID: "e1"},
		Data: []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"step"}}`)})
	handle, err := s.Detach(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Get(handle); err != nil {
		t.Fatalf("no record after the detach: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(told, lossWarning) {
		t.Fatalf("the detach wrote the first record without saying how the store may lose it; told %q", told)
	}
}
