// Package scan reads a journal as a stream: every frame decoded once and
// tied to the client call it belongs to, in memory bounded by the calls in
// flight rather than by the journal's length. It is what the headless
// readers of journals (journal --filter, export, diff, serve, replay) share.
//
// Calls are correlated the way the live session does it (package session):
// a response by its id, progress by its token, what arrives on a request's
// own HTTP stream by that stream, notifications/cancelled by its requestId.
// With Options.Final the journal is read twice, so that every frame of a
// call, its request included, sees how the call ended: the filter terms ~s
// ~e and ~dur need that. The first pass keeps 32 bytes per call.
package scan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"time"

	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/transport"
)

// Frame is one journal frame as the scan understood it. It is valid only
// during the callback it is passed to.
type Frame struct {
	Seq uint64
	transport.Frame
	// Env is the message the frame holds (the first of a batch), nil when
	// it holds none; Batch the messages of a batch frame.
	Env   *journal.Envelope
	Batch []*journal.Envelope
	// Call is the client call the frame belongs to (its request, response,
	// progress, the notifications on its own HTTP stream, its
	// cancellation), nil when none: the frames the session ties to a call.
	// Without Options.Final it is the call as known at this frame; with it,
	// as it ended. Params are kept until the call ends.
	Call *session.CallSnapshot
	// CallIndex numbers Call among the journal's client requests, from 0 in
	// the order sent (a key that stays unique when ids repeat); -1 without
	// a call.
	CallIndex int
	// Late: a response or progress that came after its call had ended.
	Late bool
}

// Options tune a scan.
type Options struct {
	// Final reads the journal twice so that each frame's Call is the call
	// as it ended. It needs a file (not a stream).
	Final bool
	// CallEnded, when set, hears of each call once, as soon as it has
	// ended (answered, cancelled, or lost with its transport), and of the
	// calls still open when the journal ends, in the order they were made,
	// after the last frame. index is the call's CallIndex; c is valid only
	// during the call (copy what is kept).
	CallEnded func(index int, c *session.CallSnapshot)
	// Bare hands over the frames as read, for a reader that needs neither
	// their messages nor their calls (export --format jsonl without a
	// filter): Env, Batch and Call stay nil, CallIndex -1, and a frame's
	// data is valid only during the callback. Final and CallEnded are
	// not used then.
	Bare bool
	// Borrow: a frame's data, and the raw parts of its messages (Env,
	// Batch), are valid only during the callback, for a reader that copies
	// what it keeps (Env itself is reused from frame to frame); the scan
	// copies what it keeps of a call (its id, params and error), so Call
	// stays whole. A frame then costs no copy of its message. Without
	// Final, Call (and the call CallEnded is given) is then the scan's own:
	// read it, never write it.
	Borrow bool
	// NoParams: the reader reads neither the Params nor the ID of a Call
	// (nor of what CallEnded is given), so the scan keeps them nil: with
	// Borrow, a request then costs no copy of them.
	NoParams bool
	// NoProgress: the reader reads no call's progress, nor which call a
	// progress notification belongs to, so the scan follows no progress
	// token: a call's Progress stays zero, its state pending until it ends,
	// and a progress notification is tied to a call only by its HTTP
	// stream, as any other notification; with Borrow, its Env says nothing
	// of its params but that they are there (journal.ReadDecodedNoProgress).
	// How calls end is the same.
	NoProgress bool
}

// File scans the journal at path, calling fn for every frame in order.
// Lines that are not records, and a torn last line, are reported as a
// *journal.Damage after every other frame (as journal.Read
// does); an error from fn stops the scan and is returned.
func File(path string, o Options, fn func(*Frame) error) (journal.Header, error) {
	if st, err := os.Stat(path); err == nil && st.Size() >= gcFloor {
		defer runtime.KeepAlive(make([]byte, gcFloor))
	}
	if o.Bare {
		return bare(path, fn)
	}
	var outcomes []outcome
	var handles map[int]string
	if o.Final {
		c := newCorrelator(nil, nil)
		c.collect = true
		c.borrow = true // no frame of this pass leaves the scan
		f, err := os.Open(path)
		if err != nil {
			return journal.Header{}, fmt.Errorf("open journal: %w", err)
		}
		// Progress does not change how a call ends: this pass reads none.
		_, err = journal.ReadDecodedNoProgress(f, &c.env, func(seq uint64, fr *transport.Frame, env *journal.Envelope, batch []*journal.Envelope) error {
			c.stepDecoded(seq, fr, env, batch)
			return nil
		})
		f.Close()
		if err != nil && !errors.As(err, new(*journal.Damage)) {
			return journal.Header{}, err
		}
		c.endOpen()
		c.finish()
		outcomes, handles = c.outcomes, c.handles
	}
	f, err := os.Open(path)
	if err != nil {
		return journal.Header{}, fmt.Errorf("open journal: %w", err)
	}
	defer f.Close()
	return read(f, outcomes, handles, o, fn)
}

// gcFloor is the heap a scan holds untouched while it reads, so that the
// collector runs every few tens of megabytes allocated rather than every
// two or three: a scan's live heap is a few megabytes (the calls in
// flight), and at the runtime's 4 MB minimum goal a million-frame journal
// cost 400 collections, a quarter of the CPU of an export. The pages are
// never written, so they are not resident; the heap goal grows by twice
// this, whatever the journal's size. A journal smaller than this (journals
// lists many) goes without.
const gcFloor = 16 << 20

// bare is File with Options.Bare: frames only, their data borrowed.
func bare(path string, fn func(*Frame) error) (journal.Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return journal.Header{}, fmt.Errorf("open journal: %w", err)
	}
	defer f.Close()
	var fr Frame
	return journal.ReadBorrowed(f, func(seq uint64, tf transport.Frame) error {
		fr = Frame{Seq: seq, Frame: tf, CallIndex: -1}
		return fn(&fr)
	})
}

// Reader scans a journal from r in one pass: each frame's Call is the call
// as known at that frame. ended is Options.CallEnded (nil: none).
func Reader(r io.Reader, ended func(int, *session.CallSnapshot), fn func(*Frame) error) (journal.Header, error) {
	return read(r, nil, nil, Options{CallEnded: ended}, fn)
}

// read scans r as o says (its Final and Bare aside); final, when not nil,
// and handles are what a first pass learnt.
func read(r io.Reader, final []outcome, handles map[int]string, o Options, fn func(*Frame) error) (journal.Header, error) {
	c := newCorrelator(final, handles)
	c.onEnd = o.CallEnded
	c.borrow = o.Borrow
	c.noParams = o.NoParams
	c.noProgress = o.NoProgress
	var h journal.Header
	var err error
	if o.Borrow {
		// The frame's message decoded as its record is read: one Envelope
		// reused, borrowed as the frame's data is.
		decoded := journal.ReadDecoded
		if o.NoProgress {
			decoded = journal.ReadDecodedNoProgress // a progress notification's params unread
		}
		h, err = decoded(r, &c.env, func(seq uint64, fr *transport.Frame, env *journal.Envelope, batch []*journal.Envelope) error {
			return fn(c.stepDecoded(seq, fr, env, batch))
		})
	} else {
		h, err = journal.Read(r, func(seq uint64, fr transport.Frame) error {
			return fn(c.step(seq, fr))
		})
	}
	c.endOpen()
	return h, err
}

// endOpen ends the calls still open when the journal ends, at its last
// frame, lost (session.RecordingEnded), in the order they were made
// (CallEnded hears of them then): an open session says the same.
func (c *correlator) endOpen() { c.endAllOpen(session.RecordingEnded, c.last) }

// endAllOpen ends the calls still open, in the order they were made (not
// the map's, which changes from run to run): CallEnded hears of them, and
// a listing prints them, in that order.
func (c *correlator) endAllOpen(reason string, at time.Time) {
	var open []*call
	for _, cl := range c.calls {
		if !cl.snap.State.Ended() {
			open = append(open, cl)
		}
	}
	sort.Slice(open, func(i, j int) bool { return open[i].ordinal < open[j].ordinal })
	for _, cl := range open {
		cl.snap.Failure = &session.Failure{Reason: reason, Kind: session.ErrClosed}
		c.end(cl, session.StateError, at)
	}
}

// tell gives a call to the CallEnded hook, as it ended.
func (c *correlator) tell(cl *call) {
	if c.borrow && !c.final {
		c.onEnd(cl.ordinal, &cl.snap) // lent, as the frames' calls are
		return
	}
	c.told = cl.snap // the correlator's own copy: one a call would put on the heap
	if c.final && cl.ordinal < len(c.outcomes) {
		c.outcomes[cl.ordinal].apply(&c.told)
		c.detachedAs(cl.ordinal, &c.told)
	}
	c.onEnd(cl.ordinal, &c.told)
}

// outcome is how a call ended, as the first pass saw it: enough for the
// filter's ~s ~e ~dur, in 32 bytes.
type outcome struct {
	ended  int64 // unix nanoseconds; 0 while running
	state  uint8
	flags  uint8
	late   uint16
	failed uint8 // 1: a synthetic failure; 2: lost with its transport
}

const (
	flagIsError uint8 = 1 << iota
	flagInput
	flagRPCError
	flagProgress
)

var stateCodes = []session.State{"", session.StatePending, session.StateStreaming, session.StateOK,
	session.StateError, session.StateCancelled, session.StateDetached}

func stateCode(s session.State) uint8 {
	for i, x := range stateCodes {
		if x == s {
			return uint8(i)
		}
	}
	return 0
}

// call is a call the scan is following.
type call struct {
	snap    session.CallSnapshot
	ordinal int
	token   string
}

// keepEnded is how many ended calls stay known, so that a late response or
// late progress is still tied to its call. Older ones are forgotten.
const keepEnded = 4096

// correlator ties frames to calls as they stream by.
type correlator struct {
	held       *call            // the era probe answered with an HTTP error, its body still to come
	heldAt     time.Time        // when that error came
	calls      map[string]*call // by id key: in flight, and the last keepEnded ended
	byToken    map[string]*call
	ended      []string // ring of ended keys, oldest first once full
	endedAt    int
	ordinal    int
	outcomes   []outcome        // pass 1: filled; pass 2: read
	handles    map[int]string   // detached calls' handles by ordinal (pass 1: filled; pass 2: read)
	collect    bool             // pass 1: record how calls end
	borrow     bool             // frames' data is borrowed: a call copies what it keeps of it
	noParams   bool             // Options.NoParams: a call keeps neither its ID nor its params
	noProgress bool             // Options.NoProgress: no progress token is followed
	env        journal.Envelope // with borrow, each frame's message, read into the same Envelope
	final      bool             // pass 2: outcomes say how calls end
	onEnd      func(int, *session.CallSnapshot)
	last       time.Time // the latest frame's time: where the recording ends
	fr         Frame
	snap       session.CallSnapshot
	told       session.CallSnapshot // what CallEnded is given
	free       []*call              // calls forgotten, for new requests to reuse
}

// newCall is a call to follow, reused when one was forgotten: a journal
// makes one per request, and all but the last keepEnded are dropped.
func (c *correlator) newCall() *call {
	if n := len(c.free); n > 0 {
		cl := c.free[n-1]
		c.free = c.free[:n-1]
		*cl = call{}
		return cl
	}
	return &call{}
}

func newCorrelator(final []outcome, handles map[int]string) *correlator {
	return &correlator{calls: map[string]*call{}, byToken: map[string]*call{}, outcomes: final, handles: handles, final: final != nil}
}

// step ties a frame to its call, its message read leniently, as the
// session does, with the session's own decoder: params and result are
// slices of data, never copies, so a huge frame is held once (its line),
// not twice.
func (c *correlator) step(seq uint64, f transport.Frame) *Frame {
	var env *journal.Envelope
	var batch []*journal.Envelope
	if f.Kind == transport.Message {
		if c.borrow {
			env, batch = journal.DecodeInto(&c.env, f.Data) // one Envelope, reused: borrowed too
		} else {
			env, batch = journal.Decode(f.Data)
		}
	}
	return c.stepDecoded(seq, &f, env, batch)
}

// stepDecoded is step for a frame whose message is decoded already (env
// and batch as journal.Decode gives them); f is copied, not kept.
func (c *correlator) stepDecoded(seq uint64, f *transport.Frame, env *journal.Envelope, batch []*journal.Envelope) *Frame {
	fr := &c.fr
	*fr = Frame{Seq: seq, Frame: *f, CallIndex: -1}
	if f.Time.After(c.last) {
		c.last = f.Time
	}
	if len(batch) > 0 {
		fr.Env, fr.Batch = batch[0], batch
	} else {
		fr.Env = env
	}
	if h := c.held; h != nil {
		// The probe held open by its HTTP error ends now, failed, unless
		// this frame is the refusal that answers it (message ends it then).
		c.held = nil
		if k, ok := journal.RefusalOf(&fr.Meta, fr.Env); !ok || k != h.snap.Key || h.snap.State.Ended() {
			c.end(h, session.StateError, c.heldAt)
		} else {
			h.snap.Failure = nil
		}
	}
	var cl *call
	switch {
	case fr.Batch != nil:
		for _, e := range fr.Batch {
			if x := c.message(fr, e); x != nil && cl == nil {
				cl = x
			}
		}
	case fr.Env != nil:
		cl = c.message(fr, fr.Env)
	case f.Kind == transport.Event:
		cl = c.event(fr)
	}
	if cl != nil && !c.collect { // the first pass hands no frame over
		if c.borrow && !c.final {
			// The call itself, lent as the frame is (a copy of its
			// snapshot a frame was a fiftieth of a read-back).
			fr.Call, fr.CallIndex = &cl.snap, cl.ordinal
			return fr
		}
		c.snap = cl.snap
		if c.final && cl.ordinal < len(c.outcomes) {
			c.outcomes[cl.ordinal].apply(&c.snap)
			c.detachedAs(cl.ordinal, &c.snap)
		}
		fr.Call, fr.CallIndex = &c.snap, cl.ordinal
	}
	return fr
}

// message correlates one message of fr.
func (c *correlator) message(fr *Frame, e *journal.Envelope) *call {
	at := fr.Time
	class := e.Class()
	if fr.Dir == transport.Out {
		switch class {
		case journal.ClassRequest:
			return c.request(e, at)
		case journal.ClassNotification:
			if e.Method != "notifications/cancelled" {
				return nil
			}
			if len(e.Params) == 0 {
				return nil // as json.Unmarshal of no params fails
			}
			cl := c.calls[string(journal.KeyBytes(e.CancelledID()))]
			if cl != nil && !cl.snap.State.Ended() {
				st, _ := session.CancelEnds(e.Params)
				c.end(cl, st, at)
			}
			return cl
		}
		return nil
	}
	switch class {
	case journal.ClassResult, journal.ClassError:
		cl := c.calls[string(journal.KeyBytes(e.ID))] // no allocation for the lookup
		if k, ok := journal.RefusalOf(&fr.Meta, e); ok && c.calls[k] != nil && c.calls[k].snap.Probe {
			cl = c.calls[k] // the era probe's HTTP error answer (journal.RefusalOf)
		}
		if cl == nil {
			return nil
		}
		if cl.snap.State.Ended() {
			cl.snap.Late++
			fr.Late = true
			c.record(cl)
			return cl
		}
		if class == journal.ClassError {
			cl.snap.RPCError = e.Error
			if c.borrow && e.Error != nil && !c.collect { // the first pass reads only that there is one
				er := *e.Error
				er.Data = bytes.Clone(er.Data)
				cl.snap.RPCError = &er
			}
			st := session.StateError
			if journal.ProxyCancelAnswer(&fr.Meta) {
				st = session.StateCancelled // as the session reads it back (journal.ProxyCancelAnswer)
			}
			c.end(cl, st, at)
			return cl
		}
		if cl.snap.Method == "tools/call" {
			cl.snap.IsError = e.ToolError()
		}
		cl.snap.ResultType = e.ResultKind()
		c.end(cl, session.StateOK, at)
		return cl
	case journal.ClassNotification:
		if c.collect {
			return nil // neither progress nor a call's stream changes how it ends
		}
		if e.Method == "notifications/progress" && !c.noProgress {
			if cl := c.progress(fr, e); cl != nil {
				return cl
			}
		}
		// On HTTP, what arrives on a request's own stream belongs to it.
		if key, ok := fr.Meta.PostCall(); ok {
			return c.calls[key]
		}
	}
	return nil
}

// progress ties a progress notification to its call by token.
func (c *correlator) progress(fr *Frame, e *journal.Envelope) *call {
	token, value, total, message, ok := e.ProgressParams() // read by the decoding pass
	if !ok {
		return nil
	}
	cl := c.byToken[string(journal.KeyBytes(token))]
	if cl == nil {
		return nil
	}
	if cl.snap.State.Ended() {
		fr.Late = true
		return cl
	}
	pr := &cl.snap.Progress
	if pr.Updates == 0 {
		pr.FirstValue, pr.FirstAt = value, fr.Time
	}
	pr.Updates++
	pr.Value, pr.Total, pr.LastAt = value, total, fr.Time
	if message != "" {
		pr.Message = message
	}
	cl.snap.HasProgress = true
	if cl.snap.State == session.StatePending {
		cl.snap.State = session.StateStreaming
	}
	return cl
}

// request starts following a client request.
func (c *correlator) request(e *journal.Envelope, at time.Time) *call {
	key := e.Key()
	cl := c.newCall()
	cl.ordinal = c.ordinal
	c.ordinal++
	var token json.RawMessage
	if !c.noProgress {
		token = e.MetaProgressToken() // read by the decoding pass, as the name is
	}
	cl.snap = session.CallSnapshot{Key: key, Method: e.Method, Name: e.Name(), ID: e.ID,
		Params: e.Params, State: session.StatePending, Started: at,
		Probe: e.Method == session.ProbeMethod && cl.ordinal == 0} // a journal's first request, server/discover, is the era probe
	if c.collect {
		// The first pass keeps how calls end, not what they asked or
		// their progress.
		cl.snap.ID, cl.snap.Params, token = nil, nil, nil
	} else if c.noParams {
		cl.snap.ID, cl.snap.Params = nil, nil
	} else if c.borrow {
		cl.snap.ID, cl.snap.Params = bytes.Clone(e.ID), bytes.Clone(e.Params)
	}
	if len(token) > 0 {
		cl.token = keyOf(token)
		c.byToken[cl.token] = cl
	}
	if old := c.calls[key]; old != nil {
		if old.token != "" && c.byToken[old.token] == old {
			delete(c.byToken, old.token)
		}
		if !old.snap.State.Ended() && c.onEnd != nil {
			c.tell(old) // a request reused its id: the old one can hear nothing more
		}
	}
	c.calls[key] = cl
	if c.collect {
		c.outcomes = append(c.outcomes, outcome{})
	}
	return cl
}

// end moves a call to its final state and makes room: its params are
// dropped (the request frame had them) and it stays known a while, for late
// frames.
func (c *correlator) end(cl *call, st session.State, at time.Time) {
	cl.snap.State, cl.snap.Ended = st, at
	cl.snap.Params = nil
	c.record(cl)
	if c.onEnd != nil {
		c.tell(cl)
	}
	if len(c.ended) < keepEnded {
		c.ended = append(c.ended, cl.snap.Key)
		return
	}
	old := c.ended[c.endedAt]
	if x := c.calls[old]; x != nil && x.snap.State.Ended() {
		delete(c.calls, old)
		if x.token != "" && c.byToken[x.token] == x {
			delete(c.byToken, x.token)
		}
		if x != c.held && x != cl {
			c.free = append(c.free, x) // nothing knows it any more: the next request's
		}
	}
	c.ended[c.endedAt] = cl.snap.Key
	c.endedAt = (c.endedAt + 1) % keepEnded
}

// event ties a transport event to a call and ends the calls a closed
// transport leaves without an answer.
func (c *correlator) event(fr *Frame) *call {
	switch fr.Meta.Event {
	case transport.EvExited, transport.EvClosed:
		why := "the transport closed"
		if fr.Meta.Event == transport.EvExited {
			why = "the server process exited"
		}
		c.endAllOpen(why+" before answering", fr.Time)
	case transport.EvNote:
		// A detach's note: the call was left running on the server, to
		// rejoin, as the session reads it back (journal.DetachedNote).
		if key, handle, ok := journal.DetachedNote(&fr.Meta); ok {
			if cl := c.calls[key]; cl != nil && !cl.snap.State.Ended() {
				cl.snap.Handle = handle
				cl.snap.Failure = session.DetachedFailure(handle)
				if c.collect {
					if c.handles == nil {
						c.handles = map[int]string{}
					}
					c.handles[cl.ordinal] = handle
				}
				c.end(cl, session.StateDetached, fr.Time)
				return cl
			}
		}
	case transport.EvHTTPError:
		// A POST answered with an HTTP error failed its request, as the
		// session reads it (a fallback's calls may reuse its id later).
		if key, ok := fr.Meta.PostCall(); ok && fr.Meta.Status != 0 {
			if cl := c.calls[key]; cl != nil && !cl.snap.State.Ended() {
				cl.snap.Failure = &session.Failure{Reason: fmt.Sprintf("the server answered HTTP %d", fr.Meta.Status), Kind: session.ErrSend}
				if cl.snap.Probe {
					// A 2025 server's refusal of the era probe comes as the
					// body after this event (journal.RefusalOf): the next
					// frame decides how the probe ended.
					c.held, c.heldAt = cl, fr.Time
					return cl
				}
				c.end(cl, session.StateError, fr.Time)
				return cl
			}
		}
	}
	return nil
}

// record writes a call's outcome in the first pass.
func (c *correlator) record(cl *call) {
	if !c.collect || cl.ordinal >= len(c.outcomes) {
		return
	}
	o := &c.outcomes[cl.ordinal]
	s := &cl.snap
	o.state = stateCode(s.State)
	if !s.Ended.IsZero() {
		o.ended = s.Ended.UnixNano()
	}
	o.flags = 0
	if s.IsError {
		o.flags |= flagIsError
	}
	if s.ResultType == "input_required" {
		o.flags |= flagInput
	}
	if s.RPCError != nil {
		o.flags |= flagRPCError
	}
	o.late = uint16(min(s.Late, 1<<16-1))
	o.failed = 0
	if s.Failure != nil {
		o.failed = 1
		if errors.Is(s.Failure, session.ErrClosed) {
			o.failed = 2
		}
	}
}

// finish ends the first pass: calls still running stay as they are.
func (c *correlator) finish() { c.collect = false }

// apply makes s the call as it ended.
func (o outcome) apply(s *session.CallSnapshot) {
	if o.state == 0 {
		return // never ended: as it was
	}
	s.State = stateCodes[o.state]
	if o.ended != 0 {
		s.Ended = time.Unix(0, o.ended)
	}
	s.IsError = o.flags&flagIsError != 0
	if o.flags&flagInput != 0 {
		s.ResultType = "input_required"
	} else if s.State == session.StateOK && s.ResultType == "" {
		s.ResultType = "complete"
	}
	if o.flags&flagRPCError != 0 && s.RPCError == nil {
		s.RPCError = &journal.RPCError{} // the error's words are on its response frame
	}
	s.Late = int(o.late)
	switch o.failed {
	case 1:
		if s.Failure == nil {
			s.Failure = &session.Failure{Reason: "failed"}
		}
	case 2:
		if s.Failure == nil || !errors.Is(s.Failure, session.ErrClosed) {
			s.Failure = &session.Failure{Reason: "the transport closed before answering", Kind: session.ErrClosed}
		}
	}
}

// detachedAs gives a call the first pass saw detached its handle and why
// it ended, from the start.
func (c *correlator) detachedAs(ordinal int, s *session.CallSnapshot) {
	if s.State != session.StateDetached {
		return
	}
	if h, ok := c.handles[ordinal]; ok {
		s.Handle, s.Failure = h, session.DetachedFailure(h)
	}
}

// keyOf is the canonical text of a JSON-RPC id, as session keys calls.
func keyOf(id json.RawMessage) string {
	e := journal.Envelope{ID: id}
	return e.Key()
}
