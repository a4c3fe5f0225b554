package session_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/testkit/testservers"
	"mcpscope/transport"
)

// journalFirst is a real FileStore that, at each (fenced) mark, reads the
// journal file and the session's store as they are then.
type journalFirst struct {
	*statestore.FileStore
	journal string
	s       *session.Session

	mu       sync.Mutex
	marks    int
	problems []string
}

func (w *journalFirst) MarkFenced(handle string, m statestore.Mark, l statestore.Lease) error {
	inFile := false
	if f, err := os.Open(w.journal); err == nil {
		_, _ = journal.Read(f, func(_ uint64, fr transport.Frame) error {
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
	j, err := journal.Create(jpath, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	store := &journalFirst{FileStore: &statestore.FileStore{Dir: t.TempDir()}, journal: jpath}
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

// answerLost is a real FileStore whose link "breaks" at the step it is
// told: that mark goes in, but its answer is lost, and from then on no
// mark or renewal gets through (each is an unreachable store's error).
type answerLost struct {
	*statestore.FileStore
	at int // the mark whose answer is lost (1-based)

	mu    sync.Mutex
	marks int
	cut   bool
	taken statestore.Mark // the mark that went in without its answer
}

type unreachableErr struct{}

func (unreachableErr) Error() string          { return "i/o timeout (the link was cut)" }
func (unreachableErr) StoreUnreachable() bool { return true }

func (w *answerLost) MarkFenced(handle string, m statestore.Mark, l statestore.Lease) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cut {
		return unreachableErr{}
	}
	w.marks++
	if err := w.FileStore.MarkFenced(handle, m, l); err != nil || w.marks < w.at {
		return err
	}
	w.cut, w.taken = true, m
	return unreachableErr{}
}

func (w *answerLost) Renew(l *statestore.Lease) error {
	w.mu.Lock()
	cut := w.cut
	w.mu.Unlock()
	if cut {
		return unreachableErr{}
	}
	return w.FileStore.Renew(l)
}

// A holder cut off from the store while a mark's answer is on its way,
// for longer than its lease, cannot know whether that mark went in; the
// next holder would then resume after it. The step is not shown here, and
// not silently: the session names it (StepInDoubt, and its frame's note).
func TestStepWhoseMarkLostItsAnswerIsNamed(t *testing.T) {
	srv := testservers.StartHTTPServer(t, testservers.HTTPOpts{EventStore: true})
	store := &answerLost{FileStore: &statestore.FileStore{Dir: t.TempDir(), LeaseTTL: 600 * time.Millisecond}, at: 3}
	s := storeSession(t, srv.URL, store)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 3, "steps": 30}})
	_, err := c.Wait(ctx)
	var lost *statestore.LeaseLostError
	if !errors.As(err, &lost) {
		t.Fatalf("the call ended with %v; want its lease lost", err)
	}
	s.Settle()
	store.mu.Lock()
	taken := store.taken
	store.mu.Unlock()
	if taken.EventID == "" {
		t.Fatal("no mark lost its answer: the test saw too little")
	}
	step := fmt.Sprintf("progress %g/%g", taken.Progress.Value, taken.Progress.Total)
	if why := s.StepInDoubt(c); !strings.HasPrefix(why, step+" was not shown here: ") {
		t.Errorf("StepInDoubt = %q; want it to name %s", why, step)
	}
	noted := false
	for _, it := range s.Store().Since(0, 0) {
		if it.Frame.Meta.EventID != taken.EventID {
			continue
		}
		if it.CallKey == c.Key && it.Note == "" {
			t.Errorf("the step whose mark lost its answer was applied here (note %q)", it.Note)
		}
		noted = noted || strings.Contains(it.Note, "may have gone in")
	}
	if !noted {
		t.Errorf("the frame of %s carries no note saying its mark may have gone in", step)
	}
	if got := c.Snapshot().Progress.Updates; float64(got) >= taken.Progress.Value {
		t.Errorf("%d steps applied here; want fewer than %g (the one in doubt is not shown)", got, taken.Progress.Value)
	}
}
