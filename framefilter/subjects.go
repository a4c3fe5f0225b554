// Package framefilter describes frames and their calls for the filter
// language (package filter): the one place that says what a frame looks
// like to a filter, for the TUI, record, journal and the exports alike.
package framefilter

import (
	"errors"
	"time"

	"mcpscope/filter"
	"mcpscope/framestore"
	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/transport"
)

// Subjects describes frames one after another. One Subjects is reused
// frame after frame without allocating; it is not safe for concurrent use.
type Subjects struct {
	s    filter.Subject
	data []byte
}

// NewSubjects makes a reusable describer.
func NewSubjects() *Subjects {
	b := &Subjects{}
	b.s.Content = func() []byte { return b.data }
	return b
}

// Fill describes one frame: f itself, env the message it holds (the first
// of a batch; nil when it holds none), c the client call it belongs to (nil
// when none). A running call's duration runs to now. The subject is valid
// until the next Fill.
func (b *Subjects) Fill(f *transport.Frame, env *journal.Envelope, c *session.CallSnapshot, now time.Time) *filter.Subject {
	s := &b.s
	b.data = f.Data
	s.Dir = f.Dir.String()
	s.Size = len(f.Data)
	s.Headers = f.Meta.Headers
	s.Kind, s.Method, s.Tool, s.ID = "", "", "", ""
	s.State, s.IsError, s.Duration = "", false, 0
	switch f.Kind {
	case transport.Stderr:
		s.Kind = "stderr"
	case transport.Garbage:
		s.Kind = "garbage"
	case transport.Event:
		s.Kind, s.Method = "event", f.Meta.Event
	case transport.Message:
		if env == nil {
			s.Kind = "garbage" // JSON, but no JSON-RPC message in it
			break
		}
		s.Method, s.ID = env.Method, env.Key()
		switch env.Class() {
		case journal.ClassRequest:
			s.Kind = "request"
		case journal.ClassNotification:
			switch env.Method {
			case "notifications/progress":
				s.Kind = "progress"
			case "notifications/message":
				s.Kind = "log"
			default:
				s.Kind = "notification"
			}
		case journal.ClassResult, journal.ClassError:
			s.Kind = "response"
			s.IsError = env.Error != nil
		default:
			s.Kind = "garbage"
		}
	}
	if c == nil {
		return s
	}
	if s.Kind == "response" {
		s.Method = c.Method
	}
	s.Tool = c.Name
	s.State = session.StateWord(c)
	s.IsError = s.IsError || c.IsError || c.RPCError != nil || c.Failure != nil && !errors.Is(c.Failure, session.ErrReissued)
	if c.Refused() {
		s.IsError = false // the era probe's refusal is its answer (legacy), not an error
	}
	if !c.Started.IsZero() {
		s.Duration = c.Duration(now)
	}
	return s
}

// FillItem describes a stored item (its message, the first of a batch),
// with c the snapshot of the call it belongs to (nil when none).
func (b *Subjects) FillItem(it *framestore.Item, c *session.CallSnapshot, now time.Time) *filter.Subject {
	env := it.Env
	if env == nil && len(it.Batch) > 0 {
		env = it.Batch[0]
	}
	return b.Fill(&it.Frame, env, c, now)
}
