package session

import (
	"sync"

	"mcpscope/transport"
)

// Item is one frame as the session understood it. Items are immutable once
// stored: what changes over time (a call's state) lives in Call.
type Item struct {
	Seq   uint64
	Frame transport.Frame
	Env   *Envelope   // the decoded message, when Frame holds one
	Batch []*Envelope // the messages of a batch frame
	Class Class
	// CallKey names the client call this item belongs to (its request,
	// response or progress), "" otherwise.
	CallKey string
	// Note is what the session noticed about this frame ("late response",
	// "response to unknown id 9", "not JSON-RPC").
	Note string
}

// Store keeps recent items in memory, in sequence order. Readers (the UI)
// pull with Since and are woken by Changed; ingest never waits for them.
type Store struct {
	mu      sync.RWMutex
	items   []*Item
	first   uint64 // seq of items[0]
	max     int
	trimmed uint64
	changed chan struct{}
}

// DefaultStoreItems bounds the in-memory index; the journal keeps everything.
const DefaultStoreItems = 500_000

// NewStore makes a store that keeps at most max items (0 = default).
func NewStore(max int) *Store {
	if max <= 0 {
		max = DefaultStoreItems
	}
	return &Store{max: max, changed: make(chan struct{}, 1), first: 1}
}

func (s *Store) add(it *Item) {
	s.mu.Lock()
	if len(s.items) == 0 {
		s.first = it.Seq
	}
	s.items = append(s.items, it)
	if len(s.items) > s.max {
		// Drop the oldest quarter at once so trimming is amortised O(1).
		n := len(s.items) / 4
		clear(s.items[:n])
		s.items = append(s.items[:0:0], s.items[n:]...)
		s.first = s.items[0].Seq
		s.trimmed += uint64(n)
	}
	s.mu.Unlock()
	s.Notify()
}

// Notify wakes one waiting reader; wake-ups coalesce.
func (s *Store) Notify() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// Changed receives a value after items were added or session state changed.
func (s *Store) Changed() <-chan struct{} { return s.changed }

// Since returns up to max items with Seq > seq (max <= 0: all).
func (s *Store) Since(seq uint64, max int) []*Item {
	s.mu.RLock()
	defer s.mu.RUnlock()
	i := 0
	if seq >= s.first {
		i = int(seq - s.first + 1)
	}
	if i >= len(s.items) {
		return nil
	}
	out := s.items[i:]
	if max > 0 && len(out) > max {
		out = out[:max]
	}
	return append([]*Item(nil), out...)
}

// Get returns the item with seq, if it is still in memory.
func (s *Store) Get(seq uint64) *Item {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if seq < s.first || seq-s.first >= uint64(len(s.items)) {
		return nil
	}
	return s.items[seq-s.first]
}

// Len is how many items are in memory; Trimmed how many were dropped.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.items)
}

// Trimmed counts items dropped from memory (still in the journal).
func (s *Store) Trimmed() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.trimmed
}

// Last is the newest seq, 0 when empty.
func (s *Store) Last() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.items) == 0 {
		return 0
	}
	return s.items[len(s.items)-1].Seq
}
