package session

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"mcpscope/protocol"
	"mcpscope/transport"
)

// LatestVersion is the legacy protocol version mcpscope offers.
const LatestVersion = "2025-11-25"

// listenSettle bounds the wait for the standalone stream's answer at the
// end of the handshake: on loopback it takes a millisecond.
const listenSettle = 2 * time.Second

// LegacyVersions are the initialize-era versions mcpscope speaks, oldest first.
var LegacyVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

// Initialize runs the legacy handshake: initialize (offering LatestVersion),
// check the version the server picked, then notifications/initialized, and
// on HTTP the standalone GET stream.
func (s *Session) Initialize(ctx context.Context) (*protocol.InitResult, error) {
	res, err := s.initialize(ctx)
	he, gone := transport.SessionGone(err)
	if !gone || ctx.Err() != nil {
		return res, err
	}
	// The server forgot the session before the handshake ended: the Go SDK
	// drops a session whose initialize stream broke before it handled
	// initialize, and the resume then meets 404. The spec's answer to 404 is
	// a new session; once, because a server that forgets every session would
	// make us loop.
	s.localEvent(transport.Meta{Event: transport.EvNote, Status: he.Status, URL: he.URL,
		Detail: fmt.Sprintf("session %s was gone before the handshake ended (HTTP %d): starting a new session", he.SessionID, he.Status)})
	if h, ok := s.t.(transport.SessionHolder); ok {
		h.SetSessionID("")
	}
	return s.initialize(ctx)
}

func (s *Session) initialize(ctx context.Context) (*protocol.InitResult, error) {
	caps := s.opts.Capabilities
	if caps == nil {
		caps = json.RawMessage("{}")
		if c, ok := s.opts.Responder.(Capable); ok {
			caps = c.Capabilities()
		}
	}
	c := s.CallWith("initialize", map[string]any{
		"protocolVersion": LatestVersion,
		"capabilities":    caps,
		"clientInfo":      s.opts.ClientInfo,
	}, CallOptions{NoProgressToken: true})
	raw, err := c.Wait(ctx)
	if err != nil {
		if ctx.Err() != nil {
			s.fail(c, "initialize was abandoned", ctx.Err())
		}
		return nil, fmt.Errorf("initialize with %s: %w", s.t.Describe(), err)
	}
	var res protocol.InitResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("initialize with %s: the result is not an InitializeResult: %w", s.t.Describe(), err)
	}
	if !slices.Contains(LegacyVersions, res.ProtocolVersion) {
		return &res, fmt.Errorf("the server chose protocol version %q, which mcpscope does not speak (it speaks %s); the session was not started",
			res.ProtocolVersion, strings.Join(LegacyVersions, ", "))
	}
	if h, ok := s.t.(transport.VersionHeader); ok && res.ProtocolVersion >= "2025-06-18" {
		h.SetProtocolVersion(res.ProtocolVersion)
	}
	sent := make(chan error, 1)
	s.Notify("notifications/initialized", nil, func(err error) { sent <- err })
	select {
	case err := <-sent:
		if err != nil {
			return &res, fmt.Errorf("notifications/initialized: %w", err)
		}
	case <-ctx.Done():
		return &res, ctx.Err()
	}
	if l, ok := s.t.(transport.Listener); ok && !s.opts.NoListen {
		// A server may send its own requests on the standalone stream, and
		// some drop what they send before that stream is open (the TS SDK
		// without an event store): wait, briefly, until it is answered, so
		// the session can receive before its first call.
		answered := make(chan error, 1)
		l.OpenListen(func(err error) { answered <- err })
		wait := time.NewTimer(listenSettle)
		defer wait.Stop()
		select {
		case <-answered:
		case <-wait.C: // a server that holds its headers back: go on without
		case <-ctx.Done():
			return &res, ctx.Err()
		}
	}
	if h, ok := s.t.(transport.SessionHolder); ok {
		s.shareSession(h.SessionID())
	}
	s.store.Notify()
	return &res, nil
}

// HasCapability reports whether the server declared a top-level capability.
func (s *Session) HasCapability(name string) bool {
	s.mu.Lock()
	raw := s.info.Capabilities
	s.mu.Unlock()
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	_, ok := m[name]
	return ok
}

// SetLogLevel sends logging/setLevel and records the level once accepted.
// In the stateless era there is no such request: the level rides in every
// later request's _meta, and SetLogLevel returns nil.
func (s *Session) SetLogLevel(level string) *Call {
	if s.Era() == protocol.EraModern {
		s.mu.Lock()
		s.info.LogLevel = level
		s.mu.Unlock()
		s.store.Notify()
		return nil
	}
	c := s.Call("logging/setLevel", map[string]any{"level": level})
	go func() {
		<-c.Done()
		if c.Snapshot().State == StateOK {
			s.mu.Lock()
			s.info.LogLevel = level
			s.mu.Unlock()
			s.store.Notify()
		}
	}()
	return c
}

// Subscribe sends resources/subscribe and tracks the uri once accepted.
func (s *Session) Subscribe(uri string) *Call {
	return s.subscription("resources/subscribe", uri, true)
}

// Unsubscribe sends resources/unsubscribe and forgets the uri once accepted.
func (s *Session) Unsubscribe(uri string) *Call {
	return s.subscription("resources/unsubscribe", uri, false)
}

func (s *Session) subscription(method, uri string, on bool) *Call {
	c := s.Call(method, map[string]any{"uri": uri})
	go func() {
		<-c.Done()
		if c.Snapshot().State == StateOK {
			s.mu.Lock()
			if on {
				s.subs[uri] = true
			} else {
				delete(s.subs, uri)
			}
			s.mu.Unlock()
			s.store.Notify()
		}
	}()
	return c
}
