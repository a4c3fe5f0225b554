package session

// CallsSince returns the calls made after the first n, in order. The UI
// pulls only the tail, so a long session does not cost a copy of every
// call on each refresh.
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

// CallCount is how many calls the session has made or met.
func (s *Session) CallCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.order)
}

// CallAt is call i in order (0 is the first): the UI reads its panes'
// rows through it, holding no list of every call of its own.
func (s *Session) CallAt(i int) *Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < 0 || i >= len(s.order) {
		return nil
	}
	return s.order[i]
}
