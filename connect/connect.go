// Package connect turns a Spec (what to connect to, and how) into a started
// *session.Session with the handshake done. It is the one entry the TUI, the
// headless commands, the conformance client and the tests share: the era
// probe and its cache, the Streamable HTTP → HTTP+SSE fallback, OAuth,
// answers to server requests and rejoin wiring all live here.
package connect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"mcpscope/framestore"
	"mcpscope/internal/termsafe"
	"mcpscope/journal"
	"mcpscope/oauth"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/transport"
)

// Spec says what to connect to and how. With neither URL nor Command it
// spawns Self (mcpscope's own demo server).
type Spec struct {
	// The target: a Streamable HTTP (or HTTP+SSE) URL, or a command to spawn
	// over stdio.
	URL     string
	Command []string
	Shell   bool     // run Command through sh -c
	Env     []string // KEY=VALUE for the spawned server
	Dir     string   // its working directory
	Self    []string // argv of the demo server, for no target

	// HTTP only.
	Headers       map[string]string
	Bearer        string
	BearerFromEnv bool   // the bearer came from the environment (rejoin records say so)
	Transport     string // "" (Streamable HTTP, else HTTP+SSE), "http" or "sse"
	Auth          Auth
	// AllowRedirects are origins ("https://host[:port]", or "*" for any) a
	// redirect may lead to besides the URL's own. Credentials never go there.
	AllowRedirects []string

	Era        string        // "" or "auto" (probe), "legacy", "modern"
	Timeout    time.Duration // idle limit per call (0 = default, <0 = none); also bounds the handshake
	MaxTimeout time.Duration // hard limit per call
	// Grace is how long a stdio server gets to exit after its stdin closes
	// before the shutdown ladder goes on.
	Grace time.Duration
	// NoListen: no standalone GET stream on a 2025 HTTP server, for a
	// one-shot command that reads only the answers to its own requests.
	NoListen bool

	Journal   string // "" = a fresh file under the state directory
	NoJournal bool
	NoState   bool // no rejoin records, no saved logins (throwaway runs)
	// StateStore keeps detached calls and leases (nil: the file store).
	StateStore statestore.Store

	// Roots answer roots/list (cli: the working directory unless --root);
	// AskRoots has the inspector ask its user instead.
	Roots     []session.Root
	AskRoots  bool
	Answers   map[string]json.RawMessage // answers to input requests and server requests, by key or method
	Responder session.Responder          // nil = Answers, then the headless default
	// Capabilities the client declares; nil = what Answers (or the
	// Responder) can serve. Replay declares what the recording declared.
	Capabilities json.RawMessage
	LogLevel     string

	// firstNote is journaled before anything else the session sees (why
	// this connection is a fallback).
	firstNote string

	// Observe hears of every frame as it is journaled (session.Options):
	// the live OpenTelemetry exporter.
	Observe func(seq uint64, f transport.Frame)

	// Notes is where a person is told what connect does on the way
	// (falling back to HTTP+SSE, a login URL to open); nil = nowhere. The
	// journal gets every note as well.
	Notes io.Writer
}

// Auth configures the OAuth client used when an HTTP server answers 401.
type Auth struct {
	Disabled          bool // never authorize: a 401 is an error
	ClientID          string
	ClientSecret      string
	ClientMetadataURL string
	ClientKeyPEM      string // private_key_jwt signing key
	SigningAlg        string
	Grant             string // "" (pick), authorization_code or client_credentials
	IDToken           string // enterprise-managed authorization (SEP-990)
	IdPTokenEndpoint  string
	IdPClientID       string
	Assertion         string // a JWT presented as a jwt-bearer grant
	Scope             string
	Port              int  // loopback redirect port (0 = any)
	NoBrowser         bool // print the authorization URL instead of opening it
	// Interactive: a person is at a terminal and may take minutes to log
	// in (oauth.LoginTimeout). Otherwise a login is bounded by Timeout.
	Interactive bool
	// Authorizer completes the authorization step; nil = a person in a
	// browser, through a loopback redirect.
	Authorizer oauth.Authorizer
}

// SpecError is a Spec that cannot work as given (the caller's mistake, not
// the server's).
type SpecError struct{ Msg string }

func (e *SpecError) Error() string { return e.Msg }

// DefaultHandshakeTimeout bounds the handshake when the Spec sets no Timeout.
const DefaultHandshakeTimeout = 30 * time.Second

// HandshakeTimeout is how long the handshake may take under sp.
func (sp Spec) HandshakeTimeout() time.Duration {
	if sp.Timeout > 0 {
		return sp.Timeout
	}
	return DefaultHandshakeTimeout
}

// Connect starts a session on the target and runs the handshake. A URL whose
// first request gets 400, 404 or 405 is tried again with the older HTTP+SSE
// transport, as the 2025-11-25 backwards-compatibility rules say.
func Connect(ctx context.Context, sp Spec) (*session.Session, error) {
	if sp.URL != "" && len(sp.Command) > 0 {
		return nil, &SpecError{"give either a URL or a command, not both"}
	}
	if !sp.NoJournal && sp.Journal == "" {
		// One path for the whole connection: a server started again after
		// the era probe, or the HTTP+SSE fallback, goes on in the same journal.
		sp.Journal = journal.NewPath(journal.DefaultDir(), time.Now())
	}
	s, last, err := connectOnce(ctx, sp, 0)
	var he *transport.HTTPError
	if err == nil || sp.URL == "" || sp.Transport != "" || sp.Era == protocol.EraModern || !errors.As(err, &he) ||
		(he.Status != 400 && he.Status != 404 && he.Status != 405) {
		return s, err
	}
	why := fmt.Sprintf("%s answered %d to Streamable HTTP; trying the HTTP+SSE transport (2024-11-05)", transport.RedactURL(sp.URL), he.Status)
	sp.note("%s", why)
	// The fallback session goes on in the same journal after the failed
	// attempt's frames, numbered after them, with the reason noted first:
	// the path the user named holds the session, and nothing is lost.
	sse := sp
	sse.Transport, sse.firstNote = "sse", why
	s2, _, err2 := connectOnce(ctx, sse, last)
	if err2 != nil {
		// The fallback's failure is the verdict (a stream that never named
		// its endpoint is a timeout, exit 4); the first answer stays in the text.
		return nil, fmt.Errorf("%v\nthe HTTP+SSE fallback failed too: %w", err, err2)
	}
	return s2, nil
}

// note tells the person, when someone listens; what it quotes (a server's
// error, a URL) is made inert first.
func (sp Spec) note(format string, a ...any) {
	if sp.Notes != nil {
		fmt.Fprintf(sp.Notes, "mcpscope: %s\n", termsafe.Text(fmt.Sprintf(format, a...)))
	}
}

// kind names the transport sp makes: "stdio", "http" or "sse".
func (sp Spec) kind() string {
	switch {
	case sp.URL == "":
		return "stdio"
	case sp.Transport == "sse":
		return "sse"
	}
	return "http"
}

// argv is the command sp spawns (Self when no command was given).
func (sp Spec) argv() []string {
	if len(sp.Command) > 0 {
		return sp.Command
	}
	return sp.Self
}

// newTransport builds the transport sp names, with OAuth behind it when
// it applies.
func newTransport(sp Spec) (transport.Transport, error) {
	if sp.URL != "" {
		flow, client := oauthFor(sp)
		var t interface {
			transport.Transport
			Note(string)
			Waiting(on bool, detail string)
		}
		if sp.Transport == "sse" {
			t = transport.NewLegacySSE(transport.LegacySSEOptions{URL: sp.URL, Headers: sp.Headers, Bearer: sp.Bearer, Client: client,
				AllowRedirects: sp.AllowRedirects, StartWait: sp.HandshakeTimeout()})
		} else {
			t = transport.NewHTTP(sp.httpOptions(client))
		}
		if flow != nil {
			flow.SetNote(t.Note)
			flow.SetWaiting(t.Waiting)
		}
		return t, nil
	}
	argv := sp.argv()
	if len(argv) == 0 {
		return nil, &SpecError{"no target: give a URL or a server command"}
	}
	so := transport.StdioOptions{Command: argv[0], Args: argv[1:], Env: sp.Env, Dir: sp.Dir, Grace: sp.Grace}
	if sp.Shell && len(sp.Command) > 0 {
		so.Command, so.Args, so.Shell = strings.Join(sp.Command, " "), nil, true
	}
	return transport.NewStdio(so), nil
}

// httpOptions is the Streamable HTTP transport sp describes, over client
// (nil = the transport's own).
func (sp Spec) httpOptions(client *http.Client) transport.HTTPOptions {
	return transport.HTTPOptions{URL: sp.URL, Headers: sp.Headers, Bearer: sp.Bearer, Client: client, AllowRedirects: sp.AllowRedirects}
}

// connectOnce connects with sp's transport, numbering frames after
// seqBase. last is the sequence number of the last frame it journaled,
// for a fallback that goes on in the same journal.
func connectOnce(ctx context.Context, sp Spec, seqBase uint64) (s *session.Session, last uint64, err error) {
	s, err = start(sp, seqBase)
	if err != nil {
		return nil, max(seqBase, lastSeq(s)), err
	}
	// The handshake gets the user's timeout; a person logging in (the first
	// request's 401) stops its clock.
	hctx, cancel := s.Within(ctx, sp.HandshakeTimeout())
	defer cancel()
	err = chooseEra(hctx, sp, s)
	// A stdio server that exited on the probe is started again, once.
	var ex *errExited
	if errors.As(err, &ex) {
		s.Close()
		last := s.Store().Last()
		if s, err = start(sp, last); err != nil {
			return nil, max(last, lastSeq(s)), err
		}
		s.Note(ex.reason)
		if ex.probeAgain {
			err = chooseStdioEra(hctx, sp, s)
		} else {
			err = adopt(hctx, s, session.EraVerdict{Era: protocol.EraLegacy, Reason: "the server exited on server/discover"})
		}
		if errors.As(err, &ex) {
			err = fmt.Errorf("the server exited again after a restart: %s", ex.reason)
		}
	}
	if err != nil {
		err = handshakeFailed(ctx, hctx, sp, s, err)
		return nil, s.Store().Last(), err
	}
	if sp.LogLevel != "" {
		if c := s.SetLogLevel(sp.LogLevel); c != nil {
			if _, err := c.Wait(ctx); err != nil {
				sp.note("logging/setLevel %s: %v", sp.LogLevel, err)
			}
		}
	}
	return s, s.Store().Last(), nil
}

// lastSeq is the last sequence number s numbered (0 for no session).
func lastSeq(s *session.Session) uint64 {
	if s == nil {
		return 0
	}
	return s.Store().Last()
}

// start makes the transport, opens the journal (numbering after seqBase),
// and starts a session on them.
func start(sp Spec, seqBase uint64) (*session.Session, error) {
	t, err := newTransport(sp)
	if err != nil {
		return nil, err
	}
	j, err := openJournal(sp, t.Describe())
	if err != nil {
		return nil, err
	}
	r := sp.Responder
	if r == nil {
		r = newAnswers(sp.Answers, sp.Roots)
	}
	so := session.Options{Responder: r, Capabilities: sp.Capabilities, Journal: j, Timeout: sp.Timeout, MaxTimeout: sp.MaxTimeout, SeqBase: seqBase, NoListen: sp.NoListen,
		Warn: func(msg string) { sp.note("warning: %s", msg) }, Observe: sp.Observe}
	if sp.URL != "" && !sp.NoState {
		// HTTP calls that carry event ids can be rejoined after this process ends.
		so.StateStore, so.Rejoin = sp.StateStore, RejoinInfo(sp)
		if so.StateStore == nil {
			so.StateStore = statestore.Default()
		}
	}
	s := session.New(t, so)
	if sp.firstNote != "" {
		s.Note(sp.firstNote) // journaled before the transport's first frame
	}
	if err := s.Start(); err != nil {
		if j != nil {
			j.Close()
		}
		if errors.Is(err, context.DeadlineExceeded) { // HTTP+SSE: no endpoint event within the handshake limit
			err = &session.Failure{Kind: session.ErrTimeout, Reason: "timed out", Cause: err}
		}
		return s, err // the transport's error names the target already; s says how far the numbering went
	}
	return s, nil
}

// handshakeFailed closes s and says why the handshake failed: interrupted,
// out of time, or the server's own error. A server that exited says what it
// wrote on stderr last, and where the journal is.
func handshakeFailed(ctx, hctx context.Context, sp Spec, s *session.Session, err error) error {
	// A stdio server that would not take a message, or whose exit ended
	// the call, is gone or going: give the transport a bounded moment to
	// finish with it, so the error says how it ended.
	gone := exited(s) || (sp.kind() == "stdio" && (errors.Is(err, session.ErrSend) || errors.Is(err, session.ErrClosed)) &&
		exitedWithin(s, exitSettle))
	how := s.Info().CloseReason // "the server process exited (exit code 3)"
	if hctx.Err() != nil && ctx.Err() == nil {
		// The user's limit is over: closing waits on the server no more
		// (no flush of the probe's cancel, no DELETE), or --timeout 3s
		// would end at 5s.
		s.CloseBy(time.Now())
	} else {
		s.Close()
	}
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case hctx.Err() != nil && !gone:
		return &session.Failure{Kind: session.ErrTimeout,
			Reason: fmt.Sprintf("timed out: %s did not complete the handshake within %s", s.Info().Target, sp.HandshakeTimeout())}
	case gone:
		return &ExitError{Err: err, How: how, Stderr: lastStderr(s, 8), Journal: s.Info().JournalPath}
	}
	return err
}

// exitSettle bounds the wait for a server's exit after a broken pipe.
const exitSettle = 2 * time.Second

// exitedWithin waits up to d for the session's transport to be done.
func exitedWithin(s *session.Session, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.Transport().Done():
		return true
	case <-t.C:
		return false
	}
}

// ExitError is a server that exited during the handshake, with the last
// lines it wrote on stderr.
type ExitError struct {
	Err     error
	How     string   // how it ended ("the server process exited (exit code 3)"), when known
	Stderr  []string // its last stderr lines, oldest first, as written (not sanitised)
	Journal string   // where every frame is, "" without a journal
}

func (e *ExitError) Error() string {
	var b strings.Builder
	b.WriteString(e.Err.Error())
	if e.How != "" && !strings.Contains(e.Err.Error(), e.How) {
		b.WriteString("\n" + e.How)
	}
	if len(e.Stderr) > 0 {
		b.WriteString("\nits stderr ended with:")
		for _, l := range e.Stderr {
			b.WriteString("\n  | " + l)
		}
	} else {
		b.WriteString("\n(it wrote nothing on stderr)")
	}
	if e.Journal != "" {
		b.WriteString("\nthe whole exchange is in the journal " + e.Journal)
	}
	return b.String()
}

func (e *ExitError) Unwrap() error { return e.Err }

// lastStderr is the last n stderr lines the session saw.
func lastStderr(s *session.Session, n int) []string {
	var seqs []uint64 // found in the index; only these n are read back
	s.Store().Scan(0, 0, func(e framestore.Entry) bool {
		if e.Kind == transport.Stderr {
			if len(seqs) == n {
				seqs = append(seqs[:0], seqs[1:]...)
			}
			seqs = append(seqs, e.Seq)
		}
		return true
	})
	var lines []string
	for _, seq := range seqs {
		if it := s.Store().Get(seq); it != nil {
			lines = append(lines, string(it.Frame.Data))
		}
	}
	return lines
}

// openJournal opens the journal sp asks for (nil with NoJournal).
func openJournal(sp Spec, target string) (*journal.Writer, error) {
	if sp.NoJournal {
		return nil, nil
	}
	path := sp.Journal
	if path == "" {
		path = journal.NewPath(journal.DefaultDir(), time.Now())
	}
	return journal.Create(path, target)
}
