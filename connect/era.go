package connect

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"mcpscope/internal/xdg"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/transport"
)

// stdioProbeTimeout is how long a stdio server gets to answer server/discover
// before it counts as legacy (the spec's "no response within a timeout").
var stdioProbeTimeout = 3 * time.Second

// probeTimeout bounds server/discover over HTTP.
const probeTimeout = 30 * time.Second

// chooseEra settles the protocol era of s and completes the handshake:
// initialize for legacy, the discover result for modern. It returns
// errExited when a stdio server exited while being probed: the caller
// starts it again and goes straight to initialize.
func chooseEra(ctx context.Context, sp Spec, s *session.Session) error {
	switch sp.Era {
	case protocol.EraLegacy:
		s.Adopt(session.EraVerdict{Era: protocol.EraLegacy, Reason: "pinned to legacy"})
		_, err := s.Initialize(ctx)
		return err
	case protocol.EraModern:
		v, err := s.Probe(ctx, probeTimeout)
		if err != nil {
			return err
		}
		if v.Era != protocol.EraModern {
			return &EraError{Pinned: protocol.EraModern, Reason: v.Reason}
		}
		v.Reason = "pinned to modern; " + v.Reason
		s.Adopt(v)
		return nil
	}
	switch sp.kind() {
	case "sse":
		s.Adopt(session.EraVerdict{Era: protocol.EraLegacy, Reason: "the HTTP+SSE transport of 2024-11-05 has only the initialize era"})
		_, err := s.Initialize(ctx)
		return err
	case "stdio":
		return chooseStdioEra(ctx, sp, s)
	}
	return chooseHTTPEra(ctx, sp, s)
}

// chooseHTTPEra probes a Streamable HTTP server as the spec's backward
// compatibility says (a modern request first), and remembers a legacy
// verdict per URL, as versioning allows ("MAY persist it across restarts
// of the same server configuration, re-probing if the cached assumption
// later fails"): a one-shot command to a 2025 server then skips a refused
// request on every run. The verdict is saved only once initialize worked,
// so a server that only speaks HTTP+SSE is never remembered as one that
// answers initialize here.
func chooseHTTPEra(ctx context.Context, sp Spec, s *session.Session) error {
	key := eraCacheKey(sp)
	if done, err := tryRemembered(ctx, key, s); done {
		return err
	} else if err != nil {
		if he := (*transport.HTTPError)(nil); errors.As(err, &he) && he.Status == 0 {
			return err // no answer at all says nothing about the era: keep the verdict
		}
		forgetVerdict(key, s, err)
	}
	v, err := s.Probe(ctx, probeTimeout)
	if err != nil {
		return err
	}
	if err := adopt(ctx, s, v); err != nil {
		return err
	}
	if v.Answered && v.Era == protocol.EraLegacy {
		writeEraCache(key, v, sp) // a modern verdict saves nothing: discover is its handshake
	}
	return nil
}

// tryRemembered goes straight to initialize when a legacy verdict for key
// is remembered, skipping the probe a 2025 server refuses. done: the
// handshake is settled and err is its outcome. Otherwise a non-nil err is
// why the remembered verdict failed, and the caller asks afresh.
func tryRemembered(ctx context.Context, key string, s *session.Session) (done bool, err error) {
	v, ok := readEraCache(key)
	if !ok || v.Era != protocol.EraLegacy {
		return false, nil
	}
	s.Adopt(v)
	_, err = s.Initialize(ctx)
	return err == nil || ctx.Err() != nil, err
}

// forgetVerdict drops a remembered verdict that failed, saying so in the
// session, before the era is asked for again.
func forgetVerdict(key string, s *session.Session, err error) {
	forgetEraCache(key)
	s.Note("the remembered legacy verdict failed (" + err.Error() + "): asking with server/discover again")
}

// adopt switches s to v's era and finishes the handshake.
func adopt(ctx context.Context, s *session.Session, v session.EraVerdict) error {
	s.Adopt(v)
	if v.Era == protocol.EraModern {
		return nil
	}
	_, err := s.Initialize(ctx)
	return err
}

// errExited: the stdio server exited during the era probe. probeAgain: it
// exited on initialize after a remembered verdict, so ask it afresh.
type errExited struct {
	reason     string
	probeAgain bool
}

func (e *errExited) Error() string { return e.reason }

// chooseStdioEra follows the spec's stdio Backward Compatibility rules on
// the real process (one command starts the server once): server/discover
// before any other request, then initialize on the same process when the
// answer says legacy. A legacy verdict the server gave before is
// remembered, so the next run goes straight to initialize; if that fails,
// the verdict is forgotten and the server asked again.
func chooseStdioEra(ctx context.Context, sp Spec, s *session.Session) error {
	key := eraCacheKey(sp)
	if done, err := tryRemembered(ctx, key, s); done {
		return err
	} else if err != nil {
		if exited(s) {
			forgetEraCache(key)
			return &errExited{reason: "the server exited on initialize, which it answered before: asking it again", probeAgain: true}
		}
		forgetVerdict(key, s, err)
	}
	v, err := s.Probe(ctx, stdioProbeTimeout)
	if err != nil {
		return err
	}
	if exited(s) {
		return &errExited{reason: "the server exited on server/discover, which legacy servers may do: started again for initialize"}
	}
	if v.Answered && v.Era == protocol.EraLegacy {
		writeEraCache(key, v, sp) // a modern verdict saves nothing: discover is its handshake
	}
	return adopt(ctx, s, v)
}

// exited reports whether the session's transport can carry no more (the
// stdio server is gone). The process's own status says so first: a probe
// failed by the exit returns before the transport closes Done.
func exited(s *session.Session) bool {
	if p, ok := s.Transport().(transport.Process); ok {
		if _, _, gone := p.ExitStatus(); gone {
			return true
		}
	}
	select {
	case <-s.Transport().Done():
		return true
	default:
		return false
	}
}

// EraError is a pinned era the server does not speak.
type EraError struct{ Pinned, Reason string }

func (e *EraError) Error() string {
	return fmt.Sprintf("the server does not speak the %s era (%s): %s", e.Pinned, protocol.ModernVersion, e.Reason)
}

// eraCacheKey names sp's server in the cache: a URL as given (its query
// may pick the server's configuration), or the command, its folder and
// its environment.
func eraCacheKey(sp Spec) string {
	h := sha256.New()
	if sp.URL != "" {
		h.Write([]byte("url\x00" + sp.URL))
		return hex.EncodeToString(h.Sum(nil))[:24]
	}
	for _, a := range sp.argv() {
		h.Write([]byte(a))
		h.Write([]byte{0})
	}
	h.Write([]byte(sp.Dir))
	for _, e := range sp.Env {
		h.Write([]byte(e))
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

type eraCacheEntry struct {
	Era     string    `json:"era"`
	Reason  string    `json:"reason"`
	Command string    `json:"command"`
	At      time.Time `json:"at"`
}

// eraCacheTTL keeps verdicts a day: servers rarely change eras more often,
// and pinning the era settles it when they do.
const eraCacheTTL = 24 * time.Hour

func eraCachePath() string { return filepath.Join(xdg.StateDir(), "era-cache.json") }

func readEraCache(key string) (session.EraVerdict, bool) {
	b, err := os.ReadFile(eraCachePath())
	if err != nil {
		return session.EraVerdict{}, false
	}
	var m map[string]eraCacheEntry
	if json.Unmarshal(b, &m) != nil {
		return session.EraVerdict{}, false
	}
	e, ok := m[key]
	if !ok || time.Since(e.At) > eraCacheTTL {
		return session.EraVerdict{}, false
	}
	return session.EraVerdict{Era: e.Era, Reason: e.Reason + "; remembered from " + e.At.Format(time.RFC3339), Answered: true}, true
}

// forgetEraCache drops a verdict that turned out wrong.
func forgetEraCache(key string) {
	updateEraCache(func(m map[string]eraCacheEntry) { delete(m, key) })
}

func writeEraCache(key string, v session.EraVerdict, sp Spec) {
	updateEraCache(func(m map[string]eraCacheEntry) {
		server := transport.CommandLine(sp.argv())
		if sp.URL != "" {
			server = transport.RedactURL(sp.URL) // the file names the server; credentials in a URL stay out
		}
		m[key] = eraCacheEntry{Era: v.Era, Reason: v.Reason, Command: server, At: time.Now()}
	})
}

// updateEraCache rewrites the cache file with change applied (expired
// verdicts dropped), atomically; a cache that cannot be written is no
// error, only a probe next time.
func updateEraCache(change func(map[string]eraCacheEntry)) {
	path := eraCachePath()
	m := map[string]eraCacheEntry{}
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	for k, e := range m {
		if time.Since(e.At) > eraCacheTTL {
			delete(m, k)
		}
	}
	change(m)
	b, _ := json.MarshalIndent(m, "", "  ")
	if os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	tmp := path + fmt.Sprintf(".%d.tmp", os.Getpid())
	if os.WriteFile(tmp, b, 0o600) == nil {
		_ = os.Rename(tmp, path)
	}
}
