package session

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// TasksExtension is the identifier of the 2026-07-28 Tasks extension
// (SEP-2663): tools/call may answer resultType "task"; tasks/get (which
// carries the final result or error), tasks/update, tasks/cancel and
// notifications/tasks follow it. There is no tasks/result or tasks/list.
const TasksExtension = "io.modelcontextprotocol/tasks"

// UnmarshalJSON reads a task in either flavour: the 2025-11-25 fields ttl
// and pollInterval, or the extension's ttlMs and pollIntervalMs.
func (t *Task) UnmarshalJSON(b []byte) error {
	type plain Task
	var v struct {
		plain
		TTLMs          *int64 `json:"ttlMs"`
		PollIntervalMs int64  `json:"pollIntervalMs"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*t = Task(v.plain)
	if t.TTL == nil {
		t.TTL = v.TTLMs
	}
	if t.PollInterval == 0 {
		t.PollInterval = v.PollIntervalMs
	}
	return nil
}

// withTasksExtension adds the extension to per-request client capabilities
// (an empty object declares support), keeping everything else as it is.
func withTasksExtension(caps json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(caps, &m) != nil || m == nil {
		m = map[string]json.RawMessage{}
	}
	var ext map[string]json.RawMessage
	if json.Unmarshal(m["extensions"], &ext) != nil || ext == nil {
		ext = map[string]json.RawMessage{}
	}
	if _, ok := ext[TasksExtension]; ok {
		return caps
	}
	ext[TasksExtension] = json.RawMessage("{}")
	m["extensions"], _ = json.Marshal(ext)
	out, err := json.Marshal(m)
	if err != nil {
		return caps
	}
	return out
}

// noteTaskExtLocked reads a CreateTaskResult (resultType "task", the task's
// fields flat in the result) and keeps the task as a rejoin handle.
func (s *Session) noteTaskExtLocked(c *Call, result json.RawMessage) {
	if ResultType(result) != "task" {
		return
	}
	var t Task
	if json.Unmarshal(result, &t) != nil || t.TaskID == "" {
		return
	}
	c.taskID = t.TaskID
	s.noteTaskLocked(t, c.Key)
	s.persistTaskLocked(c)
}

// taskOutcome is what tasks/get says besides the task: the final result
// or error. (Not embedding Task: its UnmarshalJSON would hide these.)
type taskOutcome struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	} `json:"error"`
}

// followTaskExt polls tasks/get at the server's pollIntervalMs until the
// task is terminal and returns its result (completed), or an error (failed,
// cancelled). The task's rejoin record goes once it is terminal.
func (s *Session) followTaskExt(ctx context.Context, id string, onStatus func(Task)) (json.RawMessage, error) {
	last := ""
	for {
		raw, err := s.Call("tasks/get", map[string]any{"taskId": id}).Wait(ctx)
		if err != nil {
			return nil, err
		}
		var t Task
		var o taskOutcome
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, &Failure{Reason: "the server's tasks/get result is unreadable", Cause: err}
		}
		_ = json.Unmarshal(raw, &o)
		if t.Status != last {
			last = t.Status
			if onStatus != nil {
				onStatus(t)
			}
		}
		if t.Terminal() {
			s.mu.Lock()
			s.forgetTaskLocked(id)
			s.mu.Unlock()
			switch {
			case t.Status == "completed":
				return o.Result, nil
			case t.Status == "failed" && o.Error != nil:
				return nil, &Failure{Reason: fmt.Sprintf("task %s failed: %d %s", id, o.Error.Code, o.Error.Message)}
			default:
				return nil, &Failure{Reason: fmt.Sprintf("task %s ended %s %s", id, t.Status, t.StatusMessage)}
			}
		}
		interval := time.Second
		if t.PollInterval > 0 {
			interval = max(time.Duration(t.PollInterval)*time.Millisecond, 100*time.Millisecond)
		}
		timer := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
}
