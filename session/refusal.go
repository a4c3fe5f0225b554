package session

import (
	"errors"
	"fmt"

	"mcpscope/framestore"
)

// ProbeMethod is the era probe's request.
const ProbeMethod = "server/discover"

// Refused reports whether c is the era probe answered with an error: the
// server's way of saying it speaks the initialize era. It is the probe's
// result, not a failure (~e does not match it; its state word is legacy).
func (c *CallSnapshot) Refused() bool {
	return c.Probe && c.State == StateError && c.RPCError != nil
}

// ErrProbeWrongID: the era probe was answered under an id it was not sent
// with (the @effect/ai MCP server does so). Ids are how answers find their
// requests, so the server is not taken at its word: it counts as legacy,
// and the verdict is remembered like any other answer.
var ErrProbeWrongID = errors.New("server/discover answered under the wrong id")

// isProbeLocked reports whether the call under key is the era probe.
func (s *Session) isProbeLocked(key string) bool {
	c := s.calls.get(key)
	return c != nil && c.x().opts.probe
}

// probeAnsweredAmissLocked ends the era probe with ErrProbeWrongID when a
// response under an unknown id (key) arrives while the probe is the only
// request pending: nothing else could it answer. It returns the probe, nil
// when the response is a stray of another kind.
func (s *Session) probeAnsweredAmissLocked(key string, it *framestore.Item) *Call {
	if len(s.pending) != 1 {
		return nil
	}
	var p *Call
	for _, c := range s.pending {
		p = c
	}
	if !p.x().opts.probe || p.st().Ended() || p.givenUp {
		return nil
	}
	if r := []rune(key); len(r) > 64 {
		key = string(r[:64]) + "…"
	}
	reason := fmt.Sprintf("the server answered %s, sent with the id %s, under the id %s: it does not echo request ids", ProbeMethod, p.ID, key)
	it.CallKey, it.Note = p.Key, reason
	s.endLocked(p, StateError, nil, nil, &Failure{Reason: reason, Kind: ErrProbeWrongID}, it.Frame.Time)
	return p
}
