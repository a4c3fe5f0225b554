package session

import (
	"context"
	"fmt"
	"time"

	"mcpscope/protocol"
	"mcpscope/transport"
)

// MaxReinits bounds how often one session re-initializes after expiry: a
// server that forgets every session at once must not make us loop.
const MaxReinits = 3

// sendFailed ends a call whose message could not be sent, and starts a
// re-initialize when the reason is an expired session.
func (s *Session) sendFailed(c *Call, err error) {
	s.relistenRefused(c) // a refused re-listen is re-listened, bounded
	if he, gone := transport.SessionGone(err); gone && c.Method != "initialize" && s.Era() == protocol.EraLegacy {
		if protocol.ReadOnly(c.Method) && c.x().opts.reissues == 0 && s.sessionExpired(he) {
			return // sent again in the new session
		}
		s.fail(c, "lost: the session expired", err)
		s.sessionExpired(he)
		return
	}
	s.end(c, StateError, nil, nil, &Failure{Reason: "sending " + c.Method + " failed", Cause: err, Kind: ErrSend})
}

// sessionExpired re-initializes once per expired session id (bounded over
// the session's life, with backoff), reopens the listen stream,
// re-subscribes, and marks every call that was in flight as lost (a
// read-only one is sent again instead). It reports whether it started the
// re-initialize.
func (s *Session) sessionExpired(he *transport.HTTPError) bool {
	s.mu.Lock()
	if s.info.Closed || s.expired[he.SessionID] || s.reinits >= MaxReinits {
		over := s.reinits >= MaxReinits && !s.expired[he.SessionID]
		s.expired[he.SessionID] = true
		s.mu.Unlock()
		if over {
			s.localEvent(transport.Meta{Event: transport.EvNote, Status: he.Status,
				Detail: fmt.Sprintf("session %s expired too; not re-initializing again (already did %d times)", he.SessionID, MaxReinits)})
		}
		return false
	}
	s.expired[he.SessionID] = true
	s.reinits++
	n := s.reinits
	s.info.Reinitializing = true // until the new session answers or fails (below)
	// A request that only reads (a list, a read, a ping) is sent once
	// more in the new session; the rest are lost, and say why.
	var lost, resend []*Call
	for _, c := range s.pending {
		if protocol.ReadOnly(c.Method) && c.x().opts.reissues == 0 && !c.adopted && c.x().sessionID == "" {
			resend = append(resend, c)
		} else {
			lost = append(lost, c)
		}
	}
	old := s.sessLeases[he.SessionID]
	delete(s.sessLeases, he.SessionID)
	subs := make([]string, 0, len(s.subs))
	for u := range s.subs {
		subs = append(subs, u)
	}
	s.mu.Unlock()

	old.Release() // nobody can use a session the server forgot
	s.localEvent(transport.Meta{Event: transport.EvNote, Status: he.Status, URL: he.URL,
		Detail: fmt.Sprintf("session %s expired (HTTP %d): starting a new session; %d call(s) in flight are lost, %d read-only request(s) will be sent again",
			he.SessionID, he.Status, len(lost), len(resend))})
	why := "the session expired (HTTP " + fmt.Sprint(he.Status) + " for session " + he.SessionID + ")"
	for _, c := range lost {
		s.fail(c, "lost: "+why+"; replay it in the new session", nil)
	}
	go func() {
		if n > 1 {
			select {
			case <-time.After(time.Duration(n-1) * time.Second):
			case <-s.ctx.Done():
				s.mu.Lock()
				s.info.Reinitializing = false
				s.mu.Unlock()
				return
			}
		}
		if h, ok := s.t.(transport.SessionHolder); ok {
			h.SetSessionID("")
		}
		ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
		defer cancel()
		_, err := s.Initialize(ctx)
		s.mu.Lock()
		s.info.Reinitializing = false
		if err != nil && s.info.Unreachable == "" {
			// It answered, but no session came of it: nothing works now.
			s.info.Unreachable = "no new session could be started: " + err.Error()
		}
		s.mu.Unlock()
		if err != nil {
			s.localEvent(transport.Meta{Event: transport.EvNote, Detail: "re-initialize after session expiry failed: " + err.Error()})
			for _, c := range resend {
				s.fail(c, "lost: "+why+", and no new session could be started", err)
			}
			return
		}
		for _, c := range resend {
			s.resendAfterExpiry(c, why)
		}
		for _, u := range subs {
			s.Subscribe(u)
		}
		s.localEvent(transport.Meta{Event: transport.EvNote, Detail: fmt.Sprintf("re-initialized: new session %s (%d re-subscribed)", s.Info().SessionID, len(subs))})
	}()
	return true
}

// resendAfterExpiry sends a read-only request lost with its session once
// more in the new one, linked like a re-issue (waiting on c follows on).
func (s *Session) resendAfterExpiry(c *Call, why string) {
	s.mu.Lock()
	pending := s.pending[c.Key] == c
	s.mu.Unlock()
	if !pending {
		return // it ended meanwhile (a timeout, a cancel)
	}
	o := c.x().opts
	o.reissueOf, o.reissues = c.Key, c.x().opts.reissues+1
	next := s.CallWith(c.Method, protocol.StripMeta(c.params()), o)
	s.mu.Lock()
	c.xw().next = next
	s.mu.Unlock()
	s.end(c, StateError, nil, nil, &Failure{Reason: fmt.Sprintf("lost: %s; it only reads, so it was sent again as #%s in the new session", why, next.Key),
		Kind: ErrReissued})
}
