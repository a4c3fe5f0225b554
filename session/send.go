package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/transport"
)

// Call sends a request and returns its handle at once.
func (s *Session) Call(method string, params any) *Call {
	return s.CallWith(method, params, CallOptions{})
}

// CallWith sends a request with options and returns its handle at once.
func (s *Session) CallWith(method string, params any, o CallOptions) *Call {
	s.mu.Lock()
	s.nextID++
	id := s.nextID
	s.mu.Unlock()
	key := strconv.FormatInt(id, 10)
	idJSON := json.RawMessage(key)
	token := "mcpscope-" + key
	if p := s.opts.IDPrefix; p != "" {
		idJSON = json.RawMessage(strconv.Quote(p + key))
		token, key = "mcpscope-"+p+key, journal.IDKey(idJSON)
	}
	c := s.newCall(key, idJSON, method, s.opts.Now())
	c.xw().round, c.xw().parent = o.round, o.parent
	c.xw().listen, c.xw().listenAttempt = o.listen, o.listenAttempt
	c.xw().opts = o
	if o.NoProgressToken {
		token = ""
	}
	s.mu.Lock()
	var meta map[string]any
	if v := o.modernVersion; v != "" || s.info.Era == protocol.EraModern {
		if v == "" {
			v = protocol.ModernVersion
		}
		meta = s.modernMetaLocked(v)
	}
	s.mu.Unlock()
	raw, err := protocol.WithMeta(params, token, meta)
	if err != nil {
		s.register(c, "")
		s.end(c, StateError, nil, nil, &Failure{Reason: "could not encode params for " + method, Cause: err})
		return c
	}
	if token != "" && !protocol.TokenSet(raw, token) {
		token = "" // params were not an object: no place for a token
	}
	c.setParams(raw)
	c.Name = journal.ParamName(raw)
	msg, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params,omitempty"`
	}{"2.0", idJSON, method, raw})

	if reason := s.invalidToolReason(method, raw, meta != nil); reason != "" {
		s.register(c, "")
		s.end(c, StateError, nil, nil, &Failure{Reason: reason})
		return c
	}
	if !s.register(c, token) {
		return c
	}
	headers := o.Headers
	if meta != nil {
		s.mu.Lock()
		headers = s.modernHeadersLocked(method, raw)
		s.mu.Unlock()
		for k, v := range o.Headers {
			headers[k] = v
		}
	}
	s.armTimers(c, o)
	s.enqueue(transport.Outgoing{Data: msg, Key: key, Method: method, Headers: headers}, func(err error) {
		if err != nil {
			s.sendFailed(c, err)
		}
	})
	return c
}

// register records the call; it fails the call at once when the session is
// already closed and reports false.
func (s *Session) register(c *Call, token string) bool {
	s.mu.Lock()
	s.calls.set(c.Key, c)
	s.order.add(c)
	closed, why := s.info.Closed, s.info.CloseReason
	if !closed {
		s.pending[c.Key] = c
		if token != "" {
			c.Token = strconv.Quote(token)
			s.byToken[c.Token] = c
		}
	}
	s.mu.Unlock()
	if closed {
		s.end(c, StateError, nil, nil, &Failure{Reason: "the session is closed: " + why, Kind: ErrClosed})
		return false
	}
	return true
}

func (s *Session) armTimers(c *Call, o CallOptions) {
	idle, hard := o.Timeout, o.MaxTimeout
	if idle == 0 {
		idle = s.opts.Timeout
	}
	if hard == 0 {
		hard = s.opts.MaxTimeout
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if idle > 0 {
		c.xw().idleFor = idle
		c.xw().idle = time.AfterFunc(idle, func() {
			s.timeout(c, ErrIdleTimeout, fmt.Sprintf("no response or progress for %s (idle timeout; progress resets it)", idle))
		})
		if b, ok := s.t.(transport.Backlog); ok && o.probe {
			if _, known := b.Unread(); known {
				c.x().idle.Stop() // the probe's wait starts once the server has read it
				go s.idleFromRead(c, b)
			}
		}
	}
	if hard > 0 {
		c.xw().hardAt = time.Now().Add(hard)
		c.xw().hard = time.AfterFunc(hard, func() {
			s.timeout(c, ErrMaxTimeout, fmt.Sprintf("still running after %s (hard limit)", hard))
		})
	}
	if s.held {
		c.pauseLocked(time.Now())
	}
}

// idleFromRead starts c's idle clock once the server has read c's request
// (the era probe's: a stdio server still starting, as npx fetching its
// package, has not read its stdin yet, and a slow start is no fault). Until
// then the handshake's own limit bounds the wait.
func (s *Session) idleFromRead(c *Call, b transport.Backlog) {
	start := time.Now()
	tick := time.NewTicker(20 * time.Millisecond) // the kernel's pipe count has no event to wait on
	defer tick.Stop()
	for {
		s.mu.Lock()
		closed, answered, sent := s.info.Closed, c.respSeq != 0, c.Seq != 0
		gone := c.st().Ended() && !answered // failed unread (the process died, the send failed)
		s.mu.Unlock()
		if closed || gone {
			return
		}
		n, ok := b.Unread()
		if answered || sent && (!ok || n == 0) { // read (an answer says so too)
			s.mu.Lock()
			if !c.st().Ended() && c.x().idle != nil && !s.held {
				c.x().idle.Reset(c.x().idleFor)
			}
			s.mu.Unlock()
			if waited := time.Since(start); waited >= c.x().idleFor { // it would have timed out
				s.Note(fmt.Sprintf("the server read %s %s after it was sent (it was still starting); the wait for its answer (%s) started then",
					c.Method, waited.Round(100*time.Millisecond), c.x().idleFor))
			}
			return
		}
		select {
		case <-tick.C:
		case <-c.Done():
		}
	}
}

func (s *Session) timeout(c *Call, kind error, why string) {
	if c.followed { // a rejoined call: stop following it, leave it running
		s.stopFollowing(c, &Failure{Reason: "timed out: " + why, Kind: kind})
		return
	}
	if !s.giveUp(c) {
		return
	}
	s.tellServer(c, "timeout")
	s.mu.Lock()
	if c.x().unmatched != "" {
		why += fmt.Sprintf("; meanwhile a response came with the id %s, which matches no request (a server bug?)", c.x().unmatched)
	}
	s.mu.Unlock()
	s.endGivenUp(c, StateError, &Failure{Reason: "timed out: " + why, Kind: kind})
}

// Notify sends a notification. done (may be nil) learns whether it went out.
func (s *Session) Notify(method string, params any, done func(error)) {
	s.notifyIn("", method, params, done)
}

// notifyIn sends a notification in MCP session sid ("" = the transport's).
func (s *Session) notifyIn(sid, method string, params any, done func(error)) {
	var raw json.RawMessage
	if params != nil {
		b, err := protocol.MarshalParams(params)
		if err != nil {
			if done != nil {
				done(err)
			}
			return
		}
		raw = b
	}
	msg, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params,omitempty"`
	}{"2.0", method, raw})
	if done == nil {
		done = func(error) {}
	}
	s.enqueue(transport.Outgoing{Data: msg, Method: method, SessionID: sid}, done)
}

// SendRaw sends bytes exactly as given (the user's own JSON-RPC). When they
// are a request with an id, the id is tracked like any call.
func (s *Session) SendRaw(data []byte) (*Call, error) {
	env, _, class := journal.DecodeClass(data)
	if class == journal.ClassInvalid || env == nil {
		return nil, errors.New("not a JSON-RPC message: expected an object with \"jsonrpc\", \"method\" and, for a request, \"id\"")
	}
	if class != journal.ClassRequest {
		done := make(chan error, 1)
		s.enqueue(transport.Outgoing{Data: data, Method: env.Method}, func(err error) { done <- err })
		return nil, nil
	}
	key := env.Key()
	c := s.newCall(key, env.ID, env.Method, s.opts.Now())
	c.Name = env.Hints().Name
	c.setParams(env.Params)
	s.mu.Lock()
	dup := s.calls.has(key)
	s.mu.Unlock()
	if dup {
		return nil, fmt.Errorf("id %s was already used in this session; pick another id", key)
	}
	token := string(env.Hints().MetaToken)
	if !s.register(c, "") {
		return c, nil
	}
	if token != "" {
		s.mu.Lock()
		c.Token = journal.IDKey(json.RawMessage(token))
		s.byToken[c.Token] = c
		s.mu.Unlock()
	}
	s.armTimers(c, CallOptions{})
	s.enqueue(transport.Outgoing{Data: data, Key: key, Method: env.Method}, func(err error) {
		if err != nil {
			s.sendFailed(c, err)
		}
	})
	return c, nil
}

func (s *Session) newCall(key string, id json.RawMessage, method string, at time.Time) *Call {
	c := s.bareCall(key, id, method, at)
	c.ex.Store(&callExtra{})
	return c
}

// bareCall is a call without its callExtra, which xw makes on first
// write: an adopted call's (see adoptLocked).
func (s *Session) bareCall(key string, id json.RawMessage, method string, at time.Time) *Call {
	return &Call{s: s, Key: key, ID: id, Method: method, started: wallNano(at)}
}

// Replay sends a past call again with a new id and the same params (its old
// progress token replaced by a fresh one).
func (s *Session) Replay(c *Call, params json.RawMessage) *Call {
	if params == nil {
		params = c.Params()
	}
	return s.Call(c.Method, protocol.StripMeta(params))
}

func (s *Session) enqueue(m transport.Outgoing, done func(error)) {
	s.outMu.Lock()
	s.unsent++
	s.outq = append(s.outq, queued{m, s.sentOnce(done)})
	s.outMu.Unlock()
	select {
	case s.outWake <- struct{}{}:
	default:
	}
}

// sentOnce wraps a message's done so the session knows when nothing it
// queued is left unsent.
func (s *Session) sentOnce(done func(error)) func(error) {
	var once sync.Once
	return func(err error) {
		once.Do(func() {
			done(err)
			s.outMu.Lock()
			if s.unsent--; s.unsent == 0 && s.flushed != nil {
				close(s.flushed)
				s.flushed = nil
			}
			s.outMu.Unlock()
		})
	}
}

// FlushWait bounds how long Close waits for queued messages (a
// notifications/cancelled above all) to reach the transport.
const FlushWait = 2 * time.Second

// flush waits until every queued message was handed over and its send
// finished, or FlushWait passed, or deadline (when not zero).
func (s *Session) flush(deadline time.Time) {
	wait := FlushWait
	if !deadline.IsZero() {
		wait = min(wait, time.Until(deadline))
	}
	if wait <= 0 {
		return // the user's limit is over: nothing more waits on the server
	}
	s.outMu.Lock()
	if s.unsent == 0 {
		s.outMu.Unlock()
		return
	}
	if s.flushed == nil {
		s.flushed = make(chan struct{})
	}
	ch := s.flushed
	s.outMu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-s.t.Done(): // nothing more can go out
	}
}

// sendLoop keeps messages in the order they were made: a cancel never
// overtakes its request.
func (s *Session) sendLoop() {
	for {
		s.outMu.Lock()
		q := s.outq
		s.outq = nil
		s.outMu.Unlock()
		for _, m := range q {
			s.t.Send(m.m, m.done)
		}
		if len(q) > 0 {
			continue
		}
		select {
		case <-s.outWake:
		case <-s.ctx.Done():
			s.outMu.Lock()
			q := s.outq
			s.outq = nil
			s.outMu.Unlock()
			for _, m := range q {
				m.done(errors.New("the session is closed"))
			}
			return
		}
	}
}
