package session

import (
	"context"
	"errors"
	"fmt"

	"mcpscope/protocol"
)

// ErrNotRejoinable: a call asked to be detached cannot be rejoined from
// another process (stdio, no state store, a stream without event ids and
// no task).
var ErrNotRejoinable = errors.New("cannot be rejoined")

// Detachment is where a call left to the server can be picked up again.
type Detachment struct {
	Handle string `json:"handle"` // the StateStore record
	State  string `json:"state"`  // "detached", or the task's status
	TaskID string `json:"taskId,omitempty"`
}

// DetachWhenRejoinable waits only until c can be rejoined from another
// process (an SSE event id on its response stream, or a task it created),
// then leaves it running on the server with its record stored. ended is
// true when c ended before that (nothing to detach: read its result). A
// call that never can be rejoined fails with ErrNotRejoinable, saying why,
// and leaves no record; the caller decides what becomes of the call.
func (s *Session) DetachWhenRejoinable(ctx context.Context, c *Call) (d Detachment, ended bool, err error) {
	notRejoinable := func(why string) error {
		return &Failure{Reason: fmt.Sprintf("call %s (%s) cannot be detached: %s", c.Key, c.Method, why), Kind: ErrNotRejoinable}
	}
	if why := s.WhyNotRejoinable(); why != "" {
		return d, false, notRejoinable(why)
	}
	// A call that asked for a task (2025-11-25) is rejoined by its task id:
	// an event id on its stream may come before the server's CreateTaskResult
	// and must not turn it into a stream detach.
	asksTask := c.x().opts.asTask
	for {
		s.mu.Lock()
		changed := s.changedLocked() // any frame taken in after this look wakes the wait below
		taskID, state := c.x().taskID, c.st()
		// A timeout or cancel is under way: the call is ending, and what
		// comes meanwhile (a server's answer to notifications/cancelled,
		// without an event id) must not be read as a stream without ids.
		givenUp := c.givenUp
		ready := s.persistableLocked(c)
		st := s.streams["post:"+c.Key]
		bare := st != nil && st.bare && st.lastID == ""
		// 2026-07-28 has no stream resumption: only a task can be rejoined,
		// and a call that streams instead of making one will not become one.
		modern := s.info.Era == protocol.EraModern && st != nil && st.heard
		s.mu.Unlock()
		switch {
		case taskID != "":
			// The task's record was written when it was created
			// (persistTaskLocked); the call that created it is over.
			status := "working"
			if t, ok := s.Task(taskID); ok && t.Status != "" {
				status = t.Status
			}
			// The record is written off the session lock, in order:
			// once the writes queued so far are done, it is there.
			select {
			case <-s.storeOps.Done():
			case <-ctx.Done():
				return d, false, ctx.Err()
			}
			if _, err := s.opts.StateStore.Get(protocol.TaskHandle(taskID)); err != nil {
				return d, false, fmt.Errorf("task %s was created but its record is missing: %w", taskID, err)
			}
			return Detachment{Handle: protocol.TaskHandle(taskID), State: status, TaskID: taskID}, false, nil
		case state.Ended():
			return d, true, nil
		case givenUp: // wait for its end
		case ready && !asksTask:
			h, err := s.Detach(c)
			if err != nil {
				if c.Snapshot().State.Ended() {
					continue // it ended meanwhile: see above
				}
				return d, false, err
			}
			return Detachment{Handle: h, State: string(StateDetached)}, false, nil
		case modern:
			return d, false, notRejoinable("the server (" + protocol.ModernVersion + ", which cannot resume streams) answers it on a stream instead of making a task")
		case bare && !asksTask:
			return d, false, notRejoinable("the server's response stream carries no SSE event ids (it keeps no event store) and it made no task")
		}
		select {
		case <-ctx.Done():
			return d, false, ctx.Err()
		case <-c.Done():
		case <-changed:
		}
	}
}

// WhyNotRejoinable says why no call of this session can be rejoined from
// another process, "" when calls can be.
func (s *Session) WhyNotRejoinable() string {
	switch {
	case s.opts.Rejoin.Target == "":
		return "only calls over HTTP can be rejoined (a stdio server ends with the process that started it)"
	case s.opts.StateStore == nil:
		return "this session keeps no call state"
	}
	return ""
}

// changedLocked is a channel closed when the session next takes in a
// frame: unlike the store's change signal, any number of waiters may wait
// on it (each takes it again after it fires).
func (s *Session) changedLocked() <-chan struct{} {
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}
