package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"mcpscope/transport"
)

// MaxReinits bounds how often one session re-initializes after expiry: a
// server that forgets every session at once must not make us loop.
const MaxReinits = 3

// sessionGone reports whether err says the server no longer knows the session
// we sent: 404 by the spec; 400 naming the session from servers that answer
// so (server-everything does).
func sessionGone(err error) (*transport.HTTPError, bool) {
	var he *transport.HTTPError
	if !errors.As(err, &he) || he.SessionID == "" {
		return nil, false
	}
	if he.Status == 404 {
		return he, true
	}
	if he.Status == 400 && strings.Contains(strings.ToLower(he.Body), "session") {
		return he, true
	}
	return nil, false
}

// sendFailed ends a call whose message could not be sent, and starts a
// re-initialize when the reason is an expired session.
func (s *Session) sendFailed(c *Call, err error) {
	if he, gone := sessionGone(err); gone && c.Method != "initialize" && s.Era() == EraLegacy {
		s.fail(c, "lost: the session expired", err)
		s.sessionExpired(he)
		return
	}
	s.end(c, StateError, nil, nil, &Failure{Reason: "sending " + c.Method + " failed", Cause: err, Kind: ErrSend})
}

// sessionExpired re-initializes once per expired session id (bounded over
// the session's life, with backoff), reopens the listen stream,
// re-subscribes, and marks every call that was in flight as lost.
func (s *Session) sessionExpired(he *transport.HTTPError) {
	s.mu.Lock()
	if s.rejoined {
		// A rejoin lives in the old session: a new one cannot help it.
		s.mu.Unlock()
		return
	}
	if s.info.Closed || s.expired[he.SessionID] || s.reinits >= MaxReinits {
		over := s.reinits >= MaxReinits && !s.expired[he.SessionID]
		s.expired[he.SessionID] = true
		s.mu.Unlock()
		if over {
			s.localEvent(transport.Meta{Event: transport.EvNote, Status: he.Status,
				Detail: fmt.Sprintf("session %s expired too; not re-initializing again (already did %d times)", he.SessionID, MaxReinits)})
		}
		return
	}
	s.expired[he.SessionID] = true
	s.reinits++
	n := s.reinits
	var lost []*Call
	for _, c := range s.pending {
		lost = append(lost, c)
	}
	subs := make([]string, 0, len(s.subs))
	for u := range s.subs {
		subs = append(subs, u)
	}
	s.mu.Unlock()

	s.localEvent(transport.Meta{Event: transport.EvNote, Status: he.Status, URL: he.URL,
		Detail: fmt.Sprintf("session %s expired (HTTP %d): starting a new session; %d call(s) in flight are lost", he.SessionID, he.Status, len(lost))})
	for _, c := range lost {
		s.fail(c, "lost: the session expired (HTTP "+fmt.Sprint(he.Status)+" for session "+he.SessionID+"); replay it in the new session", nil)
	}
	go func() {
		if n > 1 {
			select {
			case <-time.After(time.Duration(n-1) * time.Second):
			case <-s.ctx.Done():
				return
			}
		}
		if h, ok := s.t.(transport.SessionHolder); ok {
			h.SetSessionID("")
		}
		ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
		defer cancel()
		if _, err := s.Initialize(ctx); err != nil {
			s.localEvent(transport.Meta{Event: transport.EvNote, Detail: "re-initialize after session expiry failed: " + err.Error()})
			return
		}
		for _, u := range subs {
			s.Subscribe(u)
		}
		s.localEvent(transport.Meta{Event: transport.EvNote, Detail: fmt.Sprintf("re-initialized: new session %s (%d re-subscribed)", s.Info().SessionID, len(subs))})
	}()
}
