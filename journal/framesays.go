package journal

import (
	"strings"

	"mcpscope/transport"
)

// What a recorded frame says beyond its message, read the same way by the
// session that reads a journal back and by the journal's scanners.

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

// ProxyCancelAnswer reports whether an error answer in a journal is the one
// mcpscope proxy gave its client for a cancel from a viewer (m is the
// frame's meta): it ends the client's call cancelled, not failed.
func ProxyCancelAnswer(m *transport.Meta) bool { return m.Via == transport.ViaMcpscope }

// DetachedNote reads the note a detach journals on the call's own stream
// ("detached call KEY as HANDLE", stream "post:KEY"): the call's key and
// the handle its record is kept under. Every reader of a journal (open,
// journal, export, the waterfall) ends the call there, detached, rather
// than lost with its transport later. A journal is untrusted input: the
// handle is one word, and whoever prints it makes it inert.
func DetachedNote(m *transport.Meta) (key, handle string, ok bool) {
	if m.Event != transport.EvNote {
		return "", "", false
	}
	key, ok = strings.CutPrefix(m.Stream, "post:")
	if !ok || key == "" {
		return "", "", false
	}
	handle, ok = strings.CutPrefix(m.Detail, "detached call "+key+" as ")
	if !ok || handle == "" || strings.ContainsAny(handle, " \t\r\n") {
		return "", "", false
	}
	return key, handle, true
}
