package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"mcpscope/journal"
	"mcpscope/statestore"
)

// State is where a call is in its life.
type State string

const (
	StatePending   State = "pending"   // sent, nothing heard yet
	StateStreaming State = "streaming" // progress (or other activity) seen
	StateOK        State = "ok"        // a result arrived
	StateError     State = "error"     // a JSON-RPC error, or a synthetic failure
	StateCancelled State = "cancelled" // ended by the user
	StateDetached  State = "detached"  // left running on the server to rejoin later
)

// Ended reports whether the state is final.
func (s State) Ended() bool {
	return s == StateOK || s == StateError || s == StateCancelled || s == StateDetached
}

// Failure is a synthetic error: the call ended without the server's word
// (send failed, process died, stream closed, timeout, cancel).
type Failure struct {
	Reason string
	Cause  error // what went wrong underneath, if anything
	Kind   error // one of the Err* kinds below, for errors.Is; nil = other
}

func (f *Failure) Error() string {
	if f.Cause != nil {
		return f.Reason + ": " + f.Cause.Error()
	}
	return f.Reason
}

func (f *Failure) Unwrap() error { return f.Cause }

// Is matches the failure's kind, so callers choose by errors.Is, never by
// the words of a message.
func (f *Failure) Is(target error) bool {
	return f.Kind != nil && (target == f.Kind || errors.Is(f.Kind, target))
}

// Kinds of failure.
var (
	// ErrTimeout: a call (or a handshake) ran out of time. ErrIdleTimeout
	// and ErrMaxTimeout say which limit; both are ErrTimeout.
	ErrTimeout     = errors.New("timed out")
	ErrIdleTimeout = fmt.Errorf("idle limit: %w", ErrTimeout)
	ErrMaxTimeout  = fmt.Errorf("hard limit: %w", ErrTimeout)
	// ErrCancelled: the user cancelled the call.
	ErrCancelled = errors.New("cancelled")
	// ErrClosed: the session or its transport ended before an answer came.
	ErrClosed = errors.New("closed")
	// ErrTaskEnded: a task the call followed ended failed or cancelled (the
	// server's word, not a transport failure).
	ErrTaskEnded = errors.New("the task did not complete")
	// ErrSend: the transport would not take the request (a stdio server
	// that exited, an HTTP request that failed before any answer).
	ErrSend = errors.New("not sent")
	// ErrReissued: the response stream broke and the request went out
	// again with a new id (the call's Next); waiting on it follows on.
	ErrReissued = errors.New("re-issued")
	// ErrRoundLimit: the server kept asking for input (MRTR) past MaxRounds;
	// the server's doing, not the transport's.
	ErrRoundLimit = errors.New("too many input_required rounds")
)

// callProgress is Progress as a call holds it: times as unix nanoseconds
// and the count beside it in the Call, behind a pointer that stays nil
// until the first progress (a journal read back holds a Call for every
// call, most without progress: 48 bytes less each, a size class down).
type callProgress struct {
	value, total, firstValue float64
	message                  string
	firstAt, lastAt          int64
}

// progressLocked is the call's Progress.
func (c *Call) progressLocked() statestore.Progress {
	if c.progress == nil {
		return statestore.Progress{Updates: int(c.updates)}
	}
	p := c.progress
	return statestore.Progress{Value: p.value, Total: p.total, Message: p.message, Updates: int(c.updates), FirstValue: p.firstValue,
		FirstAt: wallTime(p.firstAt), LastAt: wallTime(p.lastAt)}
}

// setProgressLocked sets the call's progress to p.
func (c *Call) setProgressLocked(p statestore.Progress) {
	cp := callProgress{value: p.Value, total: p.Total, message: p.Message, firstValue: p.FirstValue,
		firstAt: wallNano(p.FirstAt), lastAt: wallNano(p.LastAt)}
	switch {
	case c.progress != nil:
		*c.progress = cp
	case cp != callProgress{}:
		c.progress = &cp
	}
	c.updates = int32(min(p.Updates, math.MaxInt32))
}

// wallNano is t as a call holds it: unix nanoseconds, 0 for the zero time
// (the monotonic reading goes: a call's times are shown and compared as
// wall clock times).
func wallNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// wallTime is wallNano's time back.
func wallTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// CallOptions tune one call.
type CallOptions struct {
	// Timeout ends the call when nothing is heard for this long; progress
	// resets it. 0 = the session default, <0 = none.
	Timeout time.Duration
	// MaxTimeout ends the call after this long whatever arrives. 0 = the
	// session default, <0 = none.
	MaxTimeout time.Duration
	// NoProgressToken leaves params._meta.progressToken out.
	NoProgressToken bool
	// Headers are extra per-request transport headers.
	Headers map[string]string

	modernVersion string        // send stateless _meta even before the era is known (the probe)
	probe         bool          // the era probe: an error answer is the era's answer, not a failure
	asTask        bool          // CallAsTask: the call asked for a task (rejoined by its task id, DetachWhenRejoinable)
	reissueOf     string        // key of the call this one sends again (2026-07-28, broken stream)
	reissues      int           // how many times the request was sent again
	round         int           // MRTR round of this request (0 = first)
	parent        string        // key of the round this one retries
	listen        *ListenFilter // subscriptions/listen: set before the request is sent (a refusal may come back first)
	listenAttempt int           // its re-listen number (0 = the first listen)
}

// Call is one client→server request. Read it through Snapshot or Wait;
// fields change under the session's lock.
type Call struct {
	s      *Session
	Key    string          // canonical id text
	ID     json.RawMessage // the id as sent
	Method string
	Name   string // tool, prompt or resource the call is about
	Token  string // progress token key, "" if none
	Seq    uint64 // seq of the request frame, once sent

	started   int64          // unix nanoseconds (wallNano): a journal read back holds a Call for every call
	ended     int64          // 0 until it ends
	progress  *callProgress  // nil: no progress yet
	updates   int32          // progress notifications counted (Progress.Updates)
	late      int32          // responses that came after the call ended
	held      *callHeld      // its params and result, when it holds them (nil: neither)
	givenUp   bool           // a timeout or cancel is under way: an answer now is late
	isError   bool           // a tool result with isError: true, read once when it arrived
	adopted   bool           // made from a request frame another client sent (a journal read back, a proxy followed)
	paramsOut bool           // params left in the journal, in the request's frame (an opened journal's tools/call)
	followed  bool           // rejoined: sent by another process; giving up on it only stops following (quiet.go)
	persisted bool           // written at least once
	claiming  bool           // the owner's lease is being taken (persistMu)
	markOff   bool           // the store refused a Mark: records only (persistMu)
	rt        resultTypeCode // the result's resultType, read once (see resultType)
	code      stateCode      // its State: read it through st, write it through setState
	// (the bools, rt and code sit together: a session holds a Call for
	// every call, and padding after each would cost a size class.)
	resultSeq uint64        // the result was left in the journal, in this frame (over MaxHeldFrame, or an opened journal's tool result)
	respSeq   uint64        // the first response's frame (0: none yet)
	done      chan struct{} // made by Done when first asked for (nil until then)

	// ex holds what most calls never set (a journal read back has a Call
	// for every call it holds): read it through x, write it through xw.
	ex atomic.Pointer[callExtra]
}

// stateCode is a State as a call holds it, a byte beside its flags; the
// zero code is StatePending.
type stateCode uint8

const (
	codePending stateCode = iota
	codeStreaming
	codeOK
	codeError
	codeCancelled
	codeDetached
)

// stateNames are the States by their codes.
var stateNames = [...]State{codePending: StatePending, codeStreaming: StateStreaming, codeOK: StateOK, codeError: StateError,
	codeCancelled: StateCancelled, codeDetached: StateDetached}

// st is the call's State.
func (c *Call) st() State { return stateNames[c.code] }

// setState sets the call's State. Only the States above reach it; were
// another to, the call ends in error rather than the inspector.
func (c *Call) setState(st State) {
	switch st {
	case StatePending:
		c.code = codePending
	case StateStreaming:
		c.code = codeStreaming
	case StateOK:
		c.code = codeOK
	case StateCancelled:
		c.code = codeCancelled
	case StateDetached:
		c.code = codeDetached
	default:
		c.code = codeError
	}
}

// callHeld is what a call holds of its request and its result. An opened
// journal's tool call (most of its calls) holds neither: both stay in the
// journal and are read back, and the call keeps no room for them.
type callHeld struct{ params, result json.RawMessage }

// params is the params the call holds (nil when paramsOut).
func (c *Call) params() json.RawMessage {
	if c.held == nil {
		return nil
	}
	return c.held.params
}

// result is the result the call holds (nil when it was left in the
// journal, resultSeq, or it has none).
func (c *Call) result() json.RawMessage {
	if c.held == nil {
		return nil
	}
	return c.held.result
}

// setParams and setResult store what the call holds, making room only
// for something to hold.
func (c *Call) setParams(p json.RawMessage) {
	if h := c.heldFor(p); h != nil {
		h.params = p
	}
}

func (c *Call) setResult(r json.RawMessage) {
	if h := c.heldFor(r); h != nil {
		h.result = r
	}
}

// heldFor is where v goes: c.held, made now when v is something to hold
// (nil: v is nil and there is nothing to clear).
func (c *Call) heldFor(v json.RawMessage) *callHeld {
	if c.held == nil && v != nil {
		c.held = &callHeld{}
	}
	return c.held
}

// callExtra is the part of a Call that calls made here, and the few
// adopted ones that are re-issued, linked, probe or ended in an error, need: an adopted call
// (a journal read back holds one for every call) has none until written.
type callExtra struct {
	opts       CallOptions // as given, for MRTR retries
	round      int         // MRTR round (0 = the original request)
	parent     string      // key of the input_required round this retries
	unmatched  string      // an id a response came with that was this call's id in another JSON type
	idleFor    time.Duration
	hardAt     time.Time     // when the hard limit fires
	hardLeft   time.Duration // while the session is held: what was left of it
	ack        json.RawMessage
	reissueWhy string // adopted: why its response stream ended, while a re-issue may follow
	via        string // adopted: whose request it was (transport.Meta.Via, in a proxy's journal)

	rpcErr       *journal.RPCError // the server's error, when it answered with one
	failure      *Failure          // a synthetic failure (no answer, or refused here)
	resultTypeAs string            // a resultType other than the ones rt names (rtOther)

	sessionID     string // the MCP session the call lives in, when not the transport's (a foreign rejoin)
	idle          *time.Timer
	hard          *time.Timer
	next          *Call         // MRTR: the retry of this input_required round
	chainErr      *Failure      // MRTR: why no retry follows
	chain         chan struct{} // closed when next or chainErr is set
	taskID        string        // a task this call created (2025-11-25 tasks or the tasks extension)
	listen        *ListenFilter // subscriptions/listen: the filter, for re-listening
	listenAttempt int
	relisten      chan struct{}     // made when a re-listen is scheduled, closed once it is made (or will not be)
	wireKey       string            // the key of the id the request went out with, when a proxy gave it another
	rejoinedBy    *statestore.Owner // detached here, then rejoined by this process (elsewhere.go)
	endedAway     string            // detached here, finished elsewhere: why it follows the server's replay (elsewhere.go)

	handle       string           // StateStore record, once persisted
	persistTimer *time.Timer      // pending debounced write
	claim        *statestore.Held // this process's lease on the record (persistMu)
	recordGone   bool             // the record was deleted under the claim before the result counted (persistMu)
	inDoubt      string           // the step whose mark was sent as the store stopped answering, then the lease was lost (s.mu)
	persistMu    sync.Mutex       // orders state-file writes with the final delete (only calls that persist, which have a callExtra)
}

// resultTypeCode is a call's resultType in one byte: the values the
// protocol names, or rtOther with the text in callExtra.
type resultTypeCode uint8

const (
	rtUnknown resultTypeCode = iota // not read yet
	rtComplete
	rtInputRequired
	rtTask
	rtOther // callExtra.resultTypeAs
)

// resultType is the call's resultType, "" until known (s.mu).
func (c *Call) resultType() string {
	switch c.rt {
	case rtComplete:
		return "complete"
	case rtInputRequired:
		return "input_required"
	case rtTask:
		return "task"
	case rtOther:
		return c.x().resultTypeAs
	}
	return ""
}

// setResultType sets the call's resultType (s.mu).
func (c *Call) setResultType(rt string) {
	switch rt {
	case "":
		c.rt = rtUnknown
	case "complete":
		c.rt = rtComplete
	case "input_required":
		c.rt = rtInputRequired
	case "task":
		c.rt = rtTask
	default:
		c.rt = rtOther
		c.xw().resultTypeAs = rt
		return
	}
	if c.rt != rtOther && c.x().resultTypeAs != "" {
		c.xw().resultTypeAs = ""
	}
}

// setErrors sets the server's error and the synthetic failure (s.mu):
// through callExtra, which most calls (a journal's answered ones) never
// need, unless one is set or one is to be cleared.
func (c *Call) setErrors(rpcErr *journal.RPCError, f *Failure) {
	if rpcErr == nil && f == nil && c.ex.Load() == nil {
		return
	}
	e := c.xw()
	e.rpcErr, e.failure = rpcErr, f
}

// noExtra is what x gives for a call without a callExtra: never written
// (TestNoExtraStaysZero runs the session's tests and checks).
var noExtra callExtra

// x is the call's callExtra, for reading only: a field is written through
// xw. (Not a copy: a copy reads every field, which races with the fields
// persistMu guards.)
func (c *Call) x() *callExtra {
	if e := c.ex.Load(); e != nil {
		return e
	}
	return &noExtra
}

// xw is the call's callExtra for writing, made on first use. The pointer is
// atomic and set once by compare-and-swap: x reads it without the session's
// lock (the fields persistMu guards are read under persistMu alone), and a
// call's extra may first be needed on such a path.
func (c *Call) xw() *callExtra {
	if e := c.ex.Load(); e != nil {
		return e
	}
	c.ex.CompareAndSwap(nil, &callExtra{})
	return c.ex.Load()
}

// CallSnapshot is a consistent copy of a call's state.
type CallSnapshot struct {
	Key, Method, Name string
	ID                json.RawMessage
	Params            json.RawMessage
	State             State
	Started, Ended    time.Time
	Progress          statestore.Progress
	HasProgress       bool
	Result            json.RawMessage
	RPCError          *journal.RPCError
	Failure           *Failure
	Late              int
	Round             int
	Parent            string
	Next              string // key of the retry round, if any
	ChainErr          *Failure
	ResultType        string // "complete", "input_required", "task", … ("" while running)
	Probe             bool   // the era probe (server/discover): an error here says "legacy", it is no failure
	ReissueOf         string // the call this one sends again after its stream broke ("" if none)
	IsError           bool   // a tools/call result with isError: true (the call worked, the tool failed)
	TaskID            string
	Ack               json.RawMessage // subscriptions/listen: the acknowledged filter
	// ResultInJournal: the result is over MaxHeldFrame, so Result is nil
	// here and Call.Result (and Wait) read it back from the journal.
	ResultInJournal bool
	// ParamsInJournal: an opened journal's tool call, whose params stay in
	// its request's frame: Params is nil here and Call.Params reads them
	// back.
	ParamsInJournal bool
	Seq             uint64 // the request's frame, once on the wire (0 before)
	RespSeq         uint64 // the first response's frame, late or not (0: none yet)
	// Adopted: another client sent the request (a journal read back, a
	// host's call seen through mcpscope proxy); this session only watches
	// it. Via says whose it was in a proxy's journal (host, viewer…).
	Adopted bool
	Via     string
	// WireKey is the key of the id the request carried on the wire and in
	// the journal, when that is not Key: mcpscope attach's own calls go out
	// through the proxy under an id of the proxy's ("mcpscope-<hex>-1");
	// "" until the proxy says which, and for every other call.
	WireKey string
	// Handle names a detached call's record (mcpscope rejoin HANDLE): set
	// when State is StateDetached, live or read back from the journal's
	// note (DetachedNote); "" for every other call.
	Handle string
}

// Duration is how long the call ran (so far, when still running).
func (c CallSnapshot) Duration(now time.Time) time.Duration {
	if c.Ended.IsZero() {
		return now.Sub(c.Started)
	}
	return c.Ended.Sub(c.Started)
}

// Err is the call's error: a *RPCError from the server or a *Failure.
func (c CallSnapshot) Err() error {
	if c.RPCError != nil {
		return c.RPCError
	}
	if c.Failure != nil {
		return c.Failure
	}
	return nil
}

// Snapshot copies the call's state.
func (c *Call) Snapshot() CallSnapshot {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.snapshotLocked()
}

// Params is the request's params as sent: held, or read back from the
// request's frame when the call was left there (an opened journal's
// tools/call: a journal read back holds a call for every call). nil
// when the frame cannot be read back.
func (c *Call) Params() json.RawMessage {
	c.s.mu.Lock()
	p, out := c.params(), c.paramsOut
	c.s.mu.Unlock()
	if out {
		return c.s.paramsBack(c)
	}
	return p
}

// paramsLocked is Params under s.mu (the store never takes it).
func (s *Session) paramsLocked(c *Call) json.RawMessage {
	if c.paramsOut {
		return s.paramsBack(c)
	}
	return c.params()
}

// paramsBack reads c's params back from its request frame. Its Key and
// Seq never change once a call is adopted, so no lock is needed.
func (s *Session) paramsBack(c *Call) json.RawMessage {
	if it := s.store.Get(c.Seq); it != nil && !it.Cut {
		if e := envelopeFor(it.Env, it.Batch, c.Key, true); e != nil {
			return e.Params
		}
		return nil
	}
	e, _ := s.envelopeBack(c.Seq, c.Key, true)
	if e == nil {
		return nil
	}
	return e.Params
}

// envelopeBack reads frame seq back from the journal, whole, and finds
// the message of call key in it: its request, or its response.
func (s *Session) envelopeBack(seq uint64, key string, request bool) (*journal.Envelope, error) {
	data, err := s.store.Bytes(seq)
	if err != nil {
		return nil, err
	}
	env, batch, _ := journal.DecodeClass(data)
	return envelopeFor(env, batch, key, request), nil
}

// envelopeFor is the message of call key in a frame's envelope or batch:
// its request (request) or its response; nil if the frame has none.
func envelopeFor(env *journal.Envelope, batch []*journal.Envelope, key string, request bool) *journal.Envelope {
	if env != nil {
		batch = []*journal.Envelope{env}
	}
	for _, e := range batch {
		if e.Key() == key && (e.Method != "") == request {
			return e
		}
	}
	return nil
}

func (c *Call) snapshotLocked() CallSnapshot {
	sn := CallSnapshot{
		Key: c.Key, Method: c.Method, Name: c.Name, ID: c.ID, Params: c.params(),
		State: c.st(), Started: wallTime(c.started), Ended: wallTime(c.ended),
		Progress: c.progressLocked(), HasProgress: c.updates > 0,
		Result: c.result(), RPCError: c.x().rpcErr, Failure: c.x().failure, Late: int(c.late),
		Round: c.x().round, Parent: c.x().parent, ChainErr: c.x().chainErr, TaskID: c.x().taskID, Ack: c.x().ack, Probe: c.x().opts.probe,
		ReissueOf: c.x().opts.reissueOf, ResultInJournal: c.resultSeq != 0, ParamsInJournal: c.paramsOut, Seq: c.Seq, RespSeq: c.respSeq,
		Adopted: c.adopted, Via: c.x().via, WireKey: c.x().wireKey,
	}
	if c.x().next != nil {
		sn.Next = c.x().next.Key
	}
	if c.st() == StateDetached {
		sn.Handle = c.x().handle
	}
	if c.st() == StateOK {
		if c.rt == rtUnknown {
			c.setResultType(journal.ResultType(c.result())) // ended without an envelope (a task's result)
		}
		sn.ResultType = c.resultType()
		sn.IsError = c.isError
	}
	return sn
}

// Session is the session the call belongs to.
func (c *Call) Session() *Session { return c.s }

// Done is closed when the call ends.
func (c *Call) Done() <-chan struct{} {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if c.done == nil {
		if c.st().Ended() {
			return closedDone
		}
		// Made when first asked for: most calls (all but a few of a
		// journal read back) end before anyone waits on them.
		c.done = make(chan struct{})
	}
	return c.done
}

// closedDone is Done of a call that ended before anyone asked.
var closedDone = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// Wait blocks until the call ends or ctx is done, and returns the result or
// the error (*RPCError from the server, *Failure otherwise). A ctx that ends
// first does not end the call.
func (c *Call) Wait(ctx context.Context) (json.RawMessage, error) {
	select {
	case <-c.Done():
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	snap := c.Snapshot()
	if err := snap.Err(); err != nil {
		return snap.Result, err
	}
	return c.Result()
}

// Result is the call's result: held in memory, or read back from the
// journal when it was over MaxHeldFrame (ResultInJournal). nil while the
// call has none.
func (c *Call) Result() (json.RawMessage, error) {
	c.s.mu.Lock()
	res, seq, key := c.result(), c.resultSeq, c.Key
	c.s.mu.Unlock()
	if res != nil || seq == 0 {
		return res, nil
	}
	env, err := c.s.envelopeBack(seq, key, false)
	if err != nil {
		return nil, fmt.Errorf("the result of call %s is in the journal (frame #%d) and could not be read back: %w", key, seq, err)
	}
	if env == nil {
		return nil, fmt.Errorf("frame #%d of the journal does not hold the result of call %s", seq, key)
	}
	return env.Result, nil
}

// ToolError is a tools/call whose result says isError: true. The call
// worked; the tool reports that it failed.
type ToolError struct {
	Name string // the tool
	Text string // its first content text, on one short line ("" if none)
}

func (e *ToolError) Error() string {
	msg := "tool " + e.Name + " reported an error (isError: true)"
	if e.Text != "" {
		msg += ": " + e.Text
	}
	return msg
}

// pauseLocked stops the call's clocks while the session waits for a person.
func (c *Call) pauseLocked(now time.Time) {
	if c.x().idle != nil {
		c.x().idle.Stop()
	}
	if c.x().hard != nil {
		c.x().hard.Stop()
		c.xw().hardLeft = c.x().hardAt.Sub(now)
	}
}

// resumeLocked starts them again: a fresh idle window, and what was left of
// the hard limit.
func (c *Call) resumeLocked(now time.Time) {
	if c.x().idle != nil {
		c.x().idle.Reset(c.x().idleFor)
	}
	if c.x().hard != nil {
		left := max(c.x().hardLeft, 0)
		c.xw().hardAt = now.Add(left)
		c.x().hard.Reset(left)
	}
}

// StateWord is the one word a call's state is known by, in the TUI's rows,
// in journal summaries and in the filter language's ~s: a call cancelled
// stays cancelled (a late answer to the cancel is in its detail), then a
// late response wins, then a tool's isError, then the era probe's error
// (legacy: it is the era's answer), then a round re-issued after its stream
// broke, then a round that asks for input, then a call lost with its
// transport; otherwise the state itself.
func StateWord(c *CallSnapshot) string {
	switch {
	case c.State == StateCancelled:
		return "cancelled"
	case c.Late > 0:
		return "late"
	case c.IsError:
		return "error"
	case c.Probe && c.State == StateError:
		return "legacy"
	case c.State == StateError && errors.Is(c.Err(), ErrReissued):
		return "reissued" // not a failure: the request lives on as Next
	case c.ResultType == "input_required":
		return "input"
	case c.State == StateError && c.Failure != nil && errors.Is(c.Failure, ErrClosed):
		return "lost"
	}
	return string(c.State)
}
