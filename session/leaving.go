package session

// Rejoinable reports whether c, running now, would be left on the server
// to rejoin if the session ended now (DetachAll detaches it): an HTTP call
// of the 2025 era whose stream carries event ids, with a state store.
// False for an ended call and for one that ends with this process.
func (s *Session) Rejoinable(c *Call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.persistableLocked(c)
}
