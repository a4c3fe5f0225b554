package session

import (
	"context"
	"encoding/json"
	"sort"
	"time"
)

// Task is a task as the server last described it (2025-11-25 experimental
// tasks; the 2026 tasks extension shares these fields).
type Task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt,omitempty"`
	LastUpdatedAt string `json:"lastUpdatedAt,omitempty"`
	TTL           *int64 `json:"ttl,omitempty"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
	CallKey       string `json:"-"` // the call that created it, when it was ours
}

// Terminal reports whether the task is finished for good.
func (t Task) Terminal() bool {
	return t.Status == "completed" || t.Status == "failed" || t.Status == "cancelled"
}

// noteTaskLocked merges what a message says about a task.
func (s *Session) noteTaskLocked(t Task, callKey string) {
	if t.TaskID == "" {
		return
	}
	cur := s.tasks[t.TaskID]
	if cur == nil {
		cur = &Task{TaskID: t.TaskID}
		s.tasks[t.TaskID] = cur
	}
	keep := cur.CallKey
	*cur = t
	if callKey != "" {
		cur.CallKey = callKey
	} else {
		cur.CallKey = keep
	}
}

// noteTaskResultLocked reads tasks out of results of the tasks methods.
func (s *Session) noteTaskResultLocked(c *Call, result json.RawMessage) {
	switch c.Method {
	case "tools/call":
		var r struct {
			Task Task `json:"task"`
		}
		if json.Unmarshal(result, &r) == nil && r.Task.TaskID != "" {
			c.taskID = r.Task.TaskID
			s.noteTaskLocked(r.Task, c.Key)
		}
	case "tasks/get", "tasks/cancel":
		var t Task
		if json.Unmarshal(result, &t) == nil {
			s.noteTaskLocked(t, "")
		}
	case "tasks/list":
		var r struct {
			Tasks []Task `json:"tasks"`
		}
		if json.Unmarshal(result, &r) == nil {
			for _, t := range r.Tasks {
				s.noteTaskLocked(t, "")
			}
		}
	}
}

// Tasks returns every task seen in this session, oldest first.
func (s *Session) Tasks() []Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Task, 0, len(s.tasks))
	for _, t := range s.tasks {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt < out[j].CreatedAt })
	return out
}

// Task returns one task's latest state.
func (s *Session) Task(id string) (Task, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[id]
	if !ok {
		return Task{}, false
	}
	return *t, true
}

// CallAsTask sends a request with params.task, asking the server to run it
// as a task (tools whose execution.taskSupport allows it). ttl 0 = the
// server's default.
func (s *Session) CallAsTask(method string, params map[string]any, ttl time.Duration) *Call {
	p := map[string]any{}
	for k, v := range params {
		p[k] = v
	}
	task := map[string]any{}
	if ttl > 0 {
		task["ttl"] = ttl.Milliseconds()
	}
	p["task"] = task
	return s.Call(method, p)
}

// FollowTask waits for a task's outcome: tasks/result (which blocks until
// the task ends) runs while tasks/get polls at the server's pollInterval;
// onStatus gets each new status (notifications/tasks/status updates count
// too, seen at the next poll). It returns what tasks/result returned.
func (s *Session) FollowTask(ctx context.Context, id string, onStatus func(Task)) (json.RawMessage, error) {
	res := s.CallWith("tasks/result", map[string]any{"taskId": id}, CallOptions{Timeout: -1})
	last := ""
	report := func() {
		if t, ok := s.Task(id); ok && t.Status != last {
			last = t.Status
			if onStatus != nil {
				onStatus(t)
			}
		}
	}
	report()
	for {
		interval := time.Second
		if t, ok := s.Task(id); ok && t.PollInterval > 0 {
			interval = max(time.Duration(t.PollInterval)*time.Millisecond, 100*time.Millisecond)
		}
		timer := time.NewTimer(interval)
		select {
		case <-res.Done():
			timer.Stop()
			if g, err := s.Call("tasks/get", map[string]any{"taskId": id}).Wait(ctx); err == nil && g != nil {
				report()
			}
			return res.Wait(ctx)
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
			get := s.Call("tasks/get", map[string]any{"taskId": id})
			select {
			case <-get.Done():
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			report()
		}
	}
}
