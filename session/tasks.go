package session

import (
	"encoding/json"
	"sort"
	"time"

	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/statestore"
	"mcpscope/transport"
)

// noteTaskLocked merges what a message says about a task.
func (s *Session) noteTaskLocked(t protocol.Task, callKey string) {
	if t.TaskID == "" {
		return
	}
	cur := s.tasks[t.TaskID]
	if cur == nil {
		cur = &protocol.Task{TaskID: t.TaskID}
		s.tasks[t.TaskID] = cur
	}
	keep := cur.CallKey
	*cur = t
	if callKey != "" {
		cur.CallKey = callKey
	} else {
		cur.CallKey = keep
	}
	if s.answerTasks && t.Status == "input_required" {
		for k := range t.InputRequests {
			if !s.taskKeys[t.TaskID][k] { // polls repeat what was claimed already
				go s.autoAnswerTask(t.TaskID)
				break
			}
		}
	}
}

// noteTaskResultLocked reads tasks out of results of the tasks methods.
func (s *Session) noteTaskResultLocked(c *Call, e *journal.Envelope) {
	result := e.Result
	switch c.Method {
	case "tools/call":
		if !e.Hints().HasTask {
			return // the common case: no task to read, no second pass
		}
		var r struct {
			Task protocol.Task `json:"task"`
		}
		if json.Unmarshal(result, &r) == nil && r.Task.TaskID != "" {
			c.xw().taskID = r.Task.TaskID
			s.noteTaskLocked(r.Task, c.Key)
			s.persistTaskLocked(c)
		}
	case "tasks/result":
		s.forgetTaskLocked(protocol.TaskIDOf(c.params()))
	case "tasks/get", "tasks/cancel":
		var t protocol.Task
		if json.Unmarshal(result, &t) == nil {
			s.noteTaskLocked(t, "")
		}
		if c.Method == "tasks/cancel" {
			s.forgetTaskLocked(protocol.TaskIDOf(c.params()))
		}
	case "tasks/list":
		var r struct {
			Tasks []protocol.Task `json:"tasks"`
		}
		if json.Unmarshal(result, &r) == nil {
			for _, t := range r.Tasks {
				s.noteTaskLocked(t, "")
			}
		}
	}
}

// Tasks returns every task seen in this session, oldest first.
func (s *Session) Tasks() []protocol.Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]protocol.Task, 0, len(s.tasks))
	for _, t := range s.tasks {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt < out[j].CreatedAt })
	return out
}

// Task returns one task's latest state.
func (s *Session) Task(id string) (protocol.Task, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[id]
	if !ok {
		return protocol.Task{}, false
	}
	return *t, true
}

// CallAsTask sends a request with params.task, asking the server to run it
// as a task (tools whose execution.taskSupport allows it). ttl 0 = the
// server's default. In the 2026 era there is no such parameter: the tasks
// extension is declared on every request and the server decides, so this is
// a plain call.
func (s *Session) CallAsTask(method string, params map[string]any, ttl time.Duration) *Call {
	if s.Era() == protocol.EraModern {
		return s.Call(method, params)
	}
	p := map[string]any{}
	for k, v := range params {
		p[k] = v
	}
	task := map[string]any{}
	if ttl > 0 {
		task["ttl"] = ttl.Milliseconds()
	}
	p["task"] = task
	return s.CallWith(method, p, CallOptions{asTask: true})
}

// persistTaskLocked keeps a task created over HTTP as a rejoin handle: a new
// mcpscope can fetch its status and result after this one is gone. It writes
// synchronously (tasks are created rarely) so the record and its removal
// can never cross.
func (s *Session) persistTaskLocked(c *Call) {
	if s.opts.StateStore == nil || s.opts.Rejoin.Target == "" || s.offline {
		return
	}
	d := s.recordLocked(c)
	d.Handle, d.LastEventIDs, d.Owner = protocol.TaskHandle(c.x().taskID), nil, nil
	s.storeOps.Add(&s.persisting, func() { // a network call with Redis: never under s.mu
		s.storeHealth() // the first record may be a task's
		_ = s.putRecord(d, true)
	})
}

// forgetTaskLocked drops a task's record once its result was fetched or it
// was cancelled.
func (s *Session) forgetTaskLocked(taskID string) {
	if taskID == "" || s.opts.StateStore == nil || s.offline {
		return
	}
	h := protocol.TaskHandle(taskID)
	claim := s.taskClaims[taskID]
	delete(s.taskClaims, taskID)
	s.storeOps.Add(&s.persisting, func() { // after the task's Put, off the lock
		if claim != nil {
			// Rejoined under a lease: fenced, so a holder that lost the
			// task deletes nothing of its new holder's.
			_ = claim.Write(func(l statestore.Lease) error { return s.opts.StateStore.DeleteFenced(h, l) })
			return
		}
		_ = s.opts.StateStore.Delete(h)
	})
}

// RejoinTask prepares this new session to follow a task another mcpscope
// started: same session id (2025 era) or stateless requests (2026 era).
// Follow it with taskfollow.Follow.
func (s *Session) RejoinTask(d statestore.Detached) {
	s.mu.Lock()
	s.rejoined = true
	if h := statestore.TakeClaim(protocol.TaskHandle(d.TaskID)); h != nil { // the lease ClaimCall took
		if s.taskClaims == nil {
			s.taskClaims = map[string]*statestore.Held{}
		}
		s.taskClaims[d.TaskID] = h
	}
	s.info.ProtocolVersion = d.ProtocolVersion
	if d.NextID > s.nextID {
		s.nextID = d.NextID
	}
	s.mu.Unlock()
	if d.Era == protocol.EraModern {
		s.Adopt(EraVerdict{Era: protocol.EraModern, Reason: "rejoining a task of a " + protocol.ModernVersion + " server"})
	} else {
		s.Adopt(EraVerdict{Era: protocol.EraLegacy, Reason: "rejoining a task in session " + d.SessionID})
		if h, ok := s.t.(transport.SessionHolder); ok {
			h.SetSessionID(d.SessionID)
		}
		s.shareSession(d.SessionID)
		if h, ok := s.t.(transport.VersionHeader); ok && d.ProtocolVersion >= "2025-06-18" {
			h.SetProtocolVersion(d.ProtocolVersion)
		}
	}
	s.mu.Lock()
	s.noteTaskLocked(protocol.Task{TaskID: d.TaskID, Status: "working"}, "")
	s.mu.Unlock()
}

// TaskLimits are what following task id is bounded by: the session's idle
// and hard limits, and when the call that created the task here reaches
// its own hard limit (zero: not made here, or no such limit).
func (s *Session) TaskLimits(id string) (idle, hard time.Duration, hardAt time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.tasks[id]; t != nil {
		if c := s.calls.get(t.CallKey); c != nil {
			hardAt = c.x().hardAt
		}
	}
	return s.opts.Timeout, s.opts.MaxTimeout, hardAt
}

// ForgetTask drops task id's rejoin record: its result was fetched, or it
// ended without one.
func (s *Session) ForgetTask(id string) {
	s.mu.Lock()
	s.forgetTaskLocked(id)
	s.mu.Unlock()
}
