package session

import "mcpscope/transport"

// noteReachLocked keeps Info.Unreachable from the frames themselves: a send
// or a stream that got no HTTP answer at all says the server cannot be
// reached; anything the server says (a message, a stream opened, any HTTP
// status, an error one too) says it can. Recordings and attached feeds
// keep what they were (their connection is not this process's).
func (s *Session) noteReachLocked(f *transport.Frame) {
	if s.offline || s.follows {
		return
	}
	m := &f.Meta
	switch {
	case f.Dir == transport.In:
		s.info.Unreachable = ""
	case f.Kind != transport.Event:
	case m.Status != 0, m.Event == transport.EvStreamOpened, m.Event == transport.EvStreamResumed:
		s.info.Unreachable = ""
	case m.Event == transport.EvSendFailed, m.Event == transport.EvHTTPError:
		s.info.Unreachable = m.Detail
	}
}
