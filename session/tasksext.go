package session

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"mcpscope/protocol"
	"mcpscope/transport"
)

// WhyNotDetachable says why no call of this session could be detached,
// known before one is sent: WhyNotRejoinable's reasons, and a 2026-07-28
// server (which cannot resume a stream) that declares no tasks extension.
// "" when a call may be: whether it is depends on what the server answers
// (an SSE event id, or a task).
func (s *Session) WhyNotDetachable() string {
	if why := s.WhyNotRejoinable(); why != "" {
		return why
	}
	if s.Era() == protocol.EraModern && !protocol.ServerHasTasks(s.Info().Capabilities) {
		return "the server speaks " + protocol.ModernVersion + ", which cannot resume a call's stream, and declares no tasks extension (" +
			protocol.TasksExtension + "): it could only answer on the stream, which nothing could rejoin"
	}
	return ""
}

// noteTaskExtLocked reads a CreateTaskResult (resultType "task", the task's
// fields flat in the result) and keeps the task as a rejoin handle.
func (s *Session) noteTaskExtLocked(c *Call, result json.RawMessage) {
	var t protocol.Task
	if json.Unmarshal(result, &t) != nil || t.TaskID == "" {
		return
	}
	c.xw().taskID = t.TaskID
	s.noteTaskLocked(t, c.Key)
	s.persistTaskLocked(c)
}

// AutoAnswerTasks makes the session answer input_required tasks as soon as
// it sees them (tasks/get results, notifications/tasks), through the
// Responder. The inspector turns it on: its Responder asks the person.
func (s *Session) AutoAnswerTasks(on bool) {
	s.mu.Lock()
	s.answerTasks = on
	s.mu.Unlock()
}

func (s *Session) autoAnswerTask(id string) {
	if _, err := s.AnswerTask(s.ctx, id); err != nil && s.ctx.Err() == nil {
		s.localEvent(transport.Meta{Event: transport.EvNote, Detail: err.Error()})
	}
}

// AnswerTask answers what an input_required task asks for (its
// inputRequests, each through the Responder as if the server had sent it)
// and sends the answers with one tasks/update. A key is claimed before it is
// answered, so it is answered once over the task's life however many polls
// and notifications show it again (keys are unique per task, and the
// server's ack is only eventually consistent). It returns how many answers
// went out; a key nobody could answer is released and named in the error,
// after the others were sent.
func (s *Session) AnswerTask(ctx context.Context, id string) (int, error) {
	s.mu.Lock()
	t := s.tasks[id]
	if t == nil || t.Status != "input_required" {
		s.mu.Unlock()
		return 0, nil
	}
	claimed := s.taskKeys[id]
	if claimed == nil {
		claimed = map[string]bool{}
		s.taskKeys[id] = claimed
	}
	var todo []string
	for k := range t.InputRequests {
		if !claimed[k] {
			claimed[k] = true
			todo = append(todo, k)
		}
	}
	sort.Strings(todo)
	reqs, callKey := t.InputRequests, t.CallKey
	s.mu.Unlock()

	// A key nobody answered is released for a later try (a rejoin with
	// --answer), except when answering is automatic: then the next poll
	// would ask the same again and again.
	release := func(keys ...string) {
		s.mu.Lock()
		if !s.answerTasks {
			for _, k := range keys {
				delete(claimed, k)
			}
		}
		s.mu.Unlock()
	}
	responses, un := s.answerInputs(ctx, todo, reqs, ServerRequest{Related: callKey, TaskID: id})
	var failed error
	if un != nil {
		release(todo[len(responses):]...)
		failed = &Failure{Reason: "task " + id + " asks for input", Cause: un}
	}
	if len(responses) == 0 {
		return 0, failed
	}
	if _, err := s.Call("tasks/update", map[string]any{"taskId": id, "inputResponses": responses}).Wait(ctx); err != nil {
		keys := make([]string, 0, len(responses))
		for k := range responses {
			keys = append(keys, k)
		}
		release(keys...)
		return 0, fmt.Errorf("tasks/update for task %s: %w", id, err)
	}
	return len(responses), failed
}
