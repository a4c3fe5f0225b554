package session_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"mcpscope/internal/testservers"
	"mcpscope/session"
	"mcpscope/transport"
)

// journalFirst is a real FileStore that, at each (fenced) mark, reads the
// journal file and the session's store as they are then.
type journalFirst struct {
	*session.FileStore
	journal string
	s       *session.Session

	mu       sync.Mutex
	marks    int
	problems []string
}

func (w *journalFirst) MarkFenced(handle string, m session.Mark, l session.Lease) error {
	inFile := false
	if f, err := os.Open(w.journal); err == nil {
		_, _ = session.ReadJournal(f, func(_ uint64, fr transport.Frame) error {
			inFile = inFile || fr.Dir == transport.In && fr.Meta.EventID == m.EventID
			return nil
		})
		f.Close()
	}
	shown := false
	for _, it := range w.s.Store().Since(0, 0) {
		shown = shown || it.Frame.Dir == transport.In && it.Frame.Meta.EventID == m.EventID
	}
	w.mu.Lock()
	w.marks++
	if !inFile {
		w.problems = append(w.problems, fmt.Sprintf("event %s was marked before its line was in the journal's file", m.EventID))
	}
	if shown {
		w.problems = append(w.problems, fmt.Sprintf("event %s was in the session's store before its mark", m.EventID))
	}
	w.mu.Unlock()
	return w.FileStore.MarkFenced(handle, m, l)
}

// A progress step of a call kept in the state store is in the journal's
// file before its mark goes to the store, and its mark is in the store
// before the step is shown: a kill -9 between any two leaves neither a
// step lost to a rejoin here (which reads the journal and the store) nor
// one shown twice by a rejoin elsewhere (which reads the store).
func TestStepJournaledThenMarkedThenShown(t *testing.T) {
	srv := testservers.StartHTTPServer(t, testservers.HTTPOpts{EventStore: true})
	jpath := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := session.CreateJournal(jpath, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	store := &journalFirst{FileStore: &session.FileStore{Dir: t.TempDir()}, journal: jpath}
	s := session.New(transport.NewHTTP(transport.HTTPOptions{URL: srv.URL}),
		session.Options{Journal: j, StateStore: store, Rejoin: session.RejoinInfo{Target: srv.URL}})
	store.s = s
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	c := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 1, "steps": 10}})
	if _, err := c.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if store.marks < 5 {
		t.Fatalf("only %d of 10 steps were marked: the test saw too little", store.marks)
	}
	for _, p := range store.problems {
		t.Error(p)
	}
}
