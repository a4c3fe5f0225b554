package session

// CallsSince returns the calls made after the first n that memory holds,
// in order, and how many calls there are now. The UI pulls only the tail,
// so a long session does not cost a copy of every call on each refresh;
// an opened journal's ended tool calls that went out of memory (spill.go)
// are not among them (read them through CallAt).
func (s *Session) CallsSince(n int) (fresh []*Call, total int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n = max(n, 0)
	for _, c := range s.order[min(n, len(s.order)):] {
		if c != nil {
			fresh = append(fresh, c)
		}
	}
	return fresh, len(s.order)
}

// CallCount is how many calls the session has made or met.
func (s *Session) CallCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.order)
}

// CallAt is call i in order (0 is the first): the UI reads its panes'
// rows through it, holding no list of every call of its own. A call gone
// out of memory is read back (spill.go).
func (s *Session) CallAt(i int) *Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < 0 || i >= len(s.order) {
		return nil
	}
	if c := s.order[i]; c != nil {
		return c
	}
	return s.spilledLocked(i)
}
