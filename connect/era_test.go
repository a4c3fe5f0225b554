package connect_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"mcpscope/connect"
	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/testkit/clienttest"
	"mcpscope/testkit/testservers"
	"mcpscope/transport"
)

// starts counts the lines a server (or its wrapper) appended at each start.
func starts(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// sentMethods are the methods mcpscope sent, in order.
func sentMethods(s *session.Session) []string {
	var out []string
	for _, it := range s.Store().Since(0, 0) {
		if it.Frame.Dir.String() == "out" && it.Env != nil && it.Env.Method != "" {
			out = append(out, it.Env.Method)
		}
	}
	return out
}

// connectIn connects with a given state directory (shared between runs, so
// the remembered verdicts carry over) and closes the session at once.
func connectIn(t *testing.T, state string, sp connect.Spec) (session.Info, []string) {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", state)
	sp.NoJournal = sp.Journal == ""
	s, err := clienttest.TryConnect(sp)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer s.Close()
	return s.Info(), sentMethods(s)
}

// One command starts the server once: the era probe runs on the real
// process (server/discover first, then initialize there), and a legacy
// verdict the server gave is remembered so the next run goes straight to
// initialize. Against a Go SDK server (modern) behind a counting wrapper,
// and our hand-written legacy server.
func TestStdioProbeStartsTheServerOnce(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "starts")
	goSDK := []string{"sh", "-c", `echo start >> "$0"; exec "$@"`, count, testservers.BuildStdio(t)}
	legacy := []string{testservers.BuildHostile(t), "-mode", "legacy", "-count", count}
	for _, c := range []struct {
		name   string
		argv   []string
		era    string
		second []string // what the second run sends first
		cached bool
	}{
		{"go-sdk", goSDK, protocol.EraModern, []string{"server/discover"}, false},
		{"legacy", legacy, protocol.EraLegacy, []string{"initialize"}, true},
		// server/discover answered under the wrong id (as @effect/ai's
		// server does): said so at once and remembered (before: 3 s of
		// probe timeout on every run, never remembered).
		{"discover-wrong-id", []string{testservers.BuildHostile(t), "-mode", "discover-wrong-id", "-count", count}, protocol.EraLegacy, []string{"initialize"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(count)
			state := t.TempDir()
			in, sent := connectIn(t, state, connect.Spec{Command: c.argv})
			if in.Era != c.era || sent[0] != "server/discover" {
				t.Fatalf("first run: era %s (%s), sent %v", in.Era, in.EraReason, sent)
			}
			if c.name == "discover-wrong-id" && !strings.Contains(in.EraReason, `under the id "1": it does not echo request ids`) {
				t.Fatalf("first run's reason %q does not say what the server did", in.EraReason)
			}
			if n := starts(t, count); n != 1 {
				t.Fatalf("the first run started the server %d times, want 1", n)
			}
			in, sent = connectIn(t, state, connect.Spec{Command: c.argv})
			if in.Era != c.era || sent[0] != c.second[0] {
				t.Fatalf("second run: era %s (%s), sent %v", in.Era, in.EraReason, sent)
			}
			// The journal's era note puts the reason in parentheses: the
			// reason holds none of its own.
			if note := "era: " + in.Era + " (" + in.EraReason + ")"; parenDepth(note) > 1 {
				t.Fatalf("the era note nests parentheses: %q", note)
			}
			if c.cached != strings.Contains(in.EraReason, "remembered") {
				t.Fatalf("second run's reason %q (remembered: want %v)", in.EraReason, c.cached)
			}
			if n := starts(t, count); n != 2 {
				t.Fatalf("two runs started the server %d times, want 2", n)
			}
		})
	}
}

// A legacy server that exits on server/discover is started again (once)
// and initialized; the verdict is not remembered, because the server never
// said it. When the server is fixed, the next run finds the new era at once.
func TestStdioProbeExitRestartsAndForgets(t *testing.T) {
	dir := t.TempDir()
	count, fixed := filepath.Join(dir, "starts"), filepath.Join(dir, "fixed")
	argv := []string{testservers.BuildHostile(t), "-mode", "exit-on-discover", "-count", count, "-fixed-if", fixed}
	state := t.TempDir()
	jpath := filepath.Join(t.TempDir(), "j.jsonl")
	in, sent := connectIn(t, state, connect.Spec{Command: argv, Journal: jpath})
	// One journal holds both processes, numbered on.
	f, err := os.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var last uint64
	spawned := 0
	if _, err := journal.Read(f, func(seq uint64, fr transport.Frame) error {
		if seq <= last {
			t.Errorf("journal seq %d after %d", seq, last)
		}
		last = seq
		if fr.Meta.Event == transport.EvSpawned {
			spawned++
		}
		return nil
	}); err != nil || spawned != 2 {
		t.Fatalf("journal: %v, %d spawned events (want 2)", err, spawned)
	}
	// The second process is asked nothing but initialize.
	if in.Era != protocol.EraLegacy || strings.Join(sent, ",") != "initialize,notifications/initialized" || !strings.Contains(in.EraReason, "exited on server/discover") {
		t.Fatalf("broken server: era %s (%s), sent %v", in.Era, in.EraReason, sent)
	}
	if n := starts(t, count); n != 2 {
		t.Fatalf("started %d times, want 2 (the restart after the exit)", n)
	}
	if b, _ := os.ReadFile(filepath.Join(state, "mcpscope", "era-cache.json")); strings.Contains(string(b), "legacy") {
		t.Fatalf("a verdict the server never gave was remembered:\n%s", b)
	}
	if err := os.WriteFile(fixed, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	in, _ = connectIn(t, state, connect.Spec{Command: argv})
	if in.Era != protocol.EraModern {
		t.Fatalf("the fixed server: era %s (%s), want modern", in.Era, in.EraReason)
	}
}

// A remembered legacy verdict that fails (the server now rejects
// initialize) is forgotten and the server asked again, on the same process.
func TestStdioRememberedVerdictFails(t *testing.T) {
	dir := t.TempDir()
	count, fixed := filepath.Join(dir, "starts"), filepath.Join(dir, "fixed")
	argv := []string{testservers.BuildHostile(t), "-mode", "legacy", "-count", count, "-fixed-if", fixed}
	state := t.TempDir()
	if in, _ := connectIn(t, state, connect.Spec{Command: argv}); in.Era != protocol.EraLegacy {
		t.Fatalf("first run: era %s", in.Era)
	}
	if err := os.WriteFile(fixed, nil, 0o600); err != nil { // now modern-only
		t.Fatal(err)
	}
	in, sent := connectIn(t, state, connect.Spec{Command: argv})
	if in.Era != protocol.EraModern || strings.Join(sent, ",") != "initialize,server/discover" {
		t.Fatalf("second run: era %s (%s), sent %v; want initialize refused, then server/discover", in.Era, in.EraReason, sent)
	}
	if n := starts(t, count); n != 2 {
		t.Fatalf("two runs started the server %d times, want 2", n)
	}
}

// A server that dies at start: the error shows its last stderr lines and
// where the journal is.
func TestStdioServerDiesAtStart(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	journal := filepath.Join(t.TempDir(), "j.jsonl")
	_, err := clienttest.TryConnect(connect.Spec{Command: []string{testservers.BuildHostile(t), "-mode", "die-at-start"}, Journal: journal})
	var ex *connect.ExitError
	if !errors.As(err, &ex) {
		t.Fatalf("want an ExitError, got %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"exit code 3", "API_KEY is not set", "cannot start", journal} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q:\n%s", want, msg)
		}
	}
}

// parenDepth is how deep s nests parentheses.
func parenDepth(s string) int {
	depth, deepest := 0, 0
	for _, r := range s {
		switch r {
		case '(':
			depth++
			deepest = max(deepest, depth)
		case ')':
			depth--
		}
	}
	return deepest
}

// A Streamable HTTP server that refuses server/discover (a 2025 server) is
// remembered per URL as a stdio one is: the next run goes straight to
// initialize, and the cache names the URL without the credentials in it. A
// remembered verdict that later fails (the server now refuses initialize)
// is forgotten and the server asked again.
func TestHTTPLegacyVerdictRemembered(t *testing.T) {
	legacy, _ := url.Parse(testservers.StartHTTP(t, testservers.HTTPOpts{}))
	modern, _ := url.Parse(testservers.StartHTTP(t, testservers.HTTPOpts{Stateless: true}))
	var behind atomic.Pointer[url.URL]
	behind.Store(&url.URL{Scheme: legacy.Scheme, Host: legacy.Host})
	var refuseInit atomic.Bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if body, _ := io.ReadAll(r.Body); refuseInit.Load() && bytes.Contains(body, []byte(`"method":"initialize"`)) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"only 2026-07-28 is served here"}}`)
			return
		} else {
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		httputil.NewSingleHostReverseProxy(behind.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	target := front.URL + "/mcp?token=s3cret-in-the-url"
	state := t.TempDir()
	cache := filepath.Join(state, "mcpscope", "era-cache.json")

	in, sent := connectIn(t, state, connect.Spec{URL: target})
	if in.Era != protocol.EraLegacy || len(sent) < 2 || sent[0] != "server/discover" || sent[1] != "initialize" {
		t.Fatalf("first run: era %s (%s), sent %v; want server/discover refused, then initialize", in.Era, in.EraReason, sent)
	}
	in, sent = connectIn(t, state, connect.Spec{URL: target})
	if in.Era != protocol.EraLegacy || sent[0] != "initialize" || !strings.Contains(in.EraReason, "remembered") {
		t.Fatalf("second run: era %s (%s), sent %v; want the remembered verdict and initialize first", in.Era, in.EraReason, sent)
	}
	b, err := os.ReadFile(cache)
	if err != nil || !strings.Contains(string(b), front.URL+"/mcp?token=") || strings.Contains(string(b), "s3cret") {
		t.Fatalf("era cache (%v):\n%s\nwant the URL named, its token redacted", err, b)
	}

	behind.Store(&url.URL{Scheme: modern.Scheme, Host: modern.Host})
	refuseInit.Store(true)
	in, sent = connectIn(t, state, connect.Spec{URL: target})
	if in.Era != protocol.EraModern || len(sent) < 2 || sent[0] != "initialize" || sent[1] != "server/discover" {
		t.Fatalf("after the server moved on: era %s (%s), sent %v; want initialize refused, then server/discover", in.Era, in.EraReason, sent)
	}
	if b, _ := os.ReadFile(cache); strings.Contains(string(b), "legacy") {
		t.Fatalf("the failed verdict was kept:\n%s", b)
	}
}
