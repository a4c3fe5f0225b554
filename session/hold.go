package session

import (
	"context"
	"time"
)

// holdLocked stops (or starts again) the clocks of every pending call and
// of Within while the connection waits for a person (a browser login): a
// person's pace is not the server's.
func (s *Session) holdLocked(on bool) {
	if on == s.held {
		return
	}
	s.held = on
	now := time.Now()
	for _, c := range s.pending {
		if on {
			c.pauseLocked(now)
		} else {
			c.resumeLocked(now)
		}
	}
	close(s.holdWake)
	s.holdWake = make(chan struct{})
}

// Within returns a context that ends after d of the session's own time:
// time spent waiting for a person does not count (see holdLocked).
func (s *Session) Within(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		left := d
		for {
			s.mu.Lock()
			held, wake := s.held, s.holdWake
			s.mu.Unlock()
			if held {
				select {
				case <-wake:
					continue
				case <-cctx.Done():
					return
				}
			}
			began := time.Now()
			t := time.NewTimer(left)
			select {
			case <-t.C:
				cancel()
				return
			case <-wake:
				t.Stop()
				left -= time.Since(began)
			case <-cctx.Done():
				t.Stop()
				return
			}
		}
	}()
	return cctx, cancel
}
