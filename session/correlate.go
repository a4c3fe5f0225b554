package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"mcpscope/framestore"
	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/transport"
)

// correlate ties a message to a call and updates state. Called with s.mu held;
// work that may block is returned in after.
func (s *Session) correlate(it *framestore.Item, e *journal.Envelope, after []func()) []func() {
	class := e.Class()
	if it.Frame.Dir == transport.Out {
		switch class {
		case journal.ClassRequest:
			if old := s.calls.get(e.Key()); s.offline && (old == nil || old.Seq != 0 && old.st().Ended()) {
				// A new call, or a new one under an id whose call ended (a
				// fallback session after its failed attempt in one journal).
				s.adoptLocked(e, it)
			}
			if c := s.calls.get(e.Key()); c != nil {
				it.CallKey = c.Key
				if c.Seq == 0 {
					c.Seq = it.Seq
					s.wireTokenLocked(c, e) // sent under another id and token (follow.go)
				}
			}
		case journal.ClassNotification:
			if e.Method == "notifications/cancelled" {
				it.CallKey = journal.IDKey(e.Hints().RequestID)
				if s.offline {
					s.clientCancelledLocked(it, e) // load.go
				}
			}
		}
		return after
	}
	switch class {
	case journal.ClassResult, journal.ClassError:
		key := e.Key()
		refusal := false
		if k, ok := journal.RefusalOf(&it.Frame.Meta, e); ok && s.isProbeLocked(k) {
			key, refusal = k, true // the era probe's HTTP error answer: the probe's result
			it.Note = "the era probe's refusal: the server speaks the initialize era"
		}
		if key == "" {
			it.Note = "error without an id (the server could not read a request)"
			return s.warnLocked(it.Note, after)
		}
		c := s.calls.get(key)
		if c == nil && s.probeAnsweredAmissLocked(key, it) != nil {
			return after
		}
		if c == nil {
			it.Note = "response to unknown id " + key
			if twin := s.typedTwinLocked(key); twin != nil {
				twin.xw().unmatched = key
				it.Note += fmt.Sprintf(": call %s waits for the id %s; JSON-RPC ids are typed, so this answers nothing", twin.Key, twin.ID)
			}
			return s.warnLocked(it.Note, after)
		}
		it.CallKey = c.Key
		if c.respSeq == 0 {
			c.respSeq = it.Seq
		}
		if refusal && c.st() == StateError && c.x().rpcErr == nil && c.x().failure != nil && c.x().failure.Kind == ErrSend {
			// Read back, the HTTP error event ended the probe first (onEvent);
			// its body is the answer that event stood for.
			c.setErrors(e.Error, nil)
			return after
		}
		if c.st().Ended() || c.givenUp {
			c.late++
			it.Note = "late response: the call had already ended (" + string(c.st()) + ")"
			if !c.st().Ended() {
				it.Note = "late response: the call was already given up"
			}
			return after
		}
		if class == journal.ClassError {
			if s.offline && journal.ProxyCancelAnswer(&it.Frame.Meta) {
				s.proxyCancelledLocked(c, it, e) // load.go
				return after
			}
			s.endLocked(c, StateError, nil, e.Error, nil, it.Frame.Time)
		} else if f := invalidResultType(s.info.Era, e.Hints()); f != nil {
			// The frame stays in the store and the journal as it came; the
			// call fails, as the 2026-07-28 spec says of a resultType the
			// client does not recognise.
			it.Note = f.Reason
			s.endLocked(c, StateError, nil, nil, f, it.Frame.Time)
			if !s.offline { // the journal says why the call failed, beside the frame
				why := fmt.Sprintf("%s %s (seq %d) failed: %s; the spec says a client must treat it as invalid", c.Method, c.Key, it.Seq, f.Reason)
				after = append(after, func() { s.Note(why) })
			}
		} else {
			result, rt := e.Result, e.ResultKind()
			// A journal read back holds a call for every call: a tool's
			// result (most of a journal's) stays in the journal too, and
			// Call.Result reads it back. Rounds, tasks and listings keep
			// theirs: the session reads them again.
			leave := s.offline && s.store.Journaled() && c.Method == "tools/call" && rt == "complete" && len(result) > 0
			switch {
			case len(result) > framestore.MaxHeldFrame && s.store.Journaled():
				result = nil // the journal holds it; Call.Result reads it back
				c.resultSeq = it.Seq
			case leave:
				result = nil
			case s.store.Journaled():
				// Its own bytes, so the frame's buffer goes once the window
				// lets go of the frame (a call outlives its frames).
				result = bytes.Clone(result)
			}
			if s.endLocked(c, StateOK, result, nil, nil, it.Frame.Time) && leave {
				c.resultSeq = it.Seq
			}
			c.setResultType(rt)
			c.isError = c.Method == "tools/call" && e.Hints().IsError
			s.noteResultLocked(c, e)
			if !s.offline && c.rt == rtInputRequired {
				res := e.Result
				after = append(after, func() { go s.continueRounds(c, res) })
			}
		}
	case journal.ClassNotification:
		s.info.Notifications++
		after = s.onNotification(it, e, after)
	case journal.ClassRequest:
		req := ServerRequest{ID: e.ID, Key: e.Key(), Method: e.Method, Params: e.Params, Seq: it.Seq}
		if strings.HasPrefix(it.Frame.Meta.Stream, "post:") {
			req.Related = strings.TrimPrefix(it.Frame.Meta.Stream, "post:")
		}
		// A request (sampling, elicitation…) on a call's own POST stream
		// belongs to that call, as its notifications do.
		if key, ok := it.Frame.Meta.PostCall(); ok && s.calls.has(key) {
			it.CallKey = key
		}
		if s.offline {
			s.serverRequestSeenLocked(it) // the client it was sent to answers it, not this session (follow.go)
			return after
		}
		after = append(after, func() { s.answer(req) })
	default:
		it.Note = "not a JSON-RPC message"
	}
	return after
}

// typedTwinLocked is the pending call whose id has key's value in another
// JSON type (the number 1 and the string "1"), if any.
func (s *Session) typedTwinLocked(key string) *Call {
	if u, err := strconv.Unquote(key); err == nil {
		return s.pending[journal.IDKey(json.RawMessage(u))]
	}
	return s.pending[strconv.Quote(key)]
}

// warnLocked tells a person at once about something that could leave a
// call waiting (Options.Warn), outside the lock.
func (s *Session) warnLocked(msg string, after []func()) []func() {
	if w := s.opts.Warn; w != nil {
		after = append(after, func() { w(msg) })
	}
	return after
}

func (s *Session) onNotification(it *framestore.Item, e *journal.Envelope, after []func()) []func() {
	// Stateless listen streams tag their notifications with the listen id.
	if sub := e.Hints().SubscriptionID; len(sub) > 0 {
		if c := s.calls.get(journal.IDKey(sub)); c != nil {
			it.CallKey = c.Key
			if e.Method == "notifications/subscriptions/acknowledged" {
				c.xw().ack = e.Params
				if c.st() == StatePending {
					c.setState(StateStreaming)
				}
			}
		} else {
			it.Note = "notification for unknown subscription " + string(sub)
		}
	}
	// On HTTP, what arrives on a request's own POST stream belongs to it.
	if key, ok := it.Frame.Meta.PostCall(); ok && s.calls.has(key) && it.CallKey == "" {
		it.CallKey = key
	}
	switch m := e.Method; {
	case m == "notifications/progress":
		p := e.Hints()
		if p.ProgressBad {
			it.Note = "progress notification with unreadable params"
			return after
		}
		c := s.byToken[journal.IDKey(p.Token)]
		if c == nil {
			c = s.spilledByLocked(journal.IDKey(p.Token), true) // progress after its call went (spill.go)
		}
		if c == nil {
			it.Note = "progress for unknown token " + string(p.Token)
			return after
		}
		it.CallKey = c.Key
		if c.st().Ended() && !(c.st() == StateDetached && s.markedSeq == it.Seq) {
			it.Note = "progress after the call ended (" + string(c.st()) + ")"
			if c.st() == StateCancelled { // what someone debugging the server wants to see
				it.Note = "the server kept working after the cancel"
			}
			return after
		}
		pr := c.progressLocked()
		pr.Step(p.Progress, p.Total, s.shared.get(p.Message), it.Frame.Time)
		c.setProgressLocked(pr)
		if c.st() == StatePending {
			c.setState(StateStreaming)
		}
		if c.x().idle != nil && !s.held {
			c.x().idle.Reset(c.x().idleFor)
		}
	case m == "notifications/message":
		s.info.Logs++
	case m == "notifications/tasks/status", m == "notifications/tasks":
		var t protocol.Task
		if json.Unmarshal(e.Params, &t) == nil {
			s.noteTaskLocked(t, "")
		}
	case strings.HasSuffix(m, "/list_changed"):
		kind := strings.TrimSuffix(strings.TrimPrefix(m, "notifications/"), "/list_changed")
		s.info.ListChanged[kind]++
	case m == "notifications/cancelled":
		if cancel := s.serverReq[journal.IDKey(e.Hints().RequestID)]; cancel != nil {
			after = append(after, cancel)
		}
	}
	return after
}

func (s *Session) onEvent(it *framestore.Item, after []func()) []func() {
	m := it.Frame.Meta
	switch m.Event {
	case transport.EvSpawned:
		s.info.PID = m.PID
	case transport.EvExited:
		why := "the server process exited"
		switch {
		case m.Signal != "":
			why += " (signal " + m.Signal + ")"
		case m.ExitCode != nil:
			why += fmt.Sprintf(" (exit code %d)", *m.ExitCode)
		}
		s.info.CloseReason = why
		if s.offline {
			// A recording: the calls end when the server did, not now.
			s.endUnansweredLocked(why+" before answering", it.Frame.Time)
			break
		}
		after = append(after, func() { s.failAll(why + " before answering") })
	case transport.EvClosed:
		if s.offline {
			s.endUnansweredLocked("the transport closed before answering", it.Frame.Time)
		}
	case transport.EvStreamClosed, transport.EvStreamDropped:
		if s.offline {
			return s.offlineStreamEndLocked(m, it.Frame.Time, after) // rounds.go
		}
		after = s.onStreamEndLocked(m, after)
	case transport.EvNote:
		if s.offline {
			s.offlineEraNoteLocked(m)
		}
	case transport.EvHTTPError:
		// A POST answered with an HTTP error failed its request; live, the
		// send returned the error. Read back, the event ends the call, so
		// that a request numbered the same later (the HTTP+SSE fallback
		// after a failed attempt, in one journal) is a call of its own.
		if key, ok := m.PostCall(); s.offline && ok && m.Status != 0 {
			if c := s.calls.get(key); c != nil {
				s.endLocked(c, StateError, nil, nil, &Failure{Reason: fmt.Sprintf("the server answered HTTP %d", m.Status), Kind: ErrSend}, it.Frame.Time)
			}
		}
	case transport.EvAuthWait, transport.EvAuthDone:
		s.holdLocked(m.Event == transport.EvAuthWait)
	}
	return after
}
