package framestore

import (
	"testing"

	"mcpscope/journal"
)

// What the index tests (package framestore_test, which builds stores
// through package session) look at inside a store.

const KeyLong = keyLong

func SetCachePages(t *testing.T, n int) {
	old := cachePages
	cachePages = n
	t.Cleanup(func() { cachePages = old })
}

func IndexOf(s *Store) *journal.Index { return s.idx }

// PagesHeld is how many index pages memory holds read back, and how many
// of its own (those the index file did not take).
func PagesHeld(s *Store) (cached, own int) {
	s.cmu.Lock()
	cached = len(s.cache)
	s.cmu.Unlock()
	return cached, len(s.pages)
}
