// Package session is mcpscope's protocol engine: it journals every frame a
// transport delivers, decodes JSON-RPC leniently, correlates responses and
// progress with calls, answers server requests through a Responder, and
// guarantees that every call ends.
package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"mcpscope/framestore"
	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/statestore"
	"mcpscope/transport"
)

// Implementation names a client or server (clientInfo / serverInfo).
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// Options configure a session. Zero values are sensible.
type Options struct {
	ClientInfo Implementation
	// Capabilities the client declares; nil = what the Responder supports.
	Capabilities json.RawMessage
	Responder    Responder
	Journal      *journal.Writer
	// Timeout is the default idle timeout of a call (reset by progress);
	// MaxTimeout the default hard limit. <0 disables.
	Timeout    time.Duration
	MaxTimeout time.Duration
	// NoListen skips the standalone GET stream of the 2025 HTTP handshake
	// (a one-shot command that reads only its own answers).
	NoListen bool
	// StateStore keeps resumable calls outside the process (nil: none);
	// Rejoin says how to reach the server again.
	StateStore statestore.Store
	Rejoin     RejoinInfo
	// WatchDetached is how often the records of calls detached here are
	// looked at, to learn that one was rejoined and finished elsewhere
	// (0: DefaultWatchDetached).
	WatchDetached time.Duration
	// SeqBase numbers frames after it: a session that takes over a journal
	// from another (a restarted server) goes on with its numbering.
	SeqBase uint64
	// Warn, when set, hears at once of what may leave a call waiting: a
	// response no request matches, an error without an id.
	Warn func(string)
	// Now stamps when calls start and when they end without the server's
	// word (nil: time.Now); tests fix it so timings are deterministic.
	// Timers still run on the real clock.
	Now func() time.Time
	// IDPrefix, when set, makes the ids of this session's own requests
	// strings (IDPrefix + n): a session that watches another client's
	// traffic (Follow) keeps its own calls apart from that client's ids.
	IDPrefix string
	// Observe, when set, hears of every frame the session takes from its
	// transport, numbered as journaled and in the journal's order (the
	// live OpenTelemetry exporter). It is called with the session locked:
	// it must return at once.
	Observe func(seq uint64, f transport.Frame)
}

// Defaults for call timeouts.
const (
	DefaultTimeout    = 60 * time.Second
	DefaultMaxTimeout = 30 * time.Minute
)

// Info is what the session knows about the connection.
type Info struct {
	Target          string
	Era             string // "legacy" or "modern"
	EraReason       string // why: the probe's verdict, or that it was pinned
	ProtocolVersion string
	ServerInfo      Implementation
	Capabilities    json.RawMessage
	Instructions    string
	SessionID       string
	LogLevel        string
	Subscriptions   []string
	ListChanged     map[string]int // "tools", "resources", "prompts" → notifications seen
	Notifications   int
	Logs            int
	Pending         int
	Calls           int
	Closed          bool
	CloseReason     string
	JournalPath     string
	JournalErr      string
	// Started is when the session began (a loaded journal: when it was
	// recorded); PID the server's process (stdio), from its spawned event.
	Started time.Time
	PID     int
	// Reconnecting counts the streams waiting for a resume (scheduled or
	// under way): while it is not 0 the connection is being re-established.
	Reconnecting int
	// Unreachable is why the server cannot be used now, "" since it last
	// answered: it could not be reached the last time it was tried (a
	// refused or broken connection, no HTTP answer at all; a server that
	// went away leaves no exit event over HTTP, reach.go), or it forgot
	// our session and no new one could be started (expiry.go).
	Unreachable string
	// Reinitializing is true while a new MCP session is being started
	// because the server forgot ours (expiry.go).
	Reinitializing bool
	// Warnings counts what a person was told at once (Options.Warn: the
	// state store unreachable, a lease lost…); Warning is the newest, for
	// a screen that cannot print to stderr (the inspector's footer).
	Warnings int
	Warning  string
	// StoreTrouble is what the state store last failed at, until a record
	// write succeeds again ("" while it answers).
	StoreTrouble string
}

// Session is one connection's engine. All methods are safe for concurrent use
// and none of them waits for the network except Wait-style helpers.
type Session struct {
	t     transport.Transport
	opts  Options
	store *framestore.Store
	ctx   context.Context
	stop  context.CancelFunc

	ingestMu sync.Mutex // frames go from their number to the store in that order (ingestStep)
	// markedSeq is the frame whose progress step the state store took
	// last, under the call's lease: that step is this holder's to show,
	// even when the lease was lost while its mark was under way (a
	// holder paused just after the mark), since the next holder resumes
	// after it.
	markedSeq uint64
	mu        sync.Mutex
	seq       uint64
	nextID    int64
	calls     map[string]*Call
	order     []*Call
	pending   map[string]*Call
	byToken   map[string]*Call
	shared    stringPool // names and progress messages calls repeat (strings.go)
	serverReq map[string]context.CancelFunc
	info      Info
	subs      map[string]bool
	journal   *journal.Writer
	file      *os.File        // offline: the journal being read, for reading frames back
	offline   bool            // rebuilt from a journal: requests make their own calls
	adopted   adoptSlab       // where an offline session's calls are allocated (load.go)
	items     framestore.Slab // where ingest's items are allocated
	follows   bool            // fed by a Feed: another process numbers and journals the frames (follow.go)
	// reissueWait are watched calls whose response stream ended in the
	// 2026-07-28 era: the next same request is their re-issue (rounds.go).
	reissueWait []*Call
	loading     loadState

	streams       map[string]*streamState // SSE cursors by logical stream (resume.go)
	expired       map[string]bool         // session ids the server forgot (expiry.go)
	reinits       int
	rejoined      bool                             // this session exists to rejoin a detached call
	taskClaims    map[string]*statestore.Held      // task id → the lease a rejoin of the task holds
	num           int64                            // this session's number in the process (handles)
	sessLeases    map[string]*statestore.Held      // session id → this process's lease on it (detach.go)
	tasks         map[string]*protocol.Task        // tasks seen, by id (tasks.go)
	taskKeys      map[string]map[string]bool       // inputRequests keys claimed for an answer, by task (tasksext.go)
	answerTasks   bool                             // answer input_required tasks as they are seen (tasksext.go)
	toolHeaders   map[string][]protocol.ToolHeader // x-mcp-header annotations by tool
	invalidTools  map[string]string                // tools whose annotations are invalid, and why
	held          bool                             // waiting for a person: clocks stand still (holdLocked)
	holdWake      chan struct{}                    // closed and replaced whenever held changes
	persisting    sync.WaitGroup                   // rejoin-record writes and deletes under way (detach.go)
	storeOps      statestore.Queue                 // task record writes and deletes, in order, off the lock (detach.go)
	elsewhere     map[string]string                // handle → the fallback store that kept its record (putRecord)
	watching      bool                             // watchDetached runs (elsewhere.go)
	toldElsewhere bool                             // a person was told a record went to the fallback store (putRecord)
	toldTrouble   bool                             // a person was told the state store failed (storeTrouble)
	healthOnce    sync.Once                        // the store's health said (storeHealth)
	changed       chan struct{}                    // closed and replaced at every frame taken in (changedLocked)

	outMu   sync.Mutex
	outq    []queued
	outWake chan struct{}
	unsent  int           // messages queued or handed to the transport, not yet done
	flushed chan struct{} // closed when unsent drops to 0 (nil: nobody waits)
}

type queued struct {
	m    transport.Outgoing
	done func(error)
}

// New makes a session over t. Call Start to begin.
func New(t transport.Transport, o Options) *Session {
	if o.ClientInfo.Name == "" {
		o.ClientInfo = Implementation{Name: "mcpscope", Version: Version}
	}
	if o.Responder == nil {
		o.Responder = Headless{}
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxTimeout == 0 {
		o.MaxTimeout = DefaultMaxTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &Session{
		num: sessions.Add(1),
		t:   t, opts: o, store: framestore.New(journalPager(o.Journal), journalIndex(o.Journal)), ctx: ctx, stop: stop,
		calls: map[string]*Call{}, pending: map[string]*Call{}, byToken: map[string]*Call{},
		serverReq: map[string]context.CancelFunc{}, subs: map[string]bool{},
		journal: o.Journal, outWake: make(chan struct{}, 1),
		toolHeaders: map[string][]protocol.ToolHeader{}, invalidTools: map[string]string{}, streams: map[string]*streamState{},
		expired: map[string]bool{}, tasks: map[string]*protocol.Task{}, taskKeys: map[string]map[string]bool{},
		holdWake: make(chan struct{}),
	}
	// Every warning is counted in Info as well, so the inspector shows
	// it (its stderr is the screen); o.Warn still prints it.
	warn := o.Warn
	s.opts.Warn = func(msg string) {
		s.mu.Lock()
		s.info.Warnings++
		s.info.Warning = msg
		s.mu.Unlock()
		if warn != nil {
			warn(msg)
		}
	}
	s.seq = o.SeqBase
	s.info.Era = "legacy"
	s.info.Started = time.Now()
	s.info.ListChanged = map[string]int{}
	if t != nil {
		s.info.Target = t.Describe()
	}
	if o.Journal != nil {
		s.info.JournalPath = o.Journal.Path()
	}
	return s
}

// Version is mcpscope's version, sent as clientInfo.version.
var Version = "0.1.0-dev"

// Store is where frames land for readers.
func (s *Session) Store() *framestore.Store { return s.store }

// Transport is the session's transport.
func (s *Session) Transport() transport.Transport { return s.t }

// Start starts the transport and the sender.
func (s *Session) Start() error {
	if err := s.startTransport(); err != nil {
		return err
	}
	go s.sendLoop()
	go func() {
		select {
		case <-s.t.Done():
			s.failAll("the transport closed (" + s.t.Describe() + ")")
		case <-s.ctx.Done():
		}
	}()
	return nil
}

// Settle waits for the frame being taken in, if any, to reach the store:
// a reader that saw a call end then reads every step it is owed (a step
// whose mark the store took as the lease was lost is applied after).
func (s *Session) Settle() {
	s.ingestMu.Lock()
	defer s.ingestMu.Unlock() // a barrier: the frame in flight finished first
}

// Info returns a copy of what the session knows.
func (s *Session) Info() Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.info
	in.ListChanged = make(map[string]int, len(s.info.ListChanged))
	for k, v := range s.info.ListChanged {
		in.ListChanged[k] = v
	}
	in.Subscriptions = in.Subscriptions[:0:0]
	for u := range s.subs {
		in.Subscriptions = append(in.Subscriptions, u)
	}
	in.Pending = len(s.pending)
	in.Calls = len(s.order)
	for key, st := range s.streams {
		if st.timer == nil && !st.resuming {
			continue
		}
		// A call's stream counts while the call waits for it: a resume
		// armed for a call since cancelled reconnects nothing.
		if k, ok := strings.CutPrefix(key, "post:"); ok {
			if c := s.pending[k]; c == nil || c.givenUp {
				continue
			}
		}
		in.Reconnecting++
	}
	if h, ok := s.t.(transport.SessionHolder); ok {
		in.SessionID = h.SessionID()
	}
	return in
}

// Calls returns every call in the order made.
func (s *Session) Calls() []*Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Call(nil), s.order...)
}

// Lookup finds a call by its id key.
func (s *Session) Lookup(key string) *Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[key]
}

// Call sends a request and returns its handle at once.
func (s *Session) Call(method string, params any) *Call {
	return s.CallWith(method, params, CallOptions{})
}

// CallWith sends a request with options and returns its handle at once.
func (s *Session) CallWith(method string, params any, o CallOptions) *Call {
	s.mu.Lock()
	s.nextID++
	id := s.nextID
	s.mu.Unlock()
	key := strconv.FormatInt(id, 10)
	idJSON := json.RawMessage(key)
	token := "mcpscope-" + key
	if p := s.opts.IDPrefix; p != "" {
		idJSON = json.RawMessage(strconv.Quote(p + key))
		token, key = "mcpscope-"+p+key, journal.IDKey(idJSON)
	}
	c := s.newCall(key, idJSON, method, s.opts.Now())
	c.xw().round, c.xw().parent = o.round, o.parent
	c.xw().listen, c.xw().listenAttempt = o.listen, o.listenAttempt
	c.xw().opts = o
	if o.NoProgressToken {
		token = ""
	}
	s.mu.Lock()
	var meta map[string]any
	if v := o.modernVersion; v != "" || s.info.Era == protocol.EraModern {
		if v == "" {
			v = protocol.ModernVersion
		}
		meta = s.modernMetaLocked(v)
	}
	s.mu.Unlock()
	raw, err := protocol.WithMeta(params, token, meta)
	if err != nil {
		s.register(c, "")
		s.end(c, StateError, nil, nil, &Failure{Reason: "could not encode params for " + method, Cause: err})
		return c
	}
	if token != "" && !protocol.TokenSet(raw, token) {
		token = "" // params were not an object: no place for a token
	}
	c.Params = raw
	c.Name = journal.ParamName(raw)
	msg, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params,omitempty"`
	}{"2.0", idJSON, method, raw})

	if reason := s.invalidToolReason(method, raw, meta != nil); reason != "" {
		s.register(c, "")
		s.end(c, StateError, nil, nil, &Failure{Reason: reason})
		return c
	}
	if !s.register(c, token) {
		return c
	}
	headers := o.Headers
	if meta != nil {
		s.mu.Lock()
		headers = s.modernHeadersLocked(method, raw)
		s.mu.Unlock()
		for k, v := range o.Headers {
			headers[k] = v
		}
	}
	s.armTimers(c, o)
	s.enqueue(transport.Outgoing{Data: msg, Key: key, Method: method, Headers: headers}, func(err error) {
		if err != nil {
			s.sendFailed(c, err)
		}
	})
	return c
}

// register records the call; it fails the call at once when the session is
// already closed and reports false.
func (s *Session) register(c *Call, token string) bool {
	s.mu.Lock()
	s.calls[c.Key] = c
	s.order = append(s.order, c)
	closed, why := s.info.Closed, s.info.CloseReason
	if !closed {
		s.pending[c.Key] = c
		if token != "" {
			c.Token = strconv.Quote(token)
			s.byToken[c.Token] = c
		}
	}
	s.mu.Unlock()
	if closed {
		s.end(c, StateError, nil, nil, &Failure{Reason: "the session is closed: " + why, Kind: ErrClosed})
		return false
	}
	return true
}

func (s *Session) armTimers(c *Call, o CallOptions) {
	idle, hard := o.Timeout, o.MaxTimeout
	if idle == 0 {
		idle = s.opts.Timeout
	}
	if hard == 0 {
		hard = s.opts.MaxTimeout
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if idle > 0 {
		c.xw().idleFor = idle
		c.xw().idle = time.AfterFunc(idle, func() {
			s.timeout(c, ErrIdleTimeout, fmt.Sprintf("no response or progress for %s (idle timeout; progress resets it)", idle))
		})
		if b, ok := s.t.(transport.Backlog); ok && o.probe {
			if _, known := b.Unread(); known {
				c.x().idle.Stop() // the probe's wait starts once the server has read it
				go s.idleFromRead(c, b)
			}
		}
	}
	if hard > 0 {
		c.xw().hardAt = time.Now().Add(hard)
		c.xw().hard = time.AfterFunc(hard, func() {
			s.timeout(c, ErrMaxTimeout, fmt.Sprintf("still running after %s (hard limit)", hard))
		})
	}
	if s.held {
		c.pauseLocked(time.Now())
	}
}

// idleFromRead starts c's idle clock once the server has read c's request
// (the era probe's: a stdio server still starting, as npx fetching its
// package, has not read its stdin yet, and a slow start is no fault). Until
// then the handshake's own limit bounds the wait.
func (s *Session) idleFromRead(c *Call, b transport.Backlog) {
	start := time.Now()
	tick := time.NewTicker(20 * time.Millisecond) // the kernel's pipe count has no event to wait on
	defer tick.Stop()
	for {
		s.mu.Lock()
		closed, answered, sent := s.info.Closed, c.respSeq != 0, c.Seq != 0
		gone := c.state.Ended() && !answered // failed unread (the process died, the send failed)
		s.mu.Unlock()
		if closed || gone {
			return
		}
		n, ok := b.Unread()
		if answered || sent && (!ok || n == 0) { // read (an answer says so too)
			s.mu.Lock()
			if !c.state.Ended() && c.x().idle != nil && !s.held {
				c.x().idle.Reset(c.x().idleFor)
			}
			s.mu.Unlock()
			if waited := time.Since(start); waited >= c.x().idleFor { // it would have timed out
				s.Note(fmt.Sprintf("the server read %s %s after it was sent (it was still starting); the wait for its answer (%s) started then",
					c.Method, waited.Round(100*time.Millisecond), c.x().idleFor))
			}
			return
		}
		select {
		case <-tick.C:
		case <-c.Done():
		}
	}
}

func (s *Session) timeout(c *Call, kind error, why string) {
	if c.followed { // a rejoined call: stop following it, leave it running
		s.stopFollowing(c, &Failure{Reason: "timed out: " + why, Kind: kind})
		return
	}
	if !s.giveUp(c) {
		return
	}
	s.tellServer(c, "timeout")
	s.mu.Lock()
	if c.x().unmatched != "" {
		why += fmt.Sprintf("; meanwhile a response came with the id %s, which matches no request (a server bug?)", c.x().unmatched)
	}
	s.mu.Unlock()
	s.endGivenUp(c, StateError, &Failure{Reason: "timed out: " + why, Kind: kind})
}

// Notify sends a notification. done (may be nil) learns whether it went out.
func (s *Session) Notify(method string, params any, done func(error)) {
	s.notifyIn("", method, params, done)
}

// notifyIn sends a notification in MCP session sid ("" = the transport's).
func (s *Session) notifyIn(sid, method string, params any, done func(error)) {
	var raw json.RawMessage
	if params != nil {
		b, err := protocol.MarshalParams(params)
		if err != nil {
			if done != nil {
				done(err)
			}
			return
		}
		raw = b
	}
	msg, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params,omitempty"`
	}{"2.0", method, raw})
	if done == nil {
		done = func(error) {}
	}
	s.enqueue(transport.Outgoing{Data: msg, Method: method, SessionID: sid}, done)
}

// SendRaw sends bytes exactly as given (the user's own JSON-RPC). When they
// are a request with an id, the id is tracked like any call.
func (s *Session) SendRaw(data []byte) (*Call, error) {
	env, _, class := journal.DecodeClass(data)
	if class == journal.ClassInvalid || env == nil {
		return nil, errors.New("not a JSON-RPC message: expected an object with \"jsonrpc\", \"method\" and, for a request, \"id\"")
	}
	if class != journal.ClassRequest {
		done := make(chan error, 1)
		s.enqueue(transport.Outgoing{Data: data, Method: env.Method}, func(err error) { done <- err })
		return nil, nil
	}
	key := env.Key()
	c := s.newCall(key, env.ID, env.Method, s.opts.Now())
	c.Params, c.Name = env.Params, env.Hints().Name
	s.mu.Lock()
	_, dup := s.calls[key]
	s.mu.Unlock()
	if dup {
		return nil, fmt.Errorf("id %s was already used in this session; pick another id", key)
	}
	token := string(env.Hints().MetaToken)
	if !s.register(c, "") {
		return c, nil
	}
	if token != "" {
		s.mu.Lock()
		c.Token = journal.IDKey(json.RawMessage(token))
		s.byToken[c.Token] = c
		s.mu.Unlock()
	}
	s.armTimers(c, CallOptions{})
	s.enqueue(transport.Outgoing{Data: data, Key: key, Method: env.Method}, func(err error) {
		if err != nil {
			s.sendFailed(c, err)
		}
	})
	return c, nil
}

func (s *Session) newCall(key string, id json.RawMessage, method string, at time.Time) *Call {
	c := s.bareCall(key, id, method, at)
	c.ex.Store(&callExtra{})
	return c
}

// bareCall is a call without its callExtra, which xw makes on first
// write: an adopted call's (see adoptLocked).
func (s *Session) bareCall(key string, id json.RawMessage, method string, at time.Time) *Call {
	return &Call{s: s, Key: key, ID: id, Method: method, state: StatePending, started: wallNano(at)}
}

// Replay sends a past call again with a new id and the same params (its old
// progress token replaced by a fresh one).
func (s *Session) Replay(c *Call, params json.RawMessage) *Call {
	if params == nil {
		params = c.Params
	}
	return s.Call(c.Method, protocol.StripMeta(params))
}

// Cancel ends a running call: notifications/cancelled goes to the server and
// the request's own HTTP stream is closed (some servers never answer a
// cancelled request). A response that still arrives is kept, flagged late.
func (s *Session) Cancel(c *Call, reason string) error {
	if c.Method == "initialize" {
		return errors.New("initialize cannot be cancelled (the protocol forbids it); close the session instead")
	}
	if !s.giveUp(c) {
		return fmt.Errorf("call %s (%s) already ended", c.Key, c.Method)
	}
	if reason == "" {
		reason = "cancelled by the user in mcpscope"
	}
	s.tellServer(c, reason)
	s.endGivenUp(c, StateCancelled, &Failure{Reason: "cancelled: " + reason, Kind: ErrCancelled})
	return nil
}

// giveUp claims a live call for a timeout or a cancel, once. From here an
// answer is late: servers answer a cancelled request at once (the Go SDK
// with "context canceled"), sometimes before the call has ended here.
func (s *Session) giveUp(c *Call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.state.Ended() || c.givenUp {
		return false
	}
	c.givenUp = true
	return true
}

// endGivenUp ends a call giveUp claimed: while a give-up is under way,
// nothing else (a late answer, the stream it closed) ends the call.
func (s *Session) endGivenUp(c *Call, st State, f *Failure) {
	s.mu.Lock()
	c.givenUp = false
	ok := s.endLocked(c, st, nil, nil, f, s.opts.Now())
	s.mu.Unlock()
	if ok {
		s.store.Notify()
	}
}

// tellServer lets the server know a call is given up: stateless HTTP
// (2026-07-28) by closing the request's response and nothing else;
// everywhere else notifications/cancelled, and the request's own HTTP
// stream is closed too (some servers never answer a cancelled request).
func (s *Session) tellServer(c *Call, reason string) {
	if !(s.Era() == protocol.EraModern && s.isHTTP()) {
		s.sendCancelled(c, reason)
	}
	if h, ok := s.t.(transport.StreamCloser); ok {
		h.CloseStream(c.Key)
	}
}

func (s *Session) sendCancelled(c *Call, reason string) {
	s.notifyIn(c.x().sessionID, "notifications/cancelled", map[string]any{"requestId": c.ID, "reason": reason}, nil)
}

// end moves a call to a final state once; later calls are no-ops.
func (s *Session) end(c *Call, st State, result json.RawMessage, rpcErr *journal.RPCError, f *Failure) {
	s.mu.Lock()
	ok := s.endLocked(c, st, result, rpcErr, f, s.opts.Now())
	s.mu.Unlock()
	if ok {
		s.store.Notify()
	}
}

func (s *Session) endLocked(c *Call, st State, result json.RawMessage, rpcErr *journal.RPCError, f *Failure, at time.Time) bool {
	if c.state.Ended() || c.givenUp {
		return false
	}
	c.state, c.result, c.ended = st, result, wallNano(at)
	c.setErrors(rpcErr, f)
	if c.x().idle != nil {
		c.x().idle.Stop()
		c.xw().idle = nil
	}
	if c.x().hard != nil {
		c.x().hard.Stop()
		c.xw().hard = nil
	}
	delete(s.pending, c.Key)
	s.forgetLocked(c)
	// The token stays mapped: progress after the end is still attributed
	// (and flagged) rather than shown as unknown.
	if c.done != nil {
		close(c.done)
	}
	return true
}

func (s *Session) fail(c *Call, reason string, cause error) {
	s.end(c, StateError, nil, nil, &Failure{Reason: reason, Cause: cause})
}

// failAll ends every pending call with the same synthetic error.
func (s *Session) failAll(reason string) {
	s.mu.Lock()
	now := s.opts.Now()
	n := 0
	for _, c := range s.pending {
		if s.endLocked(c, StateError, nil, nil, &Failure{Reason: reason, Kind: ErrClosed}, now) {
			n++
		}
	}
	s.mu.Unlock()
	if n > 0 {
		s.store.Notify()
	}
}

// Close ends the session: the transport is closed (stdio shutdown ladder,
// HTTP DELETE), every pending call ends, the journal is closed.
func (s *Session) Close() error { return s.CloseBy(time.Time{}) }

// CloseBy is Close when the user's limit ends at deadline: what waits on
// the server (queued messages, an HTTP DELETE) waits no later than that,
// so a close after a timeout adds no network wait; the journal is still
// written whole. A zero deadline is Close's own bounds.
func (s *Session) CloseBy(deadline time.Time) error {
	s.mu.Lock()
	if s.info.Closed {
		s.mu.Unlock()
		return nil
	}
	if s.t == nil { // offline (Load): only the file to let go of
		s.info.Closed = true
		f := s.file
		s.mu.Unlock()
		s.stop()
		s.store.Close()
		if f != nil {
			return f.Close()
		}
		return nil
	}
	s.mu.Unlock()
	if s.Detached() > 0 || s.sessionInUseElsewhere() {
		if h, ok := s.t.(transport.SessionHolder); ok {
			h.KeepSession()
		}
	}
	// What is queued goes out before the transport closes: a cancel of a
	// call that timed out or was interrupted is what the server must hear.
	s.flush(deadline)
	var err error
	if dc, ok := s.t.(transport.DeadlineCloser); ok && !deadline.IsZero() {
		err = dc.CloseBy(deadline)
	} else {
		err = s.t.Close()
	}
	s.mu.Lock()
	s.info.Closed = true
	if s.info.CloseReason == "" {
		s.info.CloseReason = "closed by mcpscope"
	}
	s.mu.Unlock()
	s.failAll("the session was closed before a response arrived")
	// The records of calls that ended are deleted, and writes under way
	// finish, before Close returns: a process that exits next must leave
	// no half-written file and no record of a call that is over.
	s.persisting.Wait()
	s.releaseSessionLeases()
	s.stop()
	s.mu.Lock()
	j, f := s.journal, s.file
	s.journal = nil
	s.mu.Unlock()
	if j != nil {
		j.Close()
	}
	s.store.Close() // after the journal: the index's header names it whole
	if f != nil {
		f.Close() // a Feed's journal, read back (follow.go)
	}
	return err
}

func (s *Session) enqueue(m transport.Outgoing, done func(error)) {
	s.outMu.Lock()
	s.unsent++
	s.outq = append(s.outq, queued{m, s.sentOnce(done)})
	s.outMu.Unlock()
	select {
	case s.outWake <- struct{}{}:
	default:
	}
}

// sentOnce wraps a message's done so the session knows when nothing it
// queued is left unsent.
func (s *Session) sentOnce(done func(error)) func(error) {
	var once sync.Once
	return func(err error) {
		once.Do(func() {
			done(err)
			s.outMu.Lock()
			if s.unsent--; s.unsent == 0 && s.flushed != nil {
				close(s.flushed)
				s.flushed = nil
			}
			s.outMu.Unlock()
		})
	}
}

// FlushWait bounds how long Close waits for queued messages (a
// notifications/cancelled above all) to reach the transport.
const FlushWait = 2 * time.Second

// flush waits until every queued message was handed over and its send
// finished, or FlushWait passed, or deadline (when not zero).
func (s *Session) flush(deadline time.Time) {
	wait := FlushWait
	if !deadline.IsZero() {
		wait = min(wait, time.Until(deadline))
	}
	if wait <= 0 {
		return // the user's limit is over: nothing more waits on the server
	}
	s.outMu.Lock()
	if s.unsent == 0 {
		s.outMu.Unlock()
		return
	}
	if s.flushed == nil {
		s.flushed = make(chan struct{})
	}
	ch := s.flushed
	s.outMu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-s.t.Done(): // nothing more can go out
	}
}

// sendLoop keeps messages in the order they were made: a cancel never
// overtakes its request.
func (s *Session) sendLoop() {
	for {
		s.outMu.Lock()
		q := s.outq
		s.outq = nil
		s.outMu.Unlock()
		for _, m := range q {
			s.t.Send(m.m, m.done)
		}
		if len(q) > 0 {
			continue
		}
		select {
		case <-s.outWake:
		case <-s.ctx.Done():
			s.outMu.Lock()
			q := s.outq
			s.outq = nil
			s.outMu.Unlock()
			for _, m := range q {
				m.done(errors.New("the session is closed"))
			}
			return
		}
	}
}

// Ingest takes one frame from the transport: into the journal, then (a
// progress step of a call kept in the state store) its mark in the store,
// then meaning.
func (s *Session) Ingest(f transport.Frame) {
	it, x := s.items.Item(&f)
	c := s.stepCall(&it.Frame, it.Env)
	free := s.ingestStep(it, journal.LinePos{Off: -1}, true, 0, c)
	if c != nil {
		c.xw().persistMu.Unlock() // held from before the mark until the step counts
	}
	if free && x != nil {
		s.items.Put(x) // the store keeps no window: nothing refers to it now
	}
}

// ingest decodes, journals (when journal is set; an offline session passes
// the frame's place in the file it reads instead), correlates and stores
// one frame. at, when past the last number given, is the frame's number in
// the journal it comes from (0: the next one).
func (s *Session) ingest(f transport.Frame, pos journal.LinePos, toJournal bool, at uint64) {
	it, _ := s.items.Item(&f)
	s.ingestItem(it, pos, toJournal, at)
}

// ingestItem is ingest of a decoded frame. It reports whether the store
// let go of it (see Store.add): then nothing refers to it any more.
func (s *Session) ingestItem(it *framestore.Item, pos journal.LinePos, toJournal bool, at uint64) (free bool) {
	return s.ingestStep(it, pos, toJournal, at, nil)
}

// ingestStep is ingestItem of a frame that may be a progress step of c (a
// call kept in the state store, its persistMu held; nil: none), whose
// mark goes to the store between the journal and the rest (markStep).
// ingestMu keeps frames in one order from their number to the store while
// the mark is written without s.mu (the UI reads on).
func (s *Session) ingestStep(it *framestore.Item, pos journal.LinePos, toJournal bool, at uint64, c *Call) (free bool) {
	f, env, batch, class := &it.Frame, it.Env, it.Batch, it.Class
	var after []func()
	s.ingestMu.Lock()
	s.mu.Lock()
	if at > s.seq {
		s.seq = at - 1
	}
	s.seq++
	it.Seq = s.seq
	var end int64
	if toJournal && s.journal != nil {
		off, n, err := s.journal.AppendFrame(it.Seq, f)
		if err != nil && s.info.JournalErr == "" {
			s.info.JournalErr = err.Error()
		}
		if s.journal.Seekable() { // else nothing can be read back: the frame is held as without a journal
			pos = journal.LinePos{Off: off, N: n}
		}
		end = off + int64(n)
	}
	if toJournal && s.opts.Observe != nil {
		s.opts.Observe(it.Seq, *f)
	}
	var (
		refused string
		lost    *statestore.LeaseLostError
		doubt   bool
	)
	if c != nil {
		if handle, m := s.stepMarkLocked(c, it); handle != "" {
			j := s.journal
			if end <= 0 {
				j = nil // not in the journal: nothing to wait for
			}
			s.mu.Unlock()
			refused, lost, doubt = s.markStep(c, handle, m, j, end)
			s.mu.Lock()
			if lost == nil && refused == "" {
				s.markedSeq = it.Seq
			}
			if doubt {
				c.xw().inDoubt = stepName(m.Progress)
			}
		} else if handle := s.resultDeleteLocked(c, env); handle != "" {
			s.mu.Unlock()
			lost = s.finishFenced(c, handle)
			s.mu.Lock()
		}
	}
	if lost != nil {
		// Journaled, never applied: the process that holds the call now
		// shows it.
		it.Note = "not applied here: " + lost.Error()
		if doubt {
			it.Note += "; " + inDoubtWhy
		}
	}
	s.noteReachLocked(f)
	dup := false
	if f.Dir == transport.In || f.Meta.Event == transport.EvPrime {
		if dup = s.trackEventLocked(&f.Meta, f.Kind == transport.Message); dup {
			it.Note = "duplicate SSE event " + f.Meta.EventID + " (delivered before; not applied again)"
		}
		s.touchQuietLocked(&f.Meta, f.Kind == transport.Message && !dup)
	}
	switch {
	case dup, lost != nil:
	case class == journal.ClassBatch:
		for _, e := range batch {
			after = s.correlate(it, e, after)
		}
	case env != nil:
		after = s.correlate(it, env, after)
	case f.Kind == transport.Message:
		it.Note = "not a JSON-RPC message"
	case f.Kind == transport.Event:
		after = s.onEvent(it, after)
	}
	free = s.store.Add(it, pos) && !s.offline && !s.follows // offline, correlation keeps items (load.go, follow.go)
	if s.changed != nil {
		close(s.changed) // every waiter on changedLocked wakes
		s.changed = nil
	}
	s.mu.Unlock()
	s.ingestMu.Unlock()
	if refused != "" {
		s.Note(refused)
	}
	if lost != nil {
		s.leaseLost(c, lost)
	}
	for _, fn := range after {
		fn()
	}
	return free
}

// journalPager is what the store reads old frames back from: the journal,
// or nothing (none, or one written to a device or FIFO).
func journalPager(j *journal.Writer) framestore.Pager {
	if j == nil || !j.Seekable() {
		return nil
	}
	return j
}

// journalIndex is the index file beside the journal frames are read back
// from (nil: none, and the store keeps its index in memory).
func journalIndex(j *journal.Writer) *journal.Index {
	if j == nil || !j.Seekable() {
		return nil
	}
	return journal.OpenIndex(j.Path())
}

// correlate ties a message to a call and updates state. Called with s.mu held;
// work that may block is returned in after.
func (s *Session) correlate(it *framestore.Item, e *journal.Envelope, after []func()) []func() {
	class := e.Class()
	if it.Frame.Dir == transport.Out {
		switch class {
		case journal.ClassRequest:
			if old := s.calls[e.Key()]; s.offline && (old == nil || old.Seq != 0 && old.state.Ended()) {
				// A new call, or a new one under an id whose call ended (a
				// fallback session after its failed attempt in one journal).
				s.adoptLocked(e, it)
			}
			if c := s.calls[e.Key()]; c != nil {
				it.CallKey = c.Key
				if c.Seq == 0 {
					c.Seq = it.Seq
					s.wireTokenLocked(c, e) // sent under another id and token (follow.go)
				}
			}
		case journal.ClassNotification:
			if e.Method == "notifications/cancelled" {
				it.CallKey = journal.IDKey(e.Hints().RequestID)
				if s.offline {
					s.clientCancelledLocked(it, e) // load.go
				}
			}
		}
		return after
	}
	switch class {
	case journal.ClassResult, journal.ClassError:
		key := e.Key()
		refusal := false
		if k, ok := RefusalOf(&it.Frame.Meta, e); ok && s.calls[k] != nil && s.calls[k].x().opts.probe {
			key, refusal = k, true // the era probe's HTTP error answer: the probe's result
			it.Note = "the era probe's refusal: the server speaks the initialize era"
		}
		if key == "" {
			it.Note = "error without an id (the server could not read a request)"
			return s.warnLocked(it.Note, after)
		}
		c := s.calls[key]
		if c == nil && s.probeAnsweredAmissLocked(key, it) != nil {
			return after
		}
		if c == nil {
			it.Note = "response to unknown id " + key
			if twin := s.typedTwinLocked(key); twin != nil {
				twin.xw().unmatched = key
				it.Note += fmt.Sprintf(": call %s waits for the id %s; JSON-RPC ids are typed, so this answers nothing", twin.Key, twin.ID)
			}
			return s.warnLocked(it.Note, after)
		}
		it.CallKey = c.Key
		if c.respSeq == 0 {
			c.respSeq = it.Seq
		}
		if refusal && c.state == StateError && c.x().rpcErr == nil && c.x().failure != nil && c.x().failure.Kind == ErrSend {
			// Read back, the HTTP error event ended the probe first (onEvent);
			// its body is the answer that event stood for.
			c.setErrors(e.Error, nil)
			return after
		}
		if c.state.Ended() || c.givenUp {
			c.late++
			it.Note = "late response: the call had already ended (" + string(c.state) + ")"
			if !c.state.Ended() {
				it.Note = "late response: the call was already given up"
			}
			return after
		}
		if class == journal.ClassError {
			if s.offline && ProxyCancelAnswer(&it.Frame.Meta) {
				s.proxyCancelledLocked(c, it, e) // load.go
				return after
			}
			s.endLocked(c, StateError, nil, e.Error, nil, it.Frame.Time)
		} else if f := invalidResultType(s.info.Era, e.Hints()); f != nil {
			// The frame stays in the store and the journal as it came; the
			// call fails, as the 2026-07-28 spec says of a resultType the
			// client does not recognise.
			it.Note = f.Reason
			s.endLocked(c, StateError, nil, nil, f, it.Frame.Time)
			if !s.offline { // the journal says why the call failed, beside the frame
				why := fmt.Sprintf("%s %s (seq %d) failed: %s; the spec says a client must treat it as invalid", c.Method, c.Key, it.Seq, f.Reason)
				after = append(after, func() { s.Note(why) })
			}
		} else {
			result, rt := e.Result, e.ResultKind()
			// A journal read back holds a call for every call: a tool's
			// result (most of a journal's) stays in the journal too, and
			// Call.Result reads it back. Rounds, tasks and listings keep
			// theirs: the session reads them again.
			leave := s.offline && s.store.Journaled() && c.Method == "tools/call" && rt == "complete" && len(result) > 0
			switch {
			case len(result) > framestore.MaxHeldFrame && s.store.Journaled():
				result = nil // the journal holds it; Call.Result reads it back
				c.resultSeq = it.Seq
			case leave:
				result = nil
			case s.store.Journaled():
				// Its own bytes, so the frame's buffer goes once the window
				// lets go of the frame (a call outlives its frames).
				result = bytes.Clone(result)
			}
			if s.endLocked(c, StateOK, result, nil, nil, it.Frame.Time) && leave {
				c.resultSeq = it.Seq
			}
			c.setResultType(rt)
			c.isError = c.Method == "tools/call" && e.Hints().IsError
			s.noteResultLocked(c, e)
			if !s.offline && c.rt == rtInputRequired {
				res := e.Result
				after = append(after, func() { go s.continueRounds(c, res) })
			}
		}
	case journal.ClassNotification:
		s.info.Notifications++
		after = s.onNotification(it, e, after)
	case journal.ClassRequest:
		req := ServerRequest{ID: e.ID, Key: e.Key(), Method: e.Method, Params: e.Params, Seq: it.Seq}
		if strings.HasPrefix(it.Frame.Meta.Stream, "post:") {
			req.Related = strings.TrimPrefix(it.Frame.Meta.Stream, "post:")
		}
		// A request (sampling, elicitation…) on a call's own POST stream
		// belongs to that call, as its notifications do.
		if key, ok := it.Frame.Meta.PostCall(); ok && s.calls[key] != nil {
			it.CallKey = key
		}
		if s.offline {
			s.serverRequestSeenLocked(it) // the client it was sent to answers it, not this session (follow.go)
			return after
		}
		after = append(after, func() { s.answer(req) })
	default:
		it.Note = "not a JSON-RPC message"
	}
	return after
}

// typedTwinLocked is the pending call whose id has key's value in another
// JSON type (the number 1 and the string "1"), if any.
func (s *Session) typedTwinLocked(key string) *Call {
	if u, err := strconv.Unquote(key); err == nil {
		return s.pending[journal.IDKey(json.RawMessage(u))]
	}
	return s.pending[strconv.Quote(key)]
}

// warnLocked tells a person at once about something that could leave a
// call waiting (Options.Warn), outside the lock.
func (s *Session) warnLocked(msg string, after []func()) []func() {
	if w := s.opts.Warn; w != nil {
		after = append(after, func() { w(msg) })
	}
	return after
}

func (s *Session) onNotification(it *framestore.Item, e *journal.Envelope, after []func()) []func() {
	// Stateless listen streams tag their notifications with the listen id.
	if sub := e.Hints().SubscriptionID; len(sub) > 0 {
		if c := s.calls[journal.IDKey(sub)]; c != nil {
			it.CallKey = c.Key
			if e.Method == "notifications/subscriptions/acknowledged" {
				c.xw().ack = e.Params
				if c.state == StatePending {
					c.state = StateStreaming
				}
			}
		} else {
			it.Note = "notification for unknown subscription " + string(sub)
		}
	}
	// On HTTP, what arrives on a request's own POST stream belongs to it.
	if key, ok := it.Frame.Meta.PostCall(); ok && s.calls[key] != nil && it.CallKey == "" {
		it.CallKey = key
	}
	switch m := e.Method; {
	case m == "notifications/progress":
		p := e.Hints()
		if p.ProgressBad {
			it.Note = "progress notification with unreadable params"
			return after
		}
		c := s.byToken[journal.IDKey(p.Token)]
		if c == nil {
			it.Note = "progress for unknown token " + string(p.Token)
			return after
		}
		it.CallKey = c.Key
		if c.state.Ended() && !(c.state == StateDetached && s.markedSeq == it.Seq) {
			it.Note = "progress after the call ended (" + string(c.state) + ")"
			if c.state == StateCancelled { // what someone debugging the server wants to see
				it.Note = "the server kept working after the cancel"
			}
			return after
		}
		pr := c.progressLocked()
		pr.Step(p.Progress, p.Total, s.shared.get(p.Message), it.Frame.Time)
		c.setProgressLocked(pr)
		if c.state == StatePending {
			c.state = StateStreaming
		}
		if c.x().idle != nil && !s.held {
			c.x().idle.Reset(c.x().idleFor)
		}
	case m == "notifications/message":
		s.info.Logs++
	case m == "notifications/tasks/status", m == "notifications/tasks":
		var t protocol.Task
		if json.Unmarshal(e.Params, &t) == nil {
			s.noteTaskLocked(t, "")
		}
	case strings.HasSuffix(m, "/list_changed"):
		kind := strings.TrimSuffix(strings.TrimPrefix(m, "notifications/"), "/list_changed")
		s.info.ListChanged[kind]++
	case m == "notifications/cancelled":
		if cancel := s.serverReq[journal.IDKey(e.Hints().RequestID)]; cancel != nil {
			after = append(after, cancel)
		}
	}
	return after
}

func (s *Session) onEvent(it *framestore.Item, after []func()) []func() {
	m := it.Frame.Meta
	switch m.Event {
	case transport.EvSpawned:
		s.info.PID = m.PID
	case transport.EvExited:
		why := "the server process exited"
		switch {
		case m.Signal != "":
			why += " (signal " + m.Signal + ")"
		case m.ExitCode != nil:
			why += fmt.Sprintf(" (exit code %d)", *m.ExitCode)
		}
		s.info.CloseReason = why
		if s.offline {
			// A recording: the calls end when the server did, not now.
			s.endUnansweredLocked(why+" before answering", it.Frame.Time)
			break
		}
		after = append(after, func() { s.failAll(why + " before answering") })
	case transport.EvClosed:
		if s.offline {
			s.endUnansweredLocked("the transport closed before answering", it.Frame.Time)
		}
	case transport.EvStreamClosed, transport.EvStreamDropped:
		if s.offline {
			return s.offlineStreamEndLocked(m, it.Frame.Time, after) // rounds.go
		}
		after = s.onStreamEndLocked(m, after)
	case transport.EvNote:
		if s.offline {
			s.offlineEraNoteLocked(m)
		}
	case transport.EvHTTPError:
		// A POST answered with an HTTP error failed its request; live, the
		// send returned the error. Read back, the event ends the call, so
		// that a request numbered the same later (the HTTP+SSE fallback
		// after a failed attempt, in one journal) is a call of its own.
		if key, ok := m.PostCall(); s.offline && ok && m.Status != 0 {
			if c := s.calls[key]; c != nil {
				s.endLocked(c, StateError, nil, nil, &Failure{Reason: fmt.Sprintf("the server answered HTTP %d", m.Status), Kind: ErrSend}, it.Frame.Time)
			}
		}
	case transport.EvAuthWait, transport.EvAuthDone:
		s.holdLocked(m.Event == transport.EvAuthWait)
	}
	return after
}

// holdLocked stops (or starts again) the clocks of every pending call and
// of Within while the connection waits for a person (a browser login): a
// person's pace is not the server's.
func (s *Session) holdLocked(on bool) {
	if on == s.held {
		return
	}
	s.held = on
	now := time.Now()
	for _, c := range s.pending {
		if on {
			c.pauseLocked(now)
		} else {
			c.resumeLocked(now)
		}
	}
	close(s.holdWake)
	s.holdWake = make(chan struct{})
}

// Within returns a context that ends after d of the session's own time:
// time spent waiting for a person does not count (see holdLocked).
func (s *Session) Within(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		left := d
		for {
			s.mu.Lock()
			held, wake := s.held, s.holdWake
			s.mu.Unlock()
			if held {
				select {
				case <-wake:
					continue
				case <-cctx.Done():
					return
				}
			}
			began := time.Now()
			t := time.NewTimer(left)
			select {
			case <-t.C:
				cancel()
				return
			case <-wake:
				t.Stop()
				left -= time.Since(began)
			case <-cctx.Done():
				t.Stop()
				return
			}
		}
	}()
	return cctx, cancel
}

// answer runs the responder for a server→client request and sends its reply.
func (s *Session) answer(req ServerRequest) {
	ctx, cancel := context.WithCancel(s.ctx)
	s.mu.Lock()
	s.serverReq[req.Key] = cancel
	s.mu.Unlock()
	go func() {
		defer func() {
			s.mu.Lock()
			delete(s.serverReq, req.Key)
			s.mu.Unlock()
			cancel()
		}()
		result, rerr := s.opts.Responder.Respond(ctx, req)
		if ctx.Err() != nil && s.ctx.Err() == nil {
			return // the server cancelled its request: it wants no answer
		}
		var msg []byte
		if rerr != nil {
			msg, _ = json.Marshal(struct {
				JSONRPC string            `json:"jsonrpc"`
				ID      json.RawMessage   `json:"id"`
				Error   *journal.RPCError `json:"error"`
			}{"2.0", req.ID, rerr})
		} else {
			if result == nil {
				result = json.RawMessage("{}")
			}
			msg, _ = json.Marshal(struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Result  json.RawMessage `json:"result"`
			}{"2.0", req.ID, result})
		}
		s.enqueue(transport.Outgoing{Data: msg}, func(error) {})
	}()
}
