package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/transport"
)

// Cancel ends a running call: notifications/cancelled goes to the server and
// the request's own HTTP stream is closed (some servers never answer a
// cancelled request). A response that still arrives is kept, flagged late.
func (s *Session) Cancel(c *Call, reason string) error {
	if c.Method == "initialize" {
		return errors.New("initialize cannot be cancelled (the protocol forbids it); close the session instead")
	}
	if !s.giveUp(c) {
		return fmt.Errorf("call %s (%s) already ended", c.Key, c.Method)
	}
	if reason == "" {
		reason = "cancelled by the user in mcpscope"
	}
	s.tellServer(c, reason)
	s.endGivenUp(c, StateCancelled, &Failure{Reason: "cancelled: " + reason, Kind: ErrCancelled})
	return nil
}

// giveUp claims a live call for a timeout or a cancel, once. From here an
// answer is late: servers answer a cancelled request at once (the Go SDK
// with "context canceled"), sometimes before the call has ended here.
func (s *Session) giveUp(c *Call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.st().Ended() || c.givenUp {
		return false
	}
	c.givenUp = true
	return true
}

// endGivenUp ends a call giveUp claimed: while a give-up is under way,
// nothing else (a late answer, the stream it closed) ends the call.
func (s *Session) endGivenUp(c *Call, st State, f *Failure) {
	s.mu.Lock()
	c.givenUp = false
	ok := s.endLocked(c, st, nil, nil, f, s.opts.Now())
	s.mu.Unlock()
	if ok {
		s.store.Notify()
	}
}

// tellServer lets the server know a call is given up: stateless HTTP
// (2026-07-28) by closing the request's response and nothing else;
// everywhere else notifications/cancelled, and the request's own HTTP
// stream is closed too (some servers never answer a cancelled request).
func (s *Session) tellServer(c *Call, reason string) {
	if !(s.Era() == protocol.EraModern && s.isHTTP()) {
		s.sendCancelled(c, reason)
	}
	if h, ok := s.t.(transport.StreamCloser); ok {
		h.CloseStream(c.Key)
	}
}

func (s *Session) sendCancelled(c *Call, reason string) {
	s.notifyIn(c.x().sessionID, "notifications/cancelled", map[string]any{"requestId": c.ID, "reason": reason}, nil)
}

// end moves a call to a final state once; later calls are no-ops.
func (s *Session) end(c *Call, st State, result json.RawMessage, rpcErr *journal.RPCError, f *Failure) {
	s.mu.Lock()
	ok := s.endLocked(c, st, result, rpcErr, f, s.opts.Now())
	s.mu.Unlock()
	if ok {
		s.store.Notify()
	}
}

func (s *Session) endLocked(c *Call, st State, result json.RawMessage, rpcErr *journal.RPCError, f *Failure, at time.Time) bool {
	if c.st().Ended() || c.givenUp {
		return false
	}
	c.ended = wallNano(at)
	c.setState(st)
	c.setResult(result)
	c.setErrors(rpcErr, f)
	if c.x().idle != nil {
		c.x().idle.Stop()
		c.xw().idle = nil
	}
	if c.x().hard != nil {
		c.x().hard.Stop()
		c.xw().hard = nil
	}
	delete(s.pending, c.Key)
	s.forgetLocked(c)
	// The token stays mapped: progress after the end is still attributed
	// (and flagged) rather than shown as unknown.
	if c.done != nil {
		close(c.done)
	}
	return true
}

func (s *Session) fail(c *Call, reason string, cause error) {
	s.end(c, StateError, nil, nil, &Failure{Reason: reason, Cause: cause})
}

// failAll ends every pending call with the same synthetic error.
func (s *Session) failAll(reason string) {
	s.mu.Lock()
	now := s.opts.Now()
	n := 0
	for _, c := range s.pending {
		if s.endLocked(c, StateError, nil, nil, &Failure{Reason: reason, Kind: ErrClosed}, now) {
			n++
		}
	}
	s.mu.Unlock()
	if n > 0 {
		s.store.Notify()
	}
}
