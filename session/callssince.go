package session

// CallsSince returns the calls made after the first n, in order. The UI
// keeps its own list and pulls only the tail, so a long session does not
// cost a copy of every call on each refresh.
func (s *Session) CallsSince(n int) []*Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 0 {
		n = 0
	}
	if n >= len(s.order) {
		return nil
	}
	return append([]*Call(nil), s.order[n:]...)
}
