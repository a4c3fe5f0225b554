package connect

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"mcpscope/session"
)

// stdioProbeTimeout is how long a stdio server gets to answer server/discover
// before it counts as legacy (the spec's "no response within a timeout").
const stdioProbeTimeout = 3 * time.Second

// probeTimeout bounds server/discover over HTTP.
const probeTimeout = 30 * time.Second

// chooseEra settles the protocol era of s and completes the handshake:
// initialize for legacy, the discover result for modern.
func chooseEra(ctx context.Context, sp Spec, s *session.Session) error {
	switch sp.Era {
	case session.EraLegacy:
		s.Adopt(session.EraVerdict{Era: session.EraLegacy, Reason: "pinned to legacy"})
		_, err := s.Initialize(ctx)
		return err
	case session.EraModern:
		v, err := s.Probe(ctx, probeTimeout)
		if err != nil {
			return err
		}
		if v.Era != session.EraModern {
			return &EraError{Pinned: session.EraModern, Reason: v.Reason}
		}
		v.Reason = "pinned to modern; " + v.Reason
		s.Adopt(v)
		return nil
	}
	if sp.kind() == "sse" {
		s.Adopt(session.EraVerdict{Era: session.EraLegacy, Reason: "the HTTP+SSE transport (2024-11-05) has only the initialize era"})
		_, err := s.Initialize(ctx)
		return err
	}
	var v session.EraVerdict
	var err error
	if sp.kind() == "stdio" {
		v, err = probeStdio(ctx, sp)
	} else {
		v, err = s.Probe(ctx, probeTimeout)
	}
	if err != nil {
		return err
	}
	if sp.kind() == "stdio" && v.Era == session.EraModern {
		// The verdict came from a sibling or the cache: ask this process too,
		// so its journal holds the server's own discover result.
		reason := v.Reason
		if v, err = s.Probe(ctx, probeTimeout); err != nil {
			return err
		}
		v.Reason = reason
	}
	s.Adopt(v)
	if v.Era == session.EraModern {
		return nil
	}
	_, err = s.Initialize(ctx)
	return err
}

// EraError is a pinned era the server does not speak.
type EraError struct{ Pinned, Reason string }

func (e *EraError) Error() string {
	return fmt.Sprintf("the server does not speak the %s era (%s): %s", e.Pinned, session.ModernVersion, e.Reason)
}

// probeStdio asks a disposable sibling process, because some legacy servers
// exit on any request before initialize; the verdict is cached per command
// so the next run skips the probe.
func probeStdio(ctx context.Context, sp Spec) (session.EraVerdict, error) {
	key := eraCacheKey(sp)
	if v, ok := readEraCache(key); ok {
		return v, nil
	}
	probeSpec := sp
	probeSpec.Grace = 200 * time.Millisecond
	t, _, err := newTransport(probeSpec)
	if err != nil {
		return session.EraVerdict{}, err
	}
	probe := session.New(t, session.Options{Timeout: stdioProbeTimeout, MaxTimeout: stdioProbeTimeout, Responder: session.Headless{}})
	if err := probe.Start(); err != nil {
		return session.EraVerdict{}, fmt.Errorf("start the probe process: %w", err)
	}
	defer probe.Close()
	v, err := probe.Probe(ctx, stdioProbeTimeout)
	if err == nil {
		v.Reason += " (asked a separate probe process)"
		writeEraCache(key, v, sp)
	}
	return v, err
}

func eraCacheKey(sp Spec) string {
	h := sha256.New()
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

func eraCachePath() string { return filepath.Join(session.StateDir(), "era-cache.json") }

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
	return session.EraVerdict{Era: e.Era, Reason: e.Reason + " (cached " + e.At.Format(time.RFC3339) + ")"}, true
}

func writeEraCache(key string, v session.EraVerdict, sp Spec) {
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
	m[key] = eraCacheEntry{Era: v.Era, Reason: strings.TrimSuffix(v.Reason, " (asked a separate probe process)"),
		Command: strings.Join(sp.argv(), " "), At: time.Now()}
	b, _ := json.MarshalIndent(m, "", "  ")
	if os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	tmp := path + fmt.Sprintf(".%d.tmp", os.Getpid())
	if os.WriteFile(tmp, b, 0o600) == nil {
		_ = os.Rename(tmp, path)
	}
}
