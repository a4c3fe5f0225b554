package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mcpscope/framestore"
	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/statestore"
	"mcpscope/transport"
)

// RejoinInfo is what the session cannot know by itself but a rejoin needs:
// how to reach the server again. Secrets are named, never stored.
type RejoinInfo struct {
	Target     string            // the endpoint URL
	Headers    map[string]string // non-secret extra headers
	SecretRefs map[string]string // header → "env:NAME" (Authorization → "env:MCPSCOPE_BEARER")
}

// persistEvery bounds state-file writes under a progress flood.
const persistEvery = 250 * time.Millisecond

// persistable reports whether c can be rejoined from another process: an
// HTTP call of the 2025 era whose stream carries event ids, or a task.
func (s *Session) persistableLocked(c *Call) bool {
	if c.x().endedAway != "" { // another process finished it: its record is gone for good
		return false
	}
	if s.opts.StateStore == nil || s.opts.Rejoin.Target == "" || c.st().Ended() || c.Method == "initialize" ||
		s.info.Era == protocol.EraModern || // 2026-07-28 streams cannot be resumed (tasks are rejoined instead)
		strings.HasPrefix(c.Method, "tasks/") { // a task's own record covers its tasks/* calls
		return false
	}
	st := s.streams["post:"+c.Key]
	return st != nil && st.lastID != ""
}

// handleFor names c's record: when it started, this process (a random tag
// and the pid: two machines, or two containers that all run as pid 1,
// never make the same handle), the session within the process when it is
// not the first (two sessions number their calls alike) and the call's
// id. File- and shell-safe. Handles are opaque to every reader, so older
// ones (no tag) still work.
func handleFor(c *Call, session int64) string {
	proc := strconv.Itoa(os.Getpid())
	if session > 1 {
		proc += "." + strconv.FormatInt(session, 10)
	}
	return fmt.Sprintf("%s-%s-%s-%s", wallTime(c.started).UTC().Format("20060102T150405"), procTag(), proc, strings.Trim(c.Key, `"`))
}

// sessions numbers the sessions of this process, for their handles.
var sessions atomic.Int64

// procTag is this process's part of its handles: 6 random hex digits,
// drawn when the first handle is made: the first crypto/rand read of a
// process seeds its generator, which every command paid for in init.
var procTag = sync.OnceValue(newProcTag)

func newProcTag() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// recordLocked is the call's state for the StateStore: owned by this
// process (which holds the call's lease while it runs).
func (s *Session) recordLocked(c *Call) statestore.Detached {
	me := statestore.Me()
	d := statestore.Detached{
		Handle: c.x().handle, Target: s.opts.Rejoin.Target, Transport: "http", Headers: s.opts.Rejoin.Headers,
		SecretRefs: s.opts.Rejoin.SecretRefs, ProtocolVersion: s.info.ProtocolVersion, Era: s.info.Era,
		RequestID: c.ID, Method: c.Method, Name: c.Name, Params: s.paramsLocked(c), TaskID: c.x().taskID,
		Progress: c.progressLocked(), Started: wallTime(c.started), Journal: s.info.JournalPath, Owner: &me, NextID: s.nextID,
	}
	if c.Token != "" {
		d.ProgressToken = json.RawMessage(c.Token)
	}
	if h, ok := s.t.(transport.SessionHolder); ok {
		d.SessionID = h.SessionID()
	}
	if c.x().sessionID != "" { // rejoined from another process's session: still its
		d.SessionID = c.x().sessionID
	}
	if st := s.streams["post:"+c.Key]; st != nil && st.lastID != "" {
		d.LastEventIDs = map[string]string{"post:" + c.Key: st.lastID}
	}
	return d
}

// persistLocked schedules a (debounced) write of c's state, so a kill -9
// leaves a record another mcpscope can rejoin.
func (s *Session) persistLocked(c *Call) {
	if !s.persistableLocked(c) || c.x().persistTimer != nil {
		return
	}
	if c.x().handle == "" {
		c.xw().handle = handleFor(c, s.num)
	}
	s.persisting.Add(1) // Done by the write, or by the Stop that cancels it
	c.xw().persistTimer = time.AfterFunc(persistDelay(c), func() {
		defer s.persisting.Done()
		// persistMu orders this write with forgetLocked's delete: a record
		// must never be written after the call that owns it ended.
		c.xw().persistMu.Lock()
		defer c.xw().persistMu.Unlock()
		s.mu.Lock()
		c.xw().persistTimer = nil
		ended := c.st().Ended()
		s.mu.Unlock()
		if ended {
			return
		}
		if c.x().claim == nil && !c.claiming {
			// The call's lease first, then its record: a record never
			// names an owner that holds no lease, and every write after
			// the claim is fenced by it.
			c.claiming = true
			if h, err := statestore.Hold(s.opts.StateStore, statestore.CallLease(c.x().handle), false); err == nil {
				c.xw().claim = h
				s.watchClaim(c, h)
			} else {
				s.storeTrouble(fmt.Sprintf("could not take the lease on call %s in the state store (%s): %v; its record is written without one",
					c.Key, s.opts.StateStore, err))
			}
		}
		s.mu.Lock()
		if c.st().Ended() {
			s.mu.Unlock()
			return
		}
		d := s.recordLocked(c)
		create := !c.persisted
		c.persisted = true
		s.mu.Unlock()
		s.storeHealth()
		if claim := c.x().claim; claim != nil {
			statestore.SealRecord(&d)
			err := claim.Write(func(l statestore.Lease) error { return s.opts.StateStore.PutFenced(d, l, create) })
			var lost *statestore.LeaseLostError
			if errors.As(err, &lost) {
				go s.leaseLost(c, lost)
				return
			}
			_ = s.putResult(d, err, false)
			return
		}
		_ = s.putRecord(d, false)
	})
}

// watchClaim ends c here once its lease is lost (renewal refused, or not
// possible for the whole TTL): another process may act on it now. While
// the store cannot be reached, the person is told that c's steps wait.
func (s *Session) watchClaim(c *Call, h *statestore.Held) {
	h.OnTrouble(func(err error) {
		// Not inline: a step's mark may be what meets the trouble, with
		// ingestMu held, and the note is ingested too (a deadlock).
		go s.storeTrouble(fmt.Sprintf("the state store (%s) cannot be reached (%v): call %s shows no step until it answers again, and is given up here if it does not within its lease (%s)",
			s.opts.StateStore, err, c.Key, h.Lease().TTL))
	})
	go func() {
		select {
		case <-h.Lost():
			var lost *statestore.LeaseLostError
			if errors.As(h.LostErr(), &lost) {
				s.leaseLost(c, lost)
			}
		case <-h.Released():
		}
	}()
}

// leaseLost stops acting on c: its lease went to another process (or the
// store lost it), so no step, result, record write or delete comes from
// here any more. The call goes on on the server; its stream here is
// closed without a cancel, and the person is told (stderr, the call's
// row, the journal).
func (s *Session) leaseLost(c *Call, lost *statestore.LeaseLostError) {
	msg := fmt.Sprintf("call %s: %s", c.Key, lost.Error())
	if ex, ok := s.opts.StateStore.(statestore.LossExplainer); ok && errors.Is(lost, statestore.ErrStoreLost) {
		if why := ex.ExplainLoss(); why != "" {
			msg += " (" + why + ")"
		}
	}
	s.mu.Lock()
	ok := s.endLocked(c, StateDetached, nil, nil, &Failure{Reason: msg, Cause: lost, Kind: statestore.ErrLeaseLost}, s.opts.Now())
	s.mu.Unlock()
	if !ok {
		return
	}
	s.store.Notify()
	if h, ok := s.t.(transport.StreamCloser); ok {
		h.CloseStream(c.Key)
	}
	s.Note(msg)
	if w := s.opts.Warn; w != nil {
		w(msg)
	}
}

// storeHealth tells the person, once per session and before the first
// record goes to the store, how that store may lose it.
func (s *Session) storeHealth() {
	h, ok := s.opts.StateStore.(statestore.HealthReporter)
	if !ok {
		return
	}
	s.healthOnce.Do(func() {
		for _, w := range h.Health() {
			s.Note(w)
			if s.opts.Warn != nil {
				s.opts.Warn(w)
			}
		}
	})
}

// storeTrouble tells the person that the state store failed them, once
// per session (the journal gets every one).
func (s *Session) storeTrouble(msg string) {
	s.Note(msg)
	s.mu.Lock()
	s.info.StoreTrouble = msg
	told := s.toldTrouble
	s.toldTrouble = true
	s.mu.Unlock()
	if w := s.opts.Warn; w != nil && !told {
		w(msg)
	}
}

// persistDelay writes the first record at once (the stream may break any
// moment) and later ones at most every persistEvery.
func persistDelay(c *Call) time.Duration {
	if !c.persisted {
		return 0
	}
	return persistEvery
}

// stepCall is the call whose progress step f may be, when that call is
// kept in the state store (a step to mark: ingestItem), with its persistMu
// held (the caller unlocks once the step counts): a record write or a
// detach comes before the mark or after the step, never between. nil: not
// a step to mark.
func (s *Session) stepCall(f *transport.Frame, env *journal.Envelope) *Call {
	if f.Dir != transport.In || env == nil || s.opts.StateStore == nil || s.opts.Rejoin.Target == "" || s.offline {
		return nil
	}
	var c *Call
	switch {
	case env.Method == "notifications/progress" && f.Meta.EventID != "" && !env.Hints().ProgressBad:
		s.mu.Lock()
		c = s.byToken[journal.IDKey(env.Hints().Token)]
		s.mu.Unlock()
	case env.Method == "" && len(env.ID) > 0 && (env.Result != nil || env.Error != nil):
		// The answer of a call held under a claim: its record goes,
		// fenced, before the result counts (resultDeleteLocked).
		s.mu.Lock()
		c = s.calls.get(env.Key())
		s.mu.Unlock()
		if c != nil && c.x().handle == "" {
			c = nil
		}
	}
	if c != nil {
		c.xw().persistMu.Lock()
	}
	return c
}

// resultDeleteLocked is the handle of c's record when env is the answer
// that ends c, a call held under a claim: the record is deleted, fenced,
// before the answer counts, so a holder that lost the call never shows
// its result ("": not such an answer).
func (s *Session) resultDeleteLocked(c *Call, env *journal.Envelope) string {
	if env == nil || env.Method != "" || len(env.ID) == 0 || c.x().claim == nil || c.x().handle == "" ||
		c.st().Ended() || c.givenUp || s.calls.get(env.Key()) != c {
		return ""
	}
	return c.x().handle
}

// finishFenced deletes c's record under its claim (c's persistMu held):
// lost, the answer is not applied here.
func (s *Session) finishFenced(c *Call, handle string) *statestore.LeaseLostError {
	err := c.x().claim.Write(func(l statestore.Lease) error { return s.opts.StateStore.DeleteFenced(handle, l) })
	var lost *statestore.LeaseLostError
	if errors.As(err, &lost) {
		return lost
	}
	if err == nil {
		c.xw().recordGone = true
	}
	return nil
}

// stepMarkLocked is the mark of c's progress step it in the state store
// and the record it goes to ("": none to write; the call ended, is not
// stored yet, or the step is a duplicate or on another stream).
func (s *Session) stepMarkLocked(c *Call, it *framestore.Item) (handle string, m statestore.Mark) {
	f, env := &it.Frame, it.Env
	if env == nil || env.Method != "notifications/progress" {
		return "", m
	}
	stream := f.Meta.LogicalStream()
	if st := s.streams[stream]; st != nil {
		if _, dup := st.seen[f.Meta.EventID]; dup {
			return "", m
		}
	}
	if c.st().Ended() || !c.persisted || c.x().handle == "" || c.markOff || stream != "post:"+c.Key {
		return "", m
	}
	m = statestore.Mark{Stream: stream, EventID: f.Meta.EventID, Progress: c.progressLocked()}
	m.Progress.Step(env.Hints().Progress, env.Hints().Total, env.Hints().Message, f.Time)
	return c.x().handle, m
}

// markStep writes a progress step's mark to the state store, once the
// step's line is in the journal's file (waiting at most stepWriteWait for
// the disk) and before the step counts or is shown. So a kill -9 at any
// moment leaves the store no behind what was shown, on any machine (a
// rejoin never shows a step twice), and the journal no behind the store
// (a rejoin on this machine, which reads both, never skips a step the
// first process did not journal). It reports why the store refused the
// mark ("": it took it), for a note once the step is in.
//
// doubt is set when the lease was lost after a try the store did not
// answer: that mark may have gone in, and then the next holder resumes
// after this step and counts it in its "progress so far" without showing it.
func (s *Session) markStep(c *Call, handle string, m statestore.Mark, j *journal.Writer, end int64) (refused string, lost *statestore.LeaseLostError, doubt bool) {
	if j != nil {
		j.WrittenTo(end, stepWriteWait)
	}
	var err error
	if claim := c.x().claim; claim != nil {
		// Fenced: a holder paused or cut off past its TTL, once another
		// claimed the call, shows nothing more (Write waits while the
		// store is away and the lease is surely still ours).
		err = claim.Write(func(l statestore.Lease) error {
			err := s.opts.StateStore.MarkFenced(handle, m, l)
			doubt = doubt || statestore.Unreachable(err)
			return err
		})
		if errors.As(err, &lost) {
			return "", lost, doubt
		}
	} else {
		err = s.opts.StateStore.Mark(handle, m)
	}
	if err != nil {
		c.markOff = true
		return fmt.Sprintf("the progress of call %s is no longer marked in the state store (%v): a rejoin elsewhere may show again the steps since its record was last written (every %s at most)",
			c.Key, err, persistEvery), nil, false
	}
	return "", nil, false
}

// inDoubtWhy is what a holder says of a step whose mark it sent as the
// store stopped answering, before it lost the lease.
const inDoubtWhy = "its mark was sent to the state store as it stopped answering, so it may have gone in: " +
	"then the process that holds the call now counts this step in its \"progress so far\" and does not show it again"

// stepName is how a step reads on screen: "progress 3/40".
func stepName(p statestore.Progress) string {
	if p.Total > 0 {
		return fmt.Sprintf("progress %g/%g", p.Value, p.Total)
	}
	return fmt.Sprintf("progress %g", p.Value)
}

// StepInDoubt says which step of c, if any, this process neither showed
// nor can say was left to the next holder (its mark was sent as the
// store stopped answering, then the lease was lost), and why: "" if none.
func (s *Session) StepInDoubt(c *Call) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.x().inDoubt == "" {
		return ""
	}
	return c.x().inDoubt + " was not shown here: " + inDoubtWhy
}

// stepWriteWait bounds how long a step to mark waits for its journal line
// to reach the file: a disk slower than that, and a kill -9 at that moment
// may leave the step out of the journal, which a rejoin here then skips.
const stepWriteWait = time.Second

// forgetLocked lets go of what a call that ended here still holds: an
// armed resume of its stream, and its rejoin record.
func (s *Session) forgetLocked(c *Call) {
	// A resume armed for the call's stream has nothing left to fetch.
	if st := s.streams["post:"+c.Key]; st != nil && st.timer != nil {
		st.timer.Stop()
		st.timer, st.fire = nil, nil
	}
	s.stopQuietLocked("post:" + c.Key)
	if c.x().persistTimer != nil {
		if c.x().persistTimer.Stop() {
			s.persisting.Done() // the write will not run
		}
		c.xw().persistTimer = nil
	}
	if c.x().handle != "" && s.opts.StateStore != nil && c.st() != StateDetached {
		h := c.x().handle
		s.persisting.Add(1)
		go func() {
			defer s.persisting.Done()
			c.xw().persistMu.Lock()
			defer c.xw().persistMu.Unlock()
			claim := c.x().claim
			switch {
			case c.x().recordGone: // deleted with the result, under the claim
			case claim != nil:
				// Fenced: a holder that lost the call deletes nothing.
				_ = claim.Write(func(l statestore.Lease) error { return s.opts.StateStore.DeleteFenced(h, l) })
			default:
				_ = s.opts.StateStore.Delete(h)
			}
			claim.Release()
			c.xw().claim = nil
			s.store.Notify() // readers waiting on the record's removal
		}()
	}
}

// Detach leaves a running call to the server and keeps its state in the
// StateStore: its stream is closed without a cancel, and `mcpscope rejoin`
// (or the UI) can pick it up later, from this process or another.
func (s *Session) Detach(c *Call) (string, error) { return s.detach(c, nil) }

// detach is Detach; why (nil: the user detached it) says why the call ends
// here, for a call mcpscope stopped following by itself.
func (s *Session) detach(c *Call, why *Failure) (string, error) {
	// persistMu first: a debounced write or a step's mark under way comes
	// wholly before the detach, never puts the owner back after it.
	c.xw().persistMu.Lock()
	s.mu.Lock()
	if s.opts.StateStore == nil {
		s.mu.Unlock()
		c.xw().persistMu.Unlock()
		return "", errors.New("this session keeps no call state (no state store)")
	}
	if c.st().Ended() {
		s.mu.Unlock()
		c.xw().persistMu.Unlock()
		return "", fmt.Errorf("call %s already ended (%s)", c.Key, c.st())
	}
	if !s.persistableLocked(c) {
		s.mu.Unlock()
		c.xw().persistMu.Unlock()
		return "", fmt.Errorf("call %s cannot be rejoined later: only HTTP calls whose stream carries SSE event ids (a server with an event store), or tasks, can", c.Key)
	}
	if c.x().handle == "" {
		c.xw().handle = handleFor(c, s.num)
	}
	d := s.recordLocked(c)
	d.Owner = nil // nobody holds it now
	f := &Failure{Reason: "detached: rejoin with " + statestore.RejoinCommandIn(s.opts.StateStore, c.x().handle)}
	if why != nil {
		f = &Failure{Reason: why.Reason + "; the call goes on on the server: rejoin with " + statestore.RejoinCommandIn(s.opts.StateStore, c.x().handle),
			Cause: why.Cause, Kind: why.Kind}
	}
	s.endLocked(c, StateDetached, nil, nil, f, s.opts.Now())
	s.mu.Unlock()
	s.store.Notify()
	// The first record may be this one: a detach can come before the
	// debounced write that would have said how the store may lose it.
	s.storeHealth()
	var err error
	if claim := c.x().claim; claim != nil {
		// Fenced, tried once: a lost lease means another process holds
		// the call (nothing to write), an unreachable store the local
		// fallback (StoredElsewhere).
		statestore.SealRecord(&d)
		err = s.putResult(d, s.opts.StateStore.PutFenced(d, claim.Lease(), false), true)
		if errors.Is(err, statestore.ErrLeaseLost) || errors.Is(err, statestore.ErrStoreLost) || errors.Is(err, statestore.ErrNoSuchCall) {
			err = fmt.Errorf("call %s is not this process's to detach any more: %w", c.Key, err)
		}
	} else {
		err = s.putRecord(d, true)
	}
	if err == nil {
		c.x().claim.Release()
		c.xw().claim = nil
	}
	c.xw().persistMu.Unlock()
	if err != nil {
		return "", fmt.Errorf("keep the call's state: %w", err)
	}
	if h, ok := s.t.(transport.StreamCloser); ok {
		h.CloseStream(c.Key)
	}
	s.localEvent(transport.Meta{Event: transport.EvNote, Stream: "post:" + c.Key, Detail: "detached call " + c.Key + " as " + d.Handle})
	s.watchDetached()
	return d.Handle, nil
}

// RejoinCommand is the command line that rejoins handle, quoted for a
// shell (a handle is file-safe, but a record can come from anywhere).
func RejoinCommand(handle string) string { return statestore.RejoinCommandIn(nil, handle) }

// DetachAll detaches every call that can be rejoined (the inspector quits
// but the work goes on); the rest are left to end as usual.
func (s *Session) DetachAll() []string {
	var handles []string
	for _, c := range s.Calls() {
		s.mu.Lock()
		ok := s.persistableLocked(c)
		s.mu.Unlock()
		if ok {
			if h, err := s.Detach(c); err == nil {
				handles = append(handles, h)
			}
		}
	}
	return handles
}

// Rejoin picks up a detached call: same endpoint, session id and request
// id; the stream resumes from the last event id, so the progress missed
// meanwhile and the result arrive here. In a fresh session (mcpscope
// rejoin) the session adopts the call's MCP session; in one that has its
// own (the TUI), the call keeps living in its session beside it. What the
// call's last process journaled counts as delivered: the resume starts
// after the last event it wrote, so no step is shown twice across a kill.
// It returns the call, already registered; Start the session first.
func (s *Session) Rejoin(ctx context.Context, d statestore.Detached) (*Call, error) {
	if len(d.LastEventIDs) == 0 && d.TaskID == "" {
		return nil, fmt.Errorf("call %s has no stream position or task to rejoin from", d.Handle)
	}
	foreign := ""
	h, holds := s.t.(transport.SessionHolder)
	if holds && h.SessionID() != "" && h.SessionID() != d.SessionID {
		if _, ok := s.t.(transport.StreamSessions); !ok {
			return nil, fmt.Errorf("call %s belongs to another MCP session, which this transport cannot reach", d.Handle)
		}
		foreign = d.SessionID
	}
	claim, err := s.claimCall(d.Handle)
	if err != nil {
		return nil, err
	}
	s.storeHealth()
	if claim != nil {
		// The record names its new owner, fenced and only over the
		// record as it is: a call that ended while this process waited
		// for its lease is never written back.
		me := statestore.Me()
		rec := d
		rec.Owner, rec.OwnerPID = &me, 0
		statestore.SealRecord(&rec)
		err := claim.Write(func(l statestore.Lease) error { return s.opts.StateStore.PutFenced(rec, l, false) })
		if err != nil {
			claim.Release()
			return nil, fmt.Errorf("rejoin %s: %w", d.Handle, err)
		}
	}
	key := journal.IDKey(d.RequestID)
	c := s.newCall(key, d.RequestID, d.Method, d.Started)
	c.Name, c.xw().taskID, c.xw().handle, c.persisted = d.Name, d.TaskID, d.Handle, true
	c.setParams(d.Params)
	c.setProgressLocked(d.Progress)
	c.xw().sessionID, c.xw().claim = foreign, claim
	c.followed = true
	c.setState(StateStreaming)
	stream, lastID := "", ""
	for k, v := range d.LastEventIDs {
		stream, lastID = k, v
	}
	if stream != "" && d.Journal != "" && d.Journal != s.info.JournalPath {
		if id, p, ok := statestore.ProgressFromJournal(d.Journal, stream, lastID, d.ProgressToken, d.Progress); ok {
			lastID = id
			c.setProgressLocked(p)
		}
	}
	s.mu.Lock()
	s.rejoined = true
	if foreign == "" {
		s.info.ProtocolVersion, s.info.Era = d.ProtocolVersion, protocol.EraLegacy
	}
	if d.NextID > s.nextID {
		s.nextID = d.NextID
	}
	s.calls.set(key, c)
	s.order.add(c)
	s.pending[key] = c
	if len(d.ProgressToken) > 0 {
		c.Token = journal.IDKey(d.ProgressToken)
		s.byToken[c.Token] = c
	}
	if stream != "" {
		s.streamLocked(stream).lastID = lastID
	}
	s.mu.Unlock()
	switch {
	case foreign != "":
		s.t.(transport.StreamSessions).SetStreamSession(stream, foreign)
	case holds:
		h.SetSessionID(d.SessionID)
		if vh, ok := s.t.(transport.VersionHeader); ok && d.ProtocolVersion >= "2025-06-18" {
			vh.SetProtocolVersion(d.ProtocolVersion)
		}
	}
	// This process uses the call's MCP session now: nobody may end it.
	s.shareSession(d.SessionID)
	if claim != nil {
		s.watchClaim(c, claim)
	}
	s.armTimers(c, CallOptions{})
	s.localEvent(transport.Meta{Event: transport.EvNote, Stream: stream,
		Detail: fmt.Sprintf("rejoining call %s (%s %s) of session %s from Last-Event-ID %q", key, d.Method, d.Name, d.SessionID, lastID)})
	if stream != "" {
		s.resumeNow(stream, lastID)
	}
	return c, nil
}

// sessionInUseElsewhere reports whether closing this session must leave the
// MCP session on the server: another process (on any machine) holds a
// lease on it, or the store holds a record in it that keeps it alive (a
// call that is not this process's, waiting to be rejoined, or a task one of
// this session's calls left running). A store that cannot say counts as in
// use: ending a session someone else uses loses their calls, keeping one
// costs nothing. One List answers for every record.
func (s *Session) sessionInUseElsewhere() bool {
	sid := ""
	if h, ok := s.t.(transport.SessionHolder); ok {
		sid = h.SessionID()
	}
	store, target := s.opts.StateStore, s.opts.Rejoin.Target
	if store == nil || target == "" || sid == "" {
		return false
	}
	s.mu.Lock()
	mine := map[string]bool{}    // records of this session's calls and tasks
	running := map[string]bool{} // tasks this session made or followed that have not ended
	for c := range s.order.all() {
		if c.x().handle != "" {
			mine[c.x().handle] = true
		}
	}
	for id, t := range s.tasks {
		if t.Terminal() {
			mine[protocol.TaskHandle(id)] = true // its record goes with its result
		} else {
			running[protocol.TaskHandle(id)] = true // made or rejoined here, left running
		}
	}
	var own []statestore.Lease
	if h := s.sessLeases[sid]; h != nil {
		own = append(own, h.Lease())
	}
	s.mu.Unlock()
	<-s.storeOps.Done() // task records written or deleted before they are read
	users, err := statestore.SessionUsers(store, target, sid, own...)
	if err != nil {
		s.Note(fmt.Sprintf("kept MCP session %s open: the state store (%s) cannot say whether another process uses it: %v", sid, store, err))
		return true
	}
	if len(users) > 0 {
		s.Note(fmt.Sprintf("kept MCP session %s open: the mcpscope with %s uses it too", sid, users[0].Owner))
		return true
	}
	list, err := store.List()
	if err != nil {
		s.Note(fmt.Sprintf("kept MCP session %s open: the state store (%s) cannot list its calls: %v", sid, store, err))
		return true
	}
	for _, d := range list {
		switch {
		case d.SessionID != sid || d.Target != target:
		case running[d.Handle]:
			s.Note(fmt.Sprintf("kept MCP session %s open: task %s runs in it, its record kept to be rejoined", sid, d.TaskID))
			return true
		case !mine[d.Handle]:
			s.Note(fmt.Sprintf("kept MCP session %s open: call %s in it waits to be rejoined", sid, d.Handle))
			return true
		}
	}
	return false
}

// Stored waits (bounded by ctx) until the store writes this session queued
// so far are done: a task's record is in the store once a caller that saw
// the task created returns from it, so it can be told to a person (who may
// kill -9 the process next).
func (s *Session) Stored(ctx context.Context) error {
	select {
	case <-s.storeOps.Done():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// shareSession takes this process's lease on MCP session sid (every
// process that uses a session holds one, renewed while it runs), so no
// other ends it meanwhile. Released when the session closes.
func (s *Session) shareSession(sid string) {
	store, target := s.opts.StateStore, s.opts.Rejoin.Target
	if store == nil || target == "" || sid == "" || s.offline {
		return
	}
	s.mu.Lock()
	if s.sessLeases == nil {
		s.sessLeases = map[string]*statestore.Held{}
	}
	if _, ok := s.sessLeases[sid]; ok || s.info.Closed {
		s.mu.Unlock()
		return
	}
	s.sessLeases[sid] = nil // taking it
	s.mu.Unlock()
	h, err := statestore.Hold(store, statestore.SessionLease(target, sid), true)
	s.mu.Lock()
	closed := s.info.Closed
	if err == nil && !closed {
		s.sessLeases[sid] = h
	}
	s.mu.Unlock()
	if err != nil {
		s.Note(fmt.Sprintf("could not take a lease on MCP session %s in the state store (%s): %v", sid, store, err))
	} else if closed {
		h.Release()
	}
}

// releaseSessionLeases lets go of this process's session leases (Close).
func (s *Session) releaseSessionLeases() {
	s.mu.Lock()
	ls := s.sessLeases
	s.sessLeases = nil
	s.mu.Unlock()
	for _, h := range ls {
		h.Release()
	}
}

// claimCall is the lease a rejoin runs under: one ClaimCall took, or a new one.
func (s *Session) claimCall(handle string) (*statestore.Held, error) {
	if h := statestore.TakeClaim(handle); h != nil {
		return h, nil
	}
	if s.opts.StateStore == nil {
		return nil, nil
	}
	return statestore.Hold(s.opts.StateStore, statestore.CallLease(handle), false)
}

// Detached counts calls of this session left running on the server.
func (s *Session) Detached() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.order.all() {
		if c.st() == StateDetached {
			n++
		}
	}
	return n
}
