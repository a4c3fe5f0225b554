package session

import "time"

// ListenFilter is what a subscriptions/listen stream asks for (2026-07-28;
// TaskIDs is the tasks extension's addition).
type ListenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	TaskIDs               []string `json:"taskIds,omitempty"`
}

// MaxRelistens bounds automatic re-listens after unexpected stream ends.
const MaxRelistens = 5

// Listen opens a listen stream. Its notifications carry the listen id in
// _meta and are correlated to the returned call; the acknowledged subset is
// in the call's snapshot (Ack). It runs until cancelled or the server ends
// it; an unexpected end re-listens (bounded), since nothing is replayed.
func (s *Session) Listen(f ListenFilter) *Call {
	return s.listen(f, 0)
}

func (s *Session) listen(f ListenFilter, attempt int) *Call {
	c := s.CallWith("subscriptions/listen", map[string]any{"notifications": f},
		CallOptions{Timeout: -1, MaxTimeout: -1, NoProgressToken: true})
	s.mu.Lock()
	c.listen, c.listenAttempt = &f, attempt
	s.mu.Unlock()
	return c
}

// relistenLocked is called when a listen call ended by a broken stream.
func (s *Session) relistenLocked(c *Call, after []func()) []func() {
	if c.listen == nil || s.info.Closed || c.listenAttempt >= MaxRelistens {
		return after
	}
	f, n := *c.listen, c.listenAttempt+1
	return append(after, func() {
		time.AfterFunc(backoff(n), func() {
			if !s.Info().Closed {
				next := s.listen(f, n)
				s.mu.Lock()
				c.next = next
				s.mu.Unlock()
				s.localEvent(transportNote("listen stream " + c.Key + " ended unexpectedly; listening again as " + next.Key))
			}
		})
	})
}
