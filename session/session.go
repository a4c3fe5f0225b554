// Package session is mcpscope's protocol engine: it journals every frame a
// transport delivers, decodes JSON-RPC leniently, correlates responses and
// progress with calls, answers server requests through a Responder, and
// guarantees that every call ends.
package session

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"mcpscope/framestore"
	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/statestore"
	"mcpscope/transport"
)

// Options configure a session. Zero values are sensible.
type Options struct {
	ClientInfo protocol.Implementation
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
	ServerInfo      protocol.Implementation
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
	calls     callIndex
	order     callOrder
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
	spill     *spill          // where an opened journal's ended calls go out of memory (spill.go; nil: nowhere)
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
		o.ClientInfo = protocol.Implementation{Name: "mcpscope", Version: Version}
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
		calls: newCallIndex(), pending: map[string]*Call{}, byToken: map[string]*Call{},
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
	in.Calls = s.order.len()
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

// Calls returns every call memory holds, in the order made: all of them,
// but for an opened journal's ended tool calls gone out of memory
// (spill.go), which CallAt reads back.
func (s *Session) Calls() []*Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(s.order.all())
}

// Lookup finds a call by its id key.
func (s *Session) Lookup(key string) *Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls.get(key)
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
		s.spill.close() // under s.mu, as every read of it
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
