package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/transport"
)

// Links between calls a session only watches (a journal read back, a
// host's session through a proxy). Live, the session made these links as
// it sent the requests (continueRounds, reissue); read back, the frames
// carry what it takes to make them again.

// linkBack bounds how many calls back a round or a re-issue looks for the
// call it continues.
const linkBack = 4096

// linkAdoptedLocked links an adopted request to the call it continues: an
// MRTR retry (its params answer an input_required round: inputResponses,
// requestState) to that round, and a request sent again after its
// response stream broke (2026-07-28) to the call it re-issues.
func (s *Session) linkAdoptedLocked(c *Call, e *journal.Envelope) {
	if isRetryParams(e.Params) {
		for i, n := s.order.len()-2, 0; i >= 0 && n < linkBack; i, n = i-1, n+1 {
			p := s.order.at(i)
			if p != nil && p.adopted && p.x().next == nil && p.Method == c.Method && p.Name == c.Name && p.st() == StateOK &&
				p.rt == rtInputRequired {
				c.xw().round, c.xw().parent = p.x().round+1, p.Key
				p.xw().next = c
				close(p.chainLocked())
				return
			}
		}
		return
	}
	if len(s.reissueWait) == 0 {
		return
	}
	want := string(protocol.StripMeta(e.Params))
	for i, p := range s.reissueWait {
		if p.Method == c.Method && string(protocol.StripMeta(s.paramsLocked(p))) == want {
			s.reissueWait = append(s.reissueWait[:i], s.reissueWait[i+1:]...)
			c.xw().opts.reissueOf, c.xw().opts.reissues = p.Key, p.x().opts.reissues+1
			p.xw().next = c
			s.endLocked(p, StateError, nil, nil, &Failure{Reason: fmt.Sprintf("%s; re-issued as #%s", p.x().reissueWhy, c.Key),
				Kind: ErrReissued}, wallTime(c.started))
			return
		}
	}
}

// isRetryParams reports whether request params answer an input_required
// round.
func isRetryParams(params json.RawMessage) bool {
	if !bytes.Contains(params, []byte(`"inputResponses"`)) && !bytes.Contains(params, []byte(`"requestState"`)) {
		return false
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	_, a := p["inputResponses"]
	_, b := p["requestState"]
	return a || b
}

// offlineStreamEndLocked is a watched session's reading of a response
// stream that ended before its call's answer: the client that was there
// decided what followed, and the frames after this say what it was. In the
// 2026-07-28 era it sent the request again (linked when it comes); a
// stream with SSE event ids may have been resumed (the answer comes on);
// otherwise the call ended there, as it did for that client.
func (s *Session) offlineStreamEndLocked(m transport.Meta, at time.Time, after []func()) []func() {
	callKey, isPost := m.PostCall()
	if !isPost || m.Detail == "closed by client" {
		return after
	}
	c := s.pending[callKey]
	if c == nil || c.givenUp {
		if c == nil {
			s.dropStreamLocked(m.LogicalStream())
		}
		return after
	}
	why := "the server closed the response stream before answering"
	if m.Event == transport.EvStreamDropped {
		why = "the response stream broke before an answer arrived"
	}
	switch st := s.streams[m.LogicalStream()]; {
	case s.info.Era == protocol.EraModern:
		if len(s.reissueWait) >= linkBack {
			s.reissueWait = s.reissueWait[1:]
		}
		c.xw().reissueWhy = why
		s.reissueWait = append(s.reissueWait, c)
	case st != nil && st.lastID != "":
		// resumable: a resume's frames, or nothing, follow
	default:
		if m.Detail != "" {
			why += " (" + m.Detail + ")"
		}
		s.endLocked(c, StateError, nil, nil, &Failure{Reason: why}, at)
	}
	return after
}

// offlineEraNoteLocked takes the era a live session chose from the note it
// journaled ("era: modern (why)").
func (s *Session) offlineEraNoteLocked(m transport.Meta) {
	rest, ok := strings.CutPrefix(m.Detail, "era: ")
	if !ok {
		return
	}
	era, why, _ := strings.Cut(rest, " (")
	if era == protocol.EraModern || era == protocol.EraLegacy {
		s.info.Era, s.info.EraReason = era, strings.TrimSuffix(why, ")")
	}
}
