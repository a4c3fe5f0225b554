package session

import (
	"fmt"
	"strings"
	"time"

	"mcpscope/transport"
)

// A resumed call stream that goes quiet is resumed again. server-everything
// (the TypeScript SDK 1.x with its sample event store) replays what was
// missed on a resumed GET and then sends nothing more on it: its store
// answers the replay with an event id where the SDK expects a stream id, so
// the call's later events reach no connection. A GET with the newer
// Last-Event-ID gets them. A server that keeps a resumed stream live only
// sees an extra GET when its call is silent for a while.

// QuietFirst is how long a resumed call stream may stay silent before it is
// resumed again; the wait doubles with every quiet resume in a row, up to
// the call's idle timeout (MaxRetryWait when it has none).
const QuietFirst = time.Second

// MaxQuietResumes bounds the quiet resumes in a row that bring nothing new;
// then mcpscope stops following the call (it goes on on the server).
const MaxQuietResumes = 8

// armQuietLocked (re)starts the quiet clock of stream key, a resumed
// response stream of a pending call: any frame on it restarts the clock.
func (s *Session) armQuietLocked(key string) {
	k, isPost := strings.CutPrefix(key, "post:")
	c := s.pending[k]
	if !isPost || c == nil || c.givenUp || s.info.Closed {
		return
	}
	st := s.streamLocked(key)
	wait := QuietFirst << min(st.quietN, 16)
	limit := c.x().idleFor
	if limit <= 0 {
		limit = MaxRetryWait
	}
	wait = min(wait, limit)
	if st.quiet != nil {
		st.quiet.Stop()
	}
	st.quietGen++
	gen := st.quietGen
	st.quiet = time.AfterFunc(wait, func() { s.quietFired(key, gen, wait) })
}

// touchQuietLocked notes a frame on stream key: a quiet clock armed there
// starts again, and a new message ends a run of quiet resumes.
func (s *Session) touchQuietLocked(m *transport.Meta, newMessage bool) {
	key := m.LogicalStream()
	st := s.streams[key]
	if st == nil || st.quiet == nil {
		return
	}
	if newMessage {
		st.quietN = 0
	}
	s.armQuietLocked(key)
}

// stopQuietLocked disarms the quiet clock of stream key (its stream ended,
// or its call did).
func (s *Session) stopQuietLocked(key string) {
	if st := s.streams[key]; st != nil && st.quiet != nil {
		st.quiet.Stop()
		st.quiet = nil
		st.quietGen++
	}
}

// quietFired resumes a stream that stayed silent for wait, or, after
// MaxQuietResumes of those in a row, stops following its call.
func (s *Session) quietFired(key string, gen int, wait time.Duration) {
	s.mu.Lock()
	st := s.streams[key]
	c := s.pending[strings.TrimPrefix(key, "post:")]
	if st == nil || st.quietGen != gen || c == nil || c.givenUp || s.info.Closed {
		s.mu.Unlock()
		return
	}
	st.quiet = nil
	st.quietN++
	n, lastID := st.quietN, st.lastID
	if n > MaxQuietResumes {
		s.mu.Unlock()
		s.stopFollowing(c, &Failure{Kind: ErrTimeout, Reason: fmt.Sprintf(
			"stopped following: the resumed response stream stayed quiet through %d resumes from its newest event id "+
				"(the server may have purged the events)", MaxQuietResumes)})
		return
	}
	st.resuming = true
	s.mu.Unlock()
	s.localEvent(transport.Meta{Event: transport.EvResumeAttempt, Stream: key,
		Detail: fmt.Sprintf("the resumed stream was quiet for %s: resuming again (quiet resume %d/%d), Last-Event-ID %q",
			wait, n, MaxQuietResumes, lastID)})
	if h, ok := s.t.(transport.StreamCloser); ok {
		h.CloseStream(key) // closed by client: its end is no cause for a resume of its own
	}
	s.resumeNow(key, lastID)
}

// stopFollowing ends a call this process only follows (a rejoin) without a
// word to the server: no notifications/cancelled, and the MCP session is
// left open. The call goes on there, and its record stays (updated) so that
// it can be rejoined again. A call that cannot be recorded is failed
// instead (still without a cancel).
func (s *Session) stopFollowing(c *Call, f *Failure) {
	s.mu.Lock()
	away := c.x().endedAway
	s.mu.Unlock()
	if away != "" {
		f.Reason = away + "; " + f.Reason
	}
	if _, err := s.detach(c, f); err != nil {
		s.end(c, StateError, nil, nil, f)
	}
}
