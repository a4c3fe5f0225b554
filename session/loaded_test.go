package session

import (
	"testing"
	"time"
)

// Loaded is closed at once for a session that reads nothing back, and for
// a journal Open reads once every frame is in (and stays closed); a reader
// stopped by Close closes it too.
func TestLoadedClosesWhenTheReadingEnds(t *testing.T) {
	live := New(nil, Options{})
	select {
	case <-live.Loaded():
	default:
		t.Fatal("Loaded is open for a session that reads nothing back")
	}

	path := writeJournal(t, "stdio: srv",
		out(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`),
		in(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`))
	s, _, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if l := waitLoaded(t, s); l.Active || l.Err != nil || s.Store().Len() != 2 || s.Lookup("1").Snapshot().State != StateOK {
		t.Fatalf("Loaded closed before the reading ended: %+v, %d frames", l, s.Store().Len())
	}
	select {
	case <-s.Loaded():
	default:
		t.Fatal("Loaded asked again after the reading is open")
	}

	stopped, _, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	stopped.Close()
	select {
	case <-stopped.Loaded():
	case <-time.After(2 * time.Minute): // a hang guard
		t.Fatal("Loaded not closed after Close")
	}
}
