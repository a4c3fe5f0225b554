package protocol

import (
	"encoding/json"
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
	// InputRequests are what an input_required task of the 2026 extension
	// asks the client for, answered with tasks/update (tasksext.go).
	InputRequests map[string]InputRequest `json:"inputRequests,omitempty"`
	CallKey       string                  `json:"-"` // the call that created it, when it was ours
}

// Terminal reports whether the task is finished for good.
func (t Task) Terminal() bool {
	return t.Status == "completed" || t.Status == "failed" || t.Status == "cancelled"
}

// PollEvery is how often to ask about a task: its pollInterval (never
// under 100 ms), else every second.
func PollEvery(t Task) time.Duration {
	if t.PollInterval > 0 {
		return max(time.Duration(t.PollInterval)*time.Millisecond, 100*time.Millisecond)
	}
	return time.Second
}

// TaskIDOf is the taskId a tasks/* request's params name, "" if none.
func TaskIDOf(params json.RawMessage) string {
	var p struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(params, &p)
	return p.TaskID
}

// TaskHandle is the state-store handle of a task's record.
func TaskHandle(taskID string) string {
	b := []byte("task-" + taskID)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

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

// ServerHasTasks reports whether a server's capabilities (caps) declare
// tasks: the tasks capability (2025-11-25) or the tasks extension
// (2026-07-28).
func ServerHasTasks(caps json.RawMessage) bool {
	var c struct {
		Tasks      json.RawMessage            `json:"tasks"`
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(caps, &c) != nil {
		return false
	}
	ext, ok := c.Extensions[TasksExtension]
	return HasValue(c.Tasks) || ok && string(ext) != "null"
}

// WithTasksExtension adds the extension to per-request client capabilities
// (an empty object declares support), keeping everything else as it is.
func WithTasksExtension(caps json.RawMessage) json.RawMessage {
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

// HasValue reports whether a member was present and not null.
func HasValue(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// InputRequired is a result that asks for more input (MRTR).
type InputRequired struct {
	InputRequests map[string]InputRequest `json:"inputRequests"`
	RequestState  json.RawMessage         `json:"requestState,omitempty"` // echoed byte for byte
}

// InputRequest is one embedded server request of an MRTR round.
type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}
