// Package taskfollow follows a task to its end for a client: tasks/result
// beside tasks/get polls (2025-11-25), or tasks/get alone with what the
// task asks for answered on the way (the 2026 tasks extension); bounded by
// the session's limits and the task's ttl.
package taskfollow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"mcpscope/protocol"
	"mcpscope/session"
)

// Follow waits for a task's outcome: tasks/result (which blocks until
// the task ends) runs while tasks/get polls at the server's pollInterval;
// onStatus gets each new status (notifications/tasks/status updates count
// too, seen at the next poll). It returns what tasks/result returned.
// The follow is bounded (bound): a task that never ends is given up
// with a timeout (its tasks/result cancelled, the task left running on the
// server).
func Follow(ctx context.Context, s *session.Session, id string, onStatus func(protocol.Task)) (json.RawMessage, error) {
	if s.Era() == protocol.EraModern {
		return followExt(ctx, s, id, onStatus) // the tasks extension has no tasks/result
	}
	bound := newBound(s, id)
	res := s.CallWith("tasks/result", map[string]any{"taskId": id}, session.CallOptions{Timeout: -1})
	st := status{bound: bound, on: onStatus}
	report := func() {
		if t, ok := s.Task(id); ok {
			st.saw(t)
		}
	}
	giveUp := func(err error) (json.RawMessage, error) {
		_ = s.Cancel(res, "mcpscope stopped following the task (the task itself is not cancelled)")
		return nil, err
	}
	report()
	for {
		t, _ := s.Task(id)
		now := time.Now()
		if err := bound.check(st.last, now); err != nil {
			return giveUp(err)
		}
		timer := time.NewTimer(bound.wait(protocol.PollEvery(t), now))
		select {
		case <-res.Done():
			timer.Stop()
			if g, err := s.Call("tasks/get", map[string]any{"taskId": id}).Wait(ctx); err == nil && g != nil {
				report()
			}
			out, err := res.Wait(ctx)
			if t, ok := s.Task(id); ok && (t.Status == "failed" || t.Status == "cancelled") {
				// tasks/result of a task that did not complete carries no
				// result worth printing as one (a bare _meta, or an error):
				// say how it ended.
				return out, endedFailure(id, t, err)
			}
			return out, err
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
			if err := bound.check(st.last, time.Now()); err != nil {
				return giveUp(err)
			}
			get := s.Call("tasks/get", map[string]any{"taskId": id})
			err := bound.within(ctx, st.last, func(ctx context.Context) error {
				select {
				case <-get.Done():
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			})
			if err != nil {
				return giveUp(err)
			}
			report()
		}
	}
}

// status passes each new status of a task to on, and every sighting to
// the follow's bound.
type status struct {
	bound *bound
	on    func(protocol.Task)
	last  string // the status last passed on
}

func (st *status) saw(t protocol.Task) {
	st.bound.saw(t, time.Now())
	if t.Status != st.last {
		st.last = t.Status
		if st.on != nil {
			st.on(t)
		}
	}
}

// endedFailure is a task that ended without completing, as it said so.
func endedFailure(id string, t protocol.Task, cause error) *session.Failure {
	return &session.Failure{Reason: strings.TrimSpace(fmt.Sprintf("task %s ended %s %s", id, t.Status, t.StatusMessage)), Cause: cause, Kind: session.ErrTaskEnded}
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

// followExt polls tasks/get at the server's pollIntervalMs until the
// task is terminal and returns its result (completed), or an error (failed,
// cancelled). What an input_required task asks for is answered on the way
// (AnswerTask). The task's rejoin record goes once it is terminal. The
// follow is bounded (bound): a task that never ends is given up with a
// timeout, and goes on on the server.
func followExt(ctx context.Context, s *session.Session, id string, onStatus func(protocol.Task)) (json.RawMessage, error) {
	bound := newBound(s, id)
	st := status{bound: bound, on: onStatus}
	var bare bool // completed without a result once: asked again, once
	for {
		var raw json.RawMessage
		err := bound.within(ctx, st.last, func(ctx context.Context) (err error) {
			raw, err = s.Call("tasks/get", map[string]any{"taskId": id}).Wait(ctx)
			return err
		})
		if err != nil {
			return nil, err
		}
		var t protocol.Task
		var o taskOutcome
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, &session.Failure{Reason: "the server's tasks/get result is unreadable", Cause: err}
		}
		_ = json.Unmarshal(raw, &o)
		st.saw(t)
		if t.Status == "input_required" {
			// Answered once per key; the task keeps its rejoin record, so an
			// unanswerable request can be answered by a later rejoin.
			n, err := s.AnswerTask(ctx, id)
			if err != nil {
				return nil, err
			}
			if n > 0 {
				bound.lastChange = time.Now() // answers sent: the task moves on (a person may have taken a while)
			}
		}
		if t.Status == "completed" && !protocol.HasValue(o.Result) && !bare {
			// The extension inlines a completed task's result in tasks/get;
			// one without is asked about again at once (the server may have
			// been caught between its status and its result), and what that
			// says decides: never how soon a later poll would have come.
			bare = true
			continue
		}
		if t.Terminal() {
			s.ForgetTask(id)
			switch {
			case t.Status == "completed" && !protocol.HasValue(o.Result):
				return nil, &session.Failure{Reason: fmt.Sprintf("invalid result: task %s completed, but tasks/get carried no result (twice)", id), Kind: session.ErrInvalidResult}
			case t.Status == "completed":
				return o.Result, nil
			case t.Status == "failed" && o.Error != nil:
				return nil, &session.Failure{Reason: fmt.Sprintf("task %s failed: %d %s", id, o.Error.Code, o.Error.Message), Kind: session.ErrTaskEnded}
			default:
				return nil, endedFailure(id, t, nil)
			}
		}
		now := time.Now()
		if err := bound.check(t.Status, now); err != nil {
			return nil, err
		}
		timer := time.NewTimer(bound.wait(protocol.PollEvery(t), now))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
		if err := bound.check(t.Status, time.Now()); err != nil {
			return nil, err
		}
	}
}
