package session

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"mcpscope/protocol"
	"mcpscope/transport"
)

// Stream resumption (Streamable HTTP, 2025 era): a response stream that ends
// before its response is continued with GET + Last-Event-ID, after the
// server's retry: (or a bounded backoff), a bounded number of times. Event
// ids seen twice are kept in the journal but applied once.

// MaxResumeAttempts bounds consecutive reconnects of one stream without a
// message in between (an event that only primes a new id does not count:
// a server could otherwise keep a client reconnecting forever).
const MaxResumeAttempts = 5

// MaxRetryWait caps the server's retry: a server asking for hours gets this.
const MaxRetryWait = 30 * time.Second

// MaxReissues bounds how often one request is sent again with a new id
// after its response stream broke (2026-07-28, which has no resumption).
const MaxReissues = 2

type streamState struct {
	lastID   string
	retry    time.Duration
	seen     map[string]struct{}
	attempts int
	timer    *time.Timer
	fire     func()
	resuming bool        // a resume was sent and has no answer yet (Info.Reconnecting)
	quiet    *time.Timer // a resumed call stream's quiet clock (quiet.go)
	quietN   int         // quiet resumes in a row without a new message
	quietGen int         // bumped when the quiet clock is re-armed or stopped
	heard    bool        // a message came on it
	bare     bool        // a message came on it without an event id
}

// dropStreamLocked forgets the state of a call's response stream that
// ended after its answer: nothing more comes on it (no resume follows an
// answered call), and a session of a million calls would otherwise keep
// a million of them.
func (s *Session) dropStreamLocked(key string) {
	if st := s.streams[key]; st != nil && st.timer == nil && st.quiet == nil && !st.resuming {
		delete(s.streams, key)
	}
}

func (s *Session) streamLocked(key string) *streamState {
	st := s.streams[key]
	if st == nil {
		st = &streamState{}
		s.streams[key] = st
	}
	return st
}

// trackEventLocked records an SSE id and retry; it reports a duplicate id.
// Only a message (not a priming event) shows the stream is alive again.
func (s *Session) trackEventLocked(m *transport.Meta, message bool) (dup bool) {
	key := m.LogicalStream()
	if message && strings.HasPrefix(key, "post:") { // for DetachWhenRejoinable
		st := s.streamLocked(key)
		st.heard = true
		st.bare = st.bare || m.EventID == "" // no id to resume from
	}
	if key == "" || (m.EventID == "" && m.Retry == 0) {
		return false
	}
	st := s.streamLocked(key)
	if m.Retry > 0 {
		st.retry = time.Duration(m.Retry) * time.Millisecond
	}
	if m.EventID == "" {
		return false
	}
	if _, ok := st.seen[m.EventID]; ok {
		return true
	}
	if st.seen == nil {
		st.seen = map[string]struct{}{}
	}
	st.seen[m.EventID] = struct{}{}
	st.lastID = m.EventID
	if message {
		st.attempts = 0 // a message: the stream is alive again
	}
	if k, ok := strings.CutPrefix(key, "post:"); ok {
		if c := s.pending[k]; c != nil {
			s.persistLocked(c)
		}
	}
	return false
}

// onStreamEndLocked decides what a stream's end means: nothing (its call is
// done, or we closed it), a resume, a reopened listen stream, or the end of
// a call that cannot be resumed.
func (s *Session) onStreamEndLocked(m transport.Meta, after []func()) []func() {
	if m.Detail == "closed by client" || s.info.Closed {
		return after
	}
	key := m.LogicalStream()
	s.stopQuietLocked(key) // the stream is over: a resume of it (below) arms a new clock
	callKey, isPost := strings.CutPrefix(key, "post:")
	var c *Call
	if isPost {
		if c = s.pending[callKey]; c == nil || c.givenUp {
			if c == nil {
				s.dropStreamLocked(key)
			}
			return after // answered, or being given up: the stream ended as it should
		}
	} else if !strings.HasPrefix(key, "get:") {
		return after
	}
	_, canResume := s.t.(transport.Resumer)
	st := s.streams[key]
	switch {
	case canResume && st != nil && st.lastID != "" && st.attempts < MaxResumeAttempts:
		after = append(after, s.scheduleResume(key, m.Event))
	case !isPost && canResume && (st == nil || st.attempts < MaxResumeAttempts):
		// A listen stream without ids: open a fresh one (bounded).
		after = append(after, s.scheduleResume(key, m.Event))
	case isPost && s.info.Era == protocol.EraModern && c.x().listen == nil && c.x().opts.reissues < MaxReissues:
		after = append(after, s.reissue(c, m))
	case isPost:
		after = s.relistenLocked(c, after)
		why := "the server closed the response stream before answering"
		if m.Event == transport.EvStreamDropped {
			why = "the response stream broke before an answer arrived"
		}
		if m.Detail != "" {
			why += " (" + m.Detail + ")"
		}
		switch {
		case c.x().listen != nil && s.info.Era == protocol.EraModern:
			why += "; " + relistenWhy(c)
		case !canResume:
		case st == nil || st.lastID == "":
			why += "; it carried no SSE event id, so it cannot be resumed"
		default:
			why += fmt.Sprintf("; gave up after %d resume attempts", MaxResumeAttempts)
			if s.rejoined {
				why += " (the server may have purged the events, or the call finished long ago)"
			}
		}
		after = append(after, func() { s.lostStream(c, why, nil) })
	}
	return after
}

// scheduleResume returns the work (run outside the lock) that arms the next
// attempt for stream key and shows it as a transport event.
func (s *Session) scheduleResume(key, cause string) func() {
	return func() {
		s.mu.Lock()
		st := s.streamLocked(key)
		if st.timer != nil || s.info.Closed {
			s.mu.Unlock()
			return
		}
		st.attempts++
		n, delay, src, from := st.attempts, st.retry, "the server's retry", st.lastID
		if delay <= 0 {
			delay, src = backoff(n), "backoff"
		} else if delay > MaxRetryWait {
			src = fmt.Sprintf("the server asked for %s; capped", delay)
			delay = MaxRetryWait
		}
		fire := func() {
			s.mu.Lock()
			if st.fire == nil { // already fired (reconnect now) or cancelled
				s.mu.Unlock()
				return
			}
			st.timer, st.fire = nil, nil
			lastID, closed := st.lastID, s.info.Closed
			st.resuming = !closed
			s.mu.Unlock()
			if !closed {
				s.resumeNow(key, lastID)
			}
		}
		st.fire = fire
		st.timer = time.AfterFunc(delay, fire)
		s.mu.Unlock()
		s.localEvent(transport.Meta{Event: transport.EvResumeAttempt, Stream: key,
			Detail: fmt.Sprintf("%s: reconnect attempt %d/%d in %s (%s), Last-Event-ID %q", cause, n, MaxResumeAttempts,
				delay, src, from)})
	}
}

func backoff(attempt int) time.Duration {
	d := time.Second
	for i := 1; i < attempt; i++ {
		d = d * 3 / 2
	}
	return min(d, 10*time.Second)
}

// resumeNow performs one attempt: a GET with Last-Event-ID, or for a listen
// stream without ids a fresh GET.
func (s *Session) resumeNow(key, lastID string) {
	r, ok := s.t.(transport.Resumer)
	if !ok {
		s.resumed(key)
		return
	}
	if lastID == "" && strings.HasPrefix(key, "get:") {
		if l, ok := s.t.(transport.Listener); ok {
			l.OpenListen(func(error) { s.resumed(key) })
		} else {
			s.resumed(key)
		}
		return
	}
	r.Resume(key, lastID, func(err error) {
		s.resumed(key)
		if err == nil {
			// Frames follow; the stream's end brings us back here if
			// needed, and a stream that goes quiet is asked again.
			s.mu.Lock()
			s.armQuietLocked(key)
			s.mu.Unlock()
			return
		}
		s.resumeFailed(key, err)
	})
}

// resumed notes that a resume got its answer (a stream, or a failure that
// resumeFailed handles): the stream no longer counts as reconnecting.
func (s *Session) resumed(key string) {
	s.mu.Lock()
	if st := s.streams[key]; st != nil {
		st.resuming = false
	}
	s.mu.Unlock()
}

// resumeFailed handles a resume GET that got no stream: try again while
// attempts remain, else end the call with what went wrong.
func (s *Session) resumeFailed(key string, err error) {
	var he *transport.HTTPError
	gone := errors.As(err, &he) && he.SessionID != "" && (he.Status == 404 || he.Status == 400)
	// Nobody listens there any more (the server died): trying again in a
	// few seconds will not change that, and the call should end now.
	refused := errors.Is(err, syscall.ECONNREFUSED)
	s.mu.Lock()
	st := s.streamLocked(key)
	attempts := st.attempts
	var c *Call
	if k, ok := strings.CutPrefix(key, "post:"); ok {
		c = s.pending[k]
	}
	closed := s.info.Closed
	s.mu.Unlock()
	if closed {
		return
	}
	if !gone && !refused && attempts < MaxResumeAttempts {
		s.scheduleResume(key, "resume failed")()
		return
	}
	if c == nil {
		return
	}
	reason := fmt.Sprintf("could not resume the response stream after %d attempts", attempts)
	switch {
	case gone:
		reason = "could not resume the response stream: the server no longer knows this session"
	case refused:
		reason = "could not resume the response stream: the server refuses connections (it is not running)"
	}
	if gone {
		s.fail(c, reason, err) // the call went with its session: nothing left to rejoin
	} else {
		s.lostStream(c, reason, err)
	}
	if gone && c.Method != "initialize" { // the handshake starts its own new session
		s.sessionExpired(he)
	}
}

// lostStream ends a call whose response stream could not be resumed. A
// rejoined call only stops being followed: it may still run on the server,
// and its record stays for another rejoin.
func (s *Session) lostStream(c *Call, why string, cause error) {
	if c.followed {
		s.stopFollowing(c, &Failure{Reason: why, Cause: cause})
		return
	}
	s.fail(c, why, cause)
}

// ReconnectNow fires every pending reconnect at once instead of waiting.
func (s *Session) ReconnectNow() int {
	s.mu.Lock()
	var fires []func()
	for _, st := range s.streams {
		if st.timer != nil && st.fire != nil {
			st.timer.Stop()
			fires = append(fires, st.fire)
		}
	}
	s.mu.Unlock()
	for _, f := range fires {
		f()
	}
	return len(fires)
}

func transportNote(detail string) transport.Meta {
	return transport.Meta{Event: transport.EvNote, Detail: detail}
}

// localEvent records something the session itself did (a resume attempt, an
// era decision) as a frame, so it is journaled and shown like the rest.
func (s *Session) localEvent(m transport.Meta) {
	if s.follows {
		return // a Feed numbers the frames; the session adds none of its own
	}
	s.Ingest(transport.Frame{Time: time.Now(), Dir: transport.Local, Kind: transport.Event, Meta: m})
}

// Note records a line about the session's life (what the client decided,
// and why) in the journal and the store, as a local event.
func (s *Session) Note(detail string) { s.localEvent(transportNote(detail)) }

// reissue sends c's request again with a new id after its response stream
// broke: 2026-07-28 has no resumption, and the spec says the client MUST
// re-issue it. The two are linked (c.x().next), and waiting on c follows on.
// A call the user cancelled never gets here: it is no longer pending.
func (s *Session) reissue(c *Call, m transport.Meta) func() {
	why := "the response stream broke before an answer arrived"
	if m.Event == transport.EvStreamClosed {
		why = "the server closed the response stream before answering"
	}
	return func() {
		o := c.x().opts
		o.reissueOf, o.reissues = c.Key, c.x().opts.reissues+1
		next := s.CallWith(c.Method, protocol.StripMeta(c.params()), o)
		s.mu.Lock()
		c.xw().next = next
		s.mu.Unlock()
		s.end(c, StateError, nil, nil, &Failure{Reason: fmt.Sprintf("%s; re-issued as #%s", why, next.Key), Kind: ErrReissued})
		s.localEvent(transportNote(fmt.Sprintf("call %s (%s): %s; re-issued as %s (attempt %d of %d)", c.Key, c.Method, why, next.Key,
			o.reissues, MaxReissues)))
	}
}
