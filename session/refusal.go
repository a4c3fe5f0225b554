package session

import "mcpscope/transport"

// ProbeMethod is the era probe's request.
const ProbeMethod = "server/discover"

// RefusalOf is the key of the request an error without an id answers,
// when the frame ties it to one: the body of a non-2xx HTTP answer on that
// request's own POST. A 2025 server answers the era probe so (server-
// everything: 400, {"error":{…},"id":null}): that is the probe's answer,
// a refusal that says "legacy", not a stray error. ok is false otherwise.
func RefusalOf(m *transport.Meta, e *Envelope) (key string, ok bool) {
	if e == nil || e.Class() != ClassError || e.Key() != "" || m.Status < 400 {
		return "", false
	}
	return m.PostCall()
}

// Refused reports whether c is the era probe answered with an error: the
// server's way of saying it speaks the initialize era. It is the probe's
// result, not a failure (~e does not match it; its state word is legacy).
func (c *CallSnapshot) Refused() bool {
	return c.Probe && c.State == StateError && c.RPCError != nil
}
