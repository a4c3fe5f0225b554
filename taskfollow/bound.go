package taskfollow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"mcpscope/protocol"
	"mcpscope/session"
)

// ErrExpired: a followed task outlived the ttl its server gave it, after
// which the server may have deleted it. It is a timeout (ErrTimeout).
var ErrExpired = fmt.Errorf("task ttl: %w", session.ErrTimeout)

// bound bounds following a task as a call is bounded (a task answers
// every poll at once, so no call's own limit ever fires):
//   - the hard limit (session.Options.MaxTimeout) counts from the start of the call
//     that created the task, when this session made it, else from when
//     following began (a rejoin is a command of its own);
//   - the idle limit (session.Options.Timeout) counts from the last change of the
//     task's status (working, input_required, …); a status message that
//     changes on every poll is not progress and resets nothing, so a task
//     whose server only rewrites its message still ends at the idle limit;
//   - the task's ttl counts from its createdAt (clamped to now, against a
//     server clock ahead of ours): past it the task may be gone.
//
// Timers run on the real clock, as the calls' do.
type bound struct {
	id         string
	hardAt     time.Time // zero: no hard limit
	hard       time.Duration
	idle       time.Duration // 0: no idle limit
	lastChange time.Time
	ttlAt      time.Time // zero: no ttl known
	seen       string    // the status at the last change
}

func newBound(s *session.Session, id string) *bound {
	now := time.Now()
	b := &bound{id: id, lastChange: now}
	idle, hard, hardAt := s.TaskLimits(id)
	b.hardAt = hardAt
	if idle > 0 {
		b.idle = idle
	}
	switch {
	case hard > 0 && b.hardAt.IsZero():
		b.hard, b.hardAt = hard, now.Add(hard)
	case hard > 0:
		b.hard = hard
	case !b.hardAt.IsZero():
		b.hard = b.hardAt.Sub(now).Round(time.Second) // the call's own limit, from here
	}
	return b
}

// saw notes what a poll (or a notification) said about the task: a new
// status restarts the idle limit (its message does not); a ttl sets the
// expiry.
func (b *bound) saw(t protocol.Task, now time.Time) {
	if t.Status != b.seen {
		b.seen, b.lastChange = t.Status, now
	}
	if t.TTL != nil && *t.TTL > 0 {
		from := now
		if c, err := time.Parse(time.RFC3339Nano, t.CreatedAt); err == nil && c.Before(now) {
			from = c
		}
		if b.ttlAt.IsZero() || from.Add(time.Duration(*t.TTL)*time.Millisecond).Before(b.ttlAt) {
			b.ttlAt = from.Add(time.Duration(*t.TTL) * time.Millisecond)
		}
	}
}

// deadline is when the next bound fires.
func (b *bound) deadline() time.Time {
	var at time.Time
	for _, d := range []time.Time{b.hardAt, b.ttlAt, b.idleAt()} {
		if !d.IsZero() && (at.IsZero() || d.Before(at)) {
			at = d
		}
	}
	return at
}

func (b *bound) idleAt() time.Time {
	if b.idle == 0 {
		return time.Time{}
	}
	return b.lastChange.Add(b.idle)
}

// wait is how long to sleep before the next poll: the server's interval,
// but never past a bound.
func (b *bound) wait(poll time.Duration, now time.Time) time.Duration {
	if at := b.deadline(); !at.IsZero() {
		return max(min(poll, at.Sub(now)), 0)
	}
	return poll
}

// check is the error of the bound that has passed, nil while none has.
// status is what the task was last seen as.
func (b *bound) check(status string, now time.Time) error {
	if status == "" {
		status = "running"
	}
	still := fmt.Sprintf("; it is still %s on the server", status)
	if (protocol.Task{Status: status}).Terminal() {
		still = fmt.Sprintf("; it is %s, but its result never came", status)
	}
	switch {
	case !b.ttlAt.IsZero() && !now.Before(b.ttlAt):
		return &session.Failure{Reason: fmt.Sprintf("task %s outlived the ttl its server gave it (the server may have deleted it)", b.id), Kind: ErrExpired}
	case !b.hardAt.IsZero() && !now.Before(b.hardAt):
		return &session.Failure{Reason: fmt.Sprintf("timed out: task %s still not done %s after its call began (hard limit)%s", b.id, b.hard, still), Kind: session.ErrMaxTimeout}
	case b.idle > 0 && !now.Before(b.idleAt()):
		return &session.Failure{Reason: fmt.Sprintf("timed out: task %s: no change of status for %s (idle limit; only a new status resets it)%s", b.id, b.idle, still), Kind: session.ErrIdleTimeout}
	}
	return nil
}

// within runs wait (a poll) under the bound: when the bound's deadline
// passes first, it is that bound's error, not the context's.
func (b *bound) within(ctx context.Context, status string, wait func(context.Context) error) error {
	at := b.deadline()
	if at.IsZero() {
		return wait(ctx)
	}
	bctx, cancel := context.WithDeadline(ctx, at)
	defer cancel()
	err := wait(bctx)
	if err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		if berr := b.check(status, time.Now()); berr != nil {
			return berr
		}
	}
	return err
}
