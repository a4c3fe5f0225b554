package session

// Loaded is closed once a journal Open reads in the background is read
// (or stopped, or failed: Loading says which); for every other session it
// is closed already. Wait on it instead of polling Loading.
func (s *Session) Loaded() <-chan struct{} {
	ls := &s.loading
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.done == nil {
		ls.done = make(chan struct{})
		if !ls.l.Active {
			close(ls.done)
		}
	}
	return ls.done
}

// closeDone closes what Loaded gave while the reading went on (ls.mu held).
func (ls *loadState) closeDone() {
	if ls.done != nil {
		close(ls.done)
		ls.done = nil // a later Loaded makes one closed already
	}
}

// LoadedBytes is the size of the journal being read back (0 for a live
// session): what a process weighs before tightening its GC goal.
func (s *Session) LoadedBytes() int64 { return s.Loading().Size }
