package session

import "slices"

// CallsSince returns the calls made after the first n that memory holds,
// in order, and how many calls there are now. The UI pulls only the tail,
// so a long session does not cost a copy of every call on each refresh;
// an opened journal's ended tool calls that went out of memory (spill.go)
// are not among them (read them through CallAt).
func (s *Session) CallsSince(n int) (fresh []*Call, total int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(s.order.from(max(n, 0))), s.order.len()
}

// CallCount is how many calls the session has made or met.
func (s *Session) CallCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.order.len()
}

// CallAt is call i in order (0 is the first): the UI reads its panes'
// rows through it, holding no list of every call of its own. A call gone
// out of memory is read back (spill.go).
func (s *Session) CallAt(i int) *Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < 0 || i >= s.order.len() {
		return nil
	}
	if c := s.order.at(i); c != nil {
		return c
	}
	return s.spilledLocked(i, false)
}
