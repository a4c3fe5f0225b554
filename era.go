package main

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
	"mcpscope/transport"
)

// stdioProbeTimeout is how long a stdio server gets to answer server/discover
// before it counts as legacy (the spec's "no response within a timeout").
const stdioProbeTimeout = 3 * time.Second

// chooseEra settles the protocol era of s and completes the handshake:
// initialize for legacy, the discover result for modern.
func chooseEra(ctx context.Context, o *options, s *session.Session, grace time.Duration) error {
	switch o.era {
	case "legacy":
		s.Adopt(session.EraVerdict{Era: session.EraLegacy, Reason: "pinned by --era legacy"})
		_, err := s.Initialize(ctx)
		return err
	case "modern":
		v, err := s.Probe(ctx, 30*time.Second)
		if err != nil {
			return err
		}
		if v.Era != session.EraModern {
			return fmt.Errorf("--era modern: the server does not speak %s (%s); try --era legacy", session.ModernVersion, v.Reason)
		}
		v.Reason = "pinned by --era modern; " + v.Reason
		s.Adopt(v)
		return nil
	}
	if _, sse := s.Transport().(*transport.LegacySSE); sse {
		s.Adopt(session.EraVerdict{Era: session.EraLegacy, Reason: "the HTTP+SSE transport (2024-11-05) has only the initialize era"})
		_, err := s.Initialize(ctx)
		return err
	}
	var v session.EraVerdict
	var err error
	if _, stdio := s.Transport().(*transport.Stdio); stdio {
		v, err = probeStdio(ctx, o, grace)
	} else {
		v, err = s.Probe(ctx, 30*time.Second)
	}
	if err != nil {
		return err
	}
	if _, stdio := s.Transport().(*transport.Stdio); stdio && v.Era == session.EraModern {
		// The verdict came from a sibling or the cache: ask this process too,
		// so its journal holds the server's own discover result.
		reason := v.Reason
		if v, err = s.Probe(ctx, 30*time.Second); err != nil {
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

// probeStdio asks a disposable sibling process, because some legacy servers
// exit on any request before initialize; the verdict is cached per command
// so the next run skips the probe.
func probeStdio(ctx context.Context, o *options, grace time.Duration) (session.EraVerdict, error) {
	key := eraCacheKey(o)
	if v, ok := readEraCache(key); ok {
		return v, nil
	}
	t, err := newTransport(o, 200*time.Millisecond)
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
		writeEraCache(key, v, o)
	}
	return v, err
}

func eraCacheKey(o *options) string {
	h := sha256.New()
	for _, a := range cacheCommand(o) {
		h.Write([]byte(a))
		h.Write([]byte{0})
	}
	h.Write([]byte(o.cwd))
	for _, e := range o.env {
		h.Write([]byte(e))
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

// cacheCommand is the command the verdict belongs to (the demo server when
// no command was given).
func cacheCommand(o *options) []string {
	if len(o.command) > 0 {
		return o.command
	}
	self, _ := os.Executable()
	return []string{self, "demo"}
}

type eraCacheEntry struct {
	Era     string    `json:"era"`
	Reason  string    `json:"reason"`
	Command string    `json:"command"`
	At      time.Time `json:"at"`
}

// eraCacheTTL keeps verdicts a day: servers rarely change eras more often,
// and --era pins one when they do.
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
	return session.EraVerdict{Era: e.Era, Reason: e.Reason + " (cached " + e.At.Format(time.RFC3339) + "; --era pins it)"}, true
}

func writeEraCache(key string, v session.EraVerdict, o *options) {
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
		Command: strings.Join(cacheCommand(o), " "), At: time.Now()}
	b, _ := json.MarshalIndent(m, "", "  ")
	if os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	tmp := path + fmt.Sprintf(".%d.tmp", os.Getpid())
	if os.WriteFile(tmp, b, 0o600) == nil {
		_ = os.Rename(tmp, path)
	}
}
