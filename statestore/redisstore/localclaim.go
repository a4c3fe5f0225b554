package redisstore

import (
	"strings"
	"time"

	"mcpscope/statestore"
)

// A record kept in the fallback folder (Redis was unreachable when it was
// written) lives on this machine only, so while Redis still cannot be
// reached its call is claimed in that folder instead: the file store's
// fenced lease then rules between this machine's processes, which are the
// only ones that can see the record. Every write made under such a claim
// goes to the folder too; localClaims remembers which claims those are.

// localCall is the handle of name's call when its record is in the
// fallback folder ("" otherwise).
func (s *Store) localCall(name string) string {
	h, ok := strings.CutPrefix(name, "call:")
	if !ok || !s.inFallback(h) {
		return ""
	}
	return h
}

// claimLocal claims name in the fallback folder, Redis being unreachable
// (cause), when its call's record is kept there; else it returns cause.
func (s *Store) claimLocal(name string, cause error) (statestore.Lease, error) {
	if s.localCall(name) == "" {
		return statestore.Lease{Name: name}, cause
	}
	l, err := s.fallback.Claim(name)
	if err == nil {
		s.mu.Lock()
		if s.local == nil {
			s.local = map[string]bool{}
		}
		s.local[l.Token] = true
		s.mu.Unlock()
	}
	return l, err
}

// isLocal reports whether l was claimed in the fallback folder.
func (s *Store) isLocal(l statestore.Lease) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.local[l.Token]
}

// heldLocally is a live claim another process of this machine took in the
// fallback folder on name while Redis was away, if any: Redis answering
// again does not end it.
func (s *Store) heldLocally(name string) *statestore.Lease {
	if s.localCall(name) == "" {
		return nil
	}
	hs, _ := s.fallback.Holders(name)
	for _, l := range hs {
		if !l.Shared && l.Live(time.Now()) {
			return &l
		}
	}
	return nil
}
