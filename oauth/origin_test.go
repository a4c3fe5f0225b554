package oauth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const oauthCanary = "CANARY-9b2d"

// authLog is a server that records the Authorization each path got.
type authLog struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // "path Authorization"
}

func newAuthLog(t *testing.T, route func(w http.ResponseWriter, r *http.Request) bool) *authLog {
	t.Helper()
	s := &authLog{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.URL.Path+" "+r.Header.Get("Authorization"))
		s.mu.Unlock()
		if route == nil || !route(w, r) {
			w.WriteHeader(http.StatusOK)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *authLog) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// The token goes to the flow's server origin only: not to another port of
// the same host a redirect leads to, not to a request made there directly,
// and not back home once a redirect chain left. Another origin's 401 does
// not start an authorization.
func TestRoundTripperTokenStaysOnOrigin(t *testing.T) {
	var home *authLog
	other := newAuthLog(t, func(w http.ResponseWriter, r *http.Request) bool {
		switch r.URL.Path {
		case "/bounce":
			http.Redirect(w, r, home.URL+"/final", http.StatusTemporaryRedirect)
		case "/deny":
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+home.URL+`/prm"`)
			w.WriteHeader(http.StatusUnauthorized)
		default:
			return false
		}
		return true
	})
	home = newAuthLog(t, func(w http.ResponseWriter, r *http.Request) bool {
		switch r.URL.Path {
		case "/mcp":
			http.Redirect(w, r, other.URL+"/moved", http.StatusPermanentRedirect)
		case "/away":
			http.Redirect(w, r, other.URL+"/bounce", http.StatusTemporaryRedirect)
		default:
			return false
		}
		return true
	})
	f := NewFlow(home.URL+"/mcp", Config{})
	f.token = &Token{AccessToken: oauthCanary, TokenType: "Bearer"}
	c := &http.Client{Transport: &RoundTripper{Flow: f}} // follows every redirect: the RoundTripper alone decides

	for _, path := range []string{home.URL + "/mcp", home.URL + "/away", other.URL + "/deny"} {
		resp, err := c.Get(path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
		if path == other.URL+"/deny" && resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("another origin's 401 must come back as it is, got %d", resp.StatusCode)
		}
	}
	for _, seen := range other.got() {
		if strings.Contains(seen, oauthCanary) {
			t.Errorf("the other origin got the token: %s", seen)
		}
	}
	want := map[string]bool{"/mcp Bearer " + oauthCanary: true, "/away Bearer " + oauthCanary: true, "/final ": true}
	for _, seen := range home.got() {
		if !want[seen] {
			t.Errorf("home got %q; want the token on /mcp and /away only", seen)
		}
		delete(want, seen)
	}
	if len(want) > 0 {
		t.Errorf("home never got %v", want)
	}
	if n := f.auths.Load(); n != 0 {
		t.Errorf("another origin's 401 started %d authorizations", n)
	}
}

// The flow's notes show the server's URL without its secrets, and the
// resource indicator carries none of them.
func TestNotesAndResourceRedact(t *testing.T) {
	home := newAuthLog(t, nil)
	var notes []string
	server := strings.Replace(home.URL, "http://", "http://ada:"+oauthCanary+"@", 1) + "/mcp?api_key=" + oauthCanary
	f := NewFlow(server, Config{Note: func(s string) { notes = append(notes, s) }})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()
	_, _ = f.Challenged(ctx, http.StatusUnauthorized, http.Header{}, "") // discovery finds nothing here
	all := strings.Join(notes, "\n")
	if !strings.Contains(all, "401 from") || !strings.Contains(all, "[redacted]@") || strings.Contains(all, oauthCanary) {
		t.Fatalf("notes: %s", all)
	}
	if r := f.resource(); strings.Contains(r, oauthCanary) || strings.Contains(r, "ada") {
		t.Fatalf("the resource indicator carries the URL's credentials: %s", r)
	}
}

// The login cache (mode 0600, but on disk) names the server without the
// URL's secrets, and a later flow for the same URL still finds it.
func TestCacheKeepsNoURLSecret(t *testing.T) {
	file := filepath.Join(t.TempDir(), "login.json")
	server := "https://ada:" + oauthCanary + "@mcp.example.com/mcp?token=" + oauthCanary
	f := NewFlow(server, Config{CacheFile: file})
	f.clientID, f.redirect = "client-1", "http://127.0.0.1:5555/callback"
	f.saveCacheLocked()
	b, err := os.ReadFile(file)
	if err != nil || strings.Contains(string(b), oauthCanary) {
		t.Fatalf("cache file (%v):\n%s", err, b)
	}
	if g := NewFlow(server, Config{CacheFile: file}); !g.restored || g.clientID != "client-1" {
		t.Fatal("the saved registration was not found again")
	}
	if r := CachedRedirect(file, server); r != f.redirect {
		t.Fatalf("CachedRedirect = %q", r)
	}
}
