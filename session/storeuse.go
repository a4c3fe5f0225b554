package session

import (
	"errors"
	"fmt"

	"mcpscope/journal"
	"mcpscope/statestore"
)

// The session's side of its state store: records written with a word to
// the user when they went to a fallback, and the rule for rejoining.

// putRecord writes d, and says so in the session when the record went to
// a fallback store; tell (a record left to be rejoined: a detach, a task)
// also tells a person at once (Options.Warn), once per session.
func (s *Session) putRecord(d statestore.Detached, tell bool) error {
	statestore.SealRecord(&d)
	return s.putResult(d, s.opts.StateStore.Put(d), tell)
}

// putResult is what putRecord does with a write's outcome err (a fenced
// write's too).
func (s *Session) putResult(d statestore.Detached, err error, tell bool) error {
	var se *statestore.StoredElsewhere
	if errors.As(err, &se) {
		msg := fmt.Sprintf("the record of call %s could not be written to the state store (%v); it is kept in %s: once the store answers, rejoin it on this machine with %s",
			d.Handle, se.Cause, se.Where, statestore.RejoinCommandIn(s.opts.StateStore, d.Handle))
		s.Note(msg)
		s.mu.Lock()
		s.info.StoreTrouble = msg
		if s.elsewhere == nil {
			s.elsewhere = map[string]string{}
		}
		told := s.toldElsewhere
		s.toldElsewhere = s.toldElsewhere || tell
		s.elsewhere[d.Handle] = se.Where
		s.mu.Unlock()
		if w := s.opts.Warn; w != nil && tell && !told {
			w(msg) // a person is told at once, once per session (the journal has every one)
		}
		return nil
	}
	if err == nil {
		s.mu.Lock()
		delete(s.elsewhere, d.Handle) // the store took it back
		s.info.StoreTrouble = ""
		s.mu.Unlock()
	} else {
		s.storeTrouble(fmt.Sprintf("the record of call %s could not be written to the state store: %v", d.Handle, err))
	}
	return err
}

// KeptElsewhere is where handle's record went when the state store could
// not take it (Redis unreachable: the local file store), "" when it is in
// the store.
func (s *Session) KeptElsewhere(handle string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.elsewhere[handle]
}

// RejoinCommandHere is the command line that rejoins handle from this
// session's records. A record kept in the store's local fallback is
// rejoined with the same --state (the store reads its fallback), on this
// machine once the store answers again.
func (s *Session) RejoinCommandHere(handle string) string {
	return statestore.RejoinCommandIn(s.opts.StateStore, handle)
}

// StateStore is where this session keeps its records (nil: none).
func (s *Session) StateStore() statestore.Store { return s.opts.StateStore }

// CanRejoin is the one rule for rejoining d (a record of store) in this session (the TUI's r,
// mcpscope rejoin): not while another holder's lease on the call is live
// (the reason names it), not a call this process still runs, and only in a
// connected session of the same server and era whose ids do not collide.
// A call of another MCP session on the same server (one a killed mcpscope
// left) is rejoined in its own session, beside this one.
func (s *Session) CanRejoin(store statestore.Store, d statestore.Detached) (bool, string) {
	if store != nil {
		if st := statestore.CallState(store, d); st.State == "held" {
			if st.Holder.Owner == statestore.Me() {
				return false, "still attached in this process"
			}
			return false, fmt.Sprintf("held by the mcpscope with %s until %s (its lease)", st.Holder.Owner,
				st.Holder.Expires.Local().Format("15:04:05"))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.t == nil || s.offline || s.info.Closed {
		return false, "this session is not connected"
	}
	if s.opts.Rejoin.Target == "" || d.Target != s.opts.Rejoin.Target {
		return false, "made against another server than this session's"
	}
	if d.Era != "" && s.info.Era != "" && d.Era != s.info.Era {
		return false, "made in the " + d.Era + " era; this session is " + s.info.Era
	}
	for c := range s.order.all() {
		if !c.st().Ended() && journal.IDKey(c.ID) == journal.IDKey(d.RequestID) {
			return false, "its request id is in use by running call " + c.Key
		}
	}
	return true, ""
}
