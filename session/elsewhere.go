package session

import (
	"errors"
	"fmt"
	"time"

	"mcpscope/statestore"
	"mcpscope/transport"
)

// DefaultWatchDetached is how often a session looks at the records of the
// calls it detached (one Get each), while it has any.
const DefaultWatchDetached = 2 * time.Second

// watchDetached starts, unless it runs, the watch over the records of the
// calls detached in this session: a call rejoined and finished by another
// mcpscope (its record gone from the store) must not stay "detached" here.
func (s *Session) watchDetached() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watching || s.info.Closed || s.opts.StateStore == nil || s.ctx == nil {
		return
	}
	s.watching = true
	every := s.opts.WatchDetached
	if every <= 0 {
		every = DefaultWatchDetached
	}
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-t.C:
			}
			if !s.lookAtDetached() {
				return
			}
		}
	}()
}

// lookAtDetached reads the record of every call detached here once; it
// reports false (and the watch stops) when none is left to watch.
func (s *Session) lookAtDetached() bool {
	s.mu.Lock()
	var watch []*Call
	rejoinedHere := map[string]bool{} // a handle D → r took up again in this session: its new call shows the end
	for c := range s.order.all() {
		if c.x().handle != "" && c.st() != StateDetached {
			rejoinedHere[c.x().handle] = true
		}
	}
	for c := range s.order.all() {
		if c.st() == StateDetached && c.x().handle != "" && c.x().endedAway == "" && !rejoinedHere[c.x().handle] {
			watch = append(watch, c)
		}
	}
	if len(watch) == 0 {
		s.watching = false
	}
	s.mu.Unlock()
	for _, c := range watch {
		d, err := s.opts.StateStore.Get(c.x().handle)
		switch {
		case err == nil:
			if o := d.OwnedBy(); o != nil && *o != statestore.Me() {
				s.mu.Lock()
				c.xw().rejoinedBy = o
				s.mu.Unlock()
			}
		case errors.Is(err, statestore.ErrNoSuchCall):
			lostBy := ""
			if ex, ok := s.opts.StateStore.(statestore.LossExplainer); ok {
				lostBy = ex.ExplainLoss()
			}
			if lostBy != "" {
				// Not finished elsewhere: the store lost it. Said, not
				// followed: nobody may be following it now.
				msg := fmt.Sprintf("the record of detached call %s (%s) vanished from the state store: %s; the call may still run on the server, but no mcpscope can rejoin it from there",
					c.Key, c.x().handle, lostBy)
				s.mu.Lock()
				c.xw().endedAway = "record lost by the state store"
				c.xw().failure = &Failure{Reason: msg}
				s.mu.Unlock()
				s.store.Notify()
				s.Note(msg)
				if w := s.opts.Warn; w != nil {
					w(msg)
				}
				continue
			}
			s.endedElsewhere(c)
		}
	}
	return len(watch) > 0
}

// endedElsewhere takes back a detached call whose record is gone: another
// mcpscope rejoined and finished it (or the record was forgotten). The
// server's replay of its stream, from the last event this session saw,
// says how it ended: the call follows it again (only follows: giving up
// sends no cancel) and ends here as it ended there. Without a stream to
// replay, the call says where it went.
func (s *Session) endedElsewhere(c *Call) {
	s.mu.Lock()
	if c.st() != StateDetached || s.info.Closed {
		s.mu.Unlock()
		return
	}
	why := "finished elsewhere: its record left the state store"
	if c.x().rejoinedBy != nil {
		why = fmt.Sprintf("finished elsewhere: rejoined by the mcpscope with %s", c.x().rejoinedBy)
	}
	key := "post:" + c.Key
	st := s.streams[key]
	if st == nil || st.lastID == "" || s.calls.get(c.Key) != c {
		c.xw().endedAway = why
		c.xw().failure = &Failure{Reason: why + "; how it ended was seen there"}
		s.mu.Unlock()
		s.store.Notify()
		return
	}
	lastID := st.lastID
	c.xw().endedAway, c.xw().handle, c.followed = why, "", true
	c.xw().failure, c.ended, c.givenUp = nil, 0, false
	c.setState(StateStreaming)
	c.done = make(chan struct{})
	s.pending[c.Key] = c
	if c.Token != "" {
		s.byToken[c.Token] = c
	}
	s.mu.Unlock()
	s.armTimers(c, CallOptions{})
	s.localEvent(transport.Meta{Event: transport.EvNote, Stream: key,
		Detail: fmt.Sprintf("call %s %s: following the server's replay from Last-Event-ID %q for how it ended", c.Key, why, lastID)})
	s.resumeNow(key, lastID)
}
