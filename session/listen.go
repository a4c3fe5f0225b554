package session

import (
	"context"
	"fmt"
	"time"

	"mcpscope/protocol"
)

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
	// The filter and attempt go with the call from the start: a refused
	// send may be handled before CallWith returns.
	return s.CallWith("subscriptions/listen", map[string]any{"notifications": f},
		CallOptions{Timeout: -1, MaxTimeout: -1, NoProgressToken: true, listen: &f, listenAttempt: attempt})
}

// relistenLocked is called when a listen call ended by a broken stream:
// 2026-07-28 has no resumption, so a fresh subscriptions/listen is sent
// (bounded by MaxRelistens); RelistenWait hears when it is.
func (s *Session) relistenLocked(c *Call, after []func()) []func() {
	if c.x().listen == nil || s.info.Closed || c.x().listenAttempt >= MaxRelistens {
		return after
	}
	f, n := *c.x().listen, c.x().listenAttempt+1
	ready := make(chan struct{})
	c.xw().relisten = ready
	return append(after, func() {
		time.AfterFunc(backoff(n), func() {
			defer close(ready)
			if !s.Info().Closed {
				next := s.listen(f, n)
				s.mu.Lock()
				c.xw().next = next
				s.mu.Unlock()
				s.localEvent(transportNote(fmt.Sprintf("listen stream %s ended unexpectedly; listening again as %s (re-listen %d/%d)", c.Key, next.Key, n, MaxRelistens)))
			}
		})
	})
}

// relistenRefused is called when a listen call's message could not be
// sent. A re-listen the server would not take (a 503 while it restarts, a
// refused connection) is one more drop: it is tried again after a backoff,
// within MaxRelistens, rather than ending listen at the first refusal. The
// first listen's failure ends it, as any call's does.
func (s *Session) relistenRefused(c *Call) {
	var after []func()
	s.mu.Lock()
	if c.x().listen != nil && c.x().listenAttempt > 0 && !c.st().Ended() {
		after = s.relistenLocked(c, after)
	}
	s.mu.Unlock()
	for _, f := range after {
		f()
	}
}

// relistenWhy says, for a listen call whose stream ended, what happens
// next: 2026-07-28 has no resumption, so mcpscope listens again, bounded.
func relistenWhy(c *Call) string {
	if c.x().listenAttempt >= MaxRelistens {
		return fmt.Sprintf("streams cannot be resumed in %s, and the %d re-listens are spent: listen again to go on", protocol.ModernVersion, MaxRelistens)
	}
	return fmt.Sprintf("streams cannot be resumed in %s: listening again (re-listen %d/%d); notifications sent in between are not replayed",
		protocol.ModernVersion, c.x().listenAttempt+1, MaxRelistens)
}

// RelistenWait waits until the re-listen that follows this listen call's
// broken stream is sent, and returns it: nil when none will come (the
// server ended the stream, the re-listens are spent, the session closed),
// or when ctx ends first.
func (c *Call) RelistenWait(ctx context.Context) *Call {
	c.s.mu.Lock()
	ready := c.x().relisten
	c.s.mu.Unlock()
	if ready == nil {
		return c.Next()
	}
	select {
	case <-ready:
		return c.Next()
	case <-ctx.Done():
		return nil
	}
}
