package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"mcpscope/transport"
)

// RejoinInfo is what the session cannot know by itself but a rejoin needs:
// how to reach the server again. Secrets are named, never stored.
type RejoinInfo struct {
	Target     string            // the endpoint URL
	Headers    map[string]string // non-secret extra headers
	SecretRefs map[string]string // header → "env:NAME" (Authorization → "env:MCPSCOPE_BEARER")
}

// persistEvery bounds state-file writes under a progress flood.
const persistEvery = 250 * time.Millisecond

// persistable reports whether c can be rejoined from another process: an
// HTTP call of the 2025 era whose stream carries event ids, or a task.
func (s *Session) persistableLocked(c *Call) bool {
	if s.opts.StateStore == nil || s.opts.Rejoin.Target == "" || c.state.Ended() || c.Method == "initialize" ||
		strings.HasPrefix(c.Method, "tasks/") { // a task's own record covers its tasks/* calls
		return false
	}
	st := s.streams["post:"+c.Key]
	return st != nil && st.lastID != ""
}

func handleFor(c *Call) string {
	return fmt.Sprintf("%s-%d-%s", c.started.UTC().Format("20060102T150405"), os.Getpid(), strings.Trim(c.Key, `"`))
}

// recordLocked is the call's state for the StateStore.
func (s *Session) recordLocked(c *Call) Detached {
	d := Detached{
		Handle: c.handle, Target: s.opts.Rejoin.Target, Transport: "http", Headers: s.opts.Rejoin.Headers,
		SecretRefs: s.opts.Rejoin.SecretRefs, ProtocolVersion: s.info.ProtocolVersion, Era: s.info.Era,
		RequestID: c.ID, Method: c.Method, Name: c.Name, Params: c.Params, TaskID: c.taskID,
		Progress: c.progress, Started: c.started, Journal: s.info.JournalPath, OwnerPID: os.Getpid(),
		NextID: s.nextID,
	}
	if c.Token != "" {
		d.ProgressToken = json.RawMessage(c.Token)
	}
	if h, ok := s.t.(transport.SessionHolder); ok {
		d.SessionID = h.SessionID()
	}
	if st := s.streams["post:"+c.Key]; st != nil && st.lastID != "" {
		d.LastEventIDs = map[string]string{"post:" + c.Key: st.lastID}
	}
	return d
}

// persistLocked schedules a (debounced) write of c's state, so a kill -9
// leaves a record another mcpscope can rejoin.
func (s *Session) persistLocked(c *Call) {
	if !s.persistableLocked(c) || c.persistTimer != nil {
		return
	}
	if c.handle == "" {
		c.handle = handleFor(c)
	}
	c.persistTimer = time.AfterFunc(persistDelay(c), func() {
		// persistMu orders this write with forgetLocked's delete: a record
		// must never be written after the call that owns it ended.
		c.persistMu.Lock()
		defer c.persistMu.Unlock()
		s.mu.Lock()
		c.persistTimer = nil
		if c.state.Ended() {
			s.mu.Unlock()
			return
		}
		d := s.recordLocked(c)
		c.persisted = true
		s.mu.Unlock()
		_ = s.opts.StateStore.Put(d)
	})
}

// persistDelay writes the first record at once (the stream may break any
// moment) and later ones at most every persistEvery.
func persistDelay(c *Call) time.Duration {
	if !c.persisted {
		return 0
	}
	return persistEvery
}

// forgetLocked removes the record of a call that ended here.
func (s *Session) forgetLocked(c *Call) {
	if c.persistTimer != nil {
		c.persistTimer.Stop()
		c.persistTimer = nil
	}
	if c.handle != "" && s.opts.StateStore != nil && c.state != StateDetached {
		h := c.handle
		go func() {
			c.persistMu.Lock()
			defer c.persistMu.Unlock()
			_ = s.opts.StateStore.Delete(h)
			s.store.Notify() // readers waiting on the record's removal
		}()
	}
}

// Detach leaves a running call to the server and keeps its state in the
// StateStore: its stream is closed without a cancel, and `mcpscope rejoin`
// (or the UI) can pick it up later, from this process or another.
func (s *Session) Detach(c *Call) (string, error) {
	s.mu.Lock()
	if s.opts.StateStore == nil {
		s.mu.Unlock()
		return "", errors.New("this session keeps no call state (no state store)")
	}
	if c.state.Ended() {
		s.mu.Unlock()
		return "", fmt.Errorf("call %s already ended (%s)", c.Key, c.state)
	}
	if !s.persistableLocked(c) {
		s.mu.Unlock()
		return "", fmt.Errorf("call %s cannot be rejoined later: only HTTP calls whose stream carries SSE event ids (a server with an event store), or tasks, can", c.Key)
	}
	if c.handle == "" {
		c.handle = handleFor(c)
	}
	d := s.recordLocked(c)
	d.OwnerPID = 0 // nobody holds it now
	s.endLocked(c, StateDetached, nil, nil, &Failure{Reason: "detached: rejoin with mcpscope rejoin " + c.handle}, time.Now())
	s.mu.Unlock()
	if err := s.opts.StateStore.Put(d); err != nil {
		return "", fmt.Errorf("keep the call's state: %w", err)
	}
	if h, ok := s.t.(transport.StreamCloser); ok {
		h.CloseStream(c.Key)
	}
	s.localEvent(transport.Meta{Event: transport.EvNote, Stream: "post:" + c.Key, Detail: "detached call " + c.Key + " as " + d.Handle})
	return d.Handle, nil
}

// DetachAll detaches every call that can be rejoined (the inspector quits
// but the work goes on); the rest are left to end as usual.
func (s *Session) DetachAll() []string {
	var handles []string
	for _, c := range s.Calls() {
		s.mu.Lock()
		ok := s.persistableLocked(c)
		s.mu.Unlock()
		if ok {
			if h, err := s.Detach(c); err == nil {
				handles = append(handles, h)
			}
		}
	}
	return handles
}

// Rejoin picks up a detached call in this new session: same endpoint,
// session id and request id; the stream resumes from the last event id, so
// the progress missed meanwhile and the result arrive here. It returns the
// call, already registered; Start the session first.
func (s *Session) Rejoin(ctx context.Context, d Detached) (*Call, error) {
	if len(d.LastEventIDs) == 0 && d.TaskID == "" {
		return nil, fmt.Errorf("call %s has no stream position or task to rejoin from", d.Handle)
	}
	key := idKey(d.RequestID)
	c := s.newCall(key, d.RequestID, d.Method, d.Started)
	c.Params, c.Name, c.taskID, c.progress, c.handle, c.persisted = d.Params, d.Name, d.TaskID, d.Progress, d.Handle, true
	c.state = StateStreaming
	s.mu.Lock()
	s.rejoined = true
	s.info.ProtocolVersion, s.info.Era = d.ProtocolVersion, EraLegacy
	if d.NextID > s.nextID {
		s.nextID = d.NextID
	}
	s.calls[key] = c
	s.order = append(s.order, c)
	s.pending[key] = c
	if len(d.ProgressToken) > 0 {
		c.Token = idKey(d.ProgressToken)
		s.byToken[c.Token] = c
	}
	stream, lastID := "", ""
	for k, v := range d.LastEventIDs {
		stream, lastID = k, v
		st := s.streamLocked(k)
		st.lastID = v
	}
	s.mu.Unlock()
	if h, ok := s.t.(transport.SessionHolder); ok {
		h.SetSessionID(d.SessionID)
	}
	if h, ok := s.t.(transport.VersionHeader); ok && d.ProtocolVersion >= "2025-06-18" {
		h.SetProtocolVersion(d.ProtocolVersion)
	}
	s.armTimers(c, CallOptions{})
	s.localEvent(transport.Meta{Event: transport.EvNote, Stream: stream,
		Detail: fmt.Sprintf("rejoining call %s (%s %s) of session %s from Last-Event-ID %q", key, d.Method, d.Name, d.SessionID, lastID)})
	if stream != "" {
		s.resumeNow(stream, lastID)
	}
	return c, nil
}

// Detached counts calls of this session left running on the server.
func (s *Session) Detached() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.order {
		if c.state == StateDetached {
			n++
		}
	}
	return n
}
