package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"mcpscope/connect"
	"mcpscope/statestore"
)

// redirCanary is the bearer token: it must reach nothing but the first origin.
const redirCanary = "CANARY-c0ffee"

// tinyMCP answers initialize and tools/list with JSON and records every
// request it gets (headers and URL), so a test can tell what reached it.
type tinyMCP struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newTinyMCP(t *testing.T) *tinyMCP {
	t.Helper()
	s := &tinyMCP{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *tinyMCP) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen = append(s.seen, fmt.Sprint(r.Method, " ", r.URL, " ", r.Header))
	s.mu.Unlock()
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	w.Header().Set("Content-Type", "application/json")
	switch req.Method {
	case "initialize":
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"tiny","version":"1"}}}`, req.ID)
	case "tools/list":
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"tiny-tool","inputSchema":{"type":"object"}}]}}`, req.ID)
	case "":
		w.WriteHeader(http.StatusBadRequest)
	default:
		if len(req.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, req.ID)
	}
}

func (s *tinyMCP) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// journals is every journal file written next to path, read together.
func journals(t *testing.T, path string) []byte {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no journal written")
	}
	var all []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}

// A redirect to another origin (another port of the same host) is refused:
// non-zero exit, a message naming the redirect and the way to allow it, and
// the bearer reaches neither the other origin nor any output.
func TestToolsRedirectToAnotherOriginRefused(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	other := newTinyMCP(t)
	first := httptest.NewServer(http.RedirectHandler(other.URL+"/mcp", http.StatusTemporaryRedirect))
	t.Cleanup(first.Close)
	journal := filepath.Join(t.TempDir(), "session.jsonl")

	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"tools", "--bearer", redirCanary, "-H", "X-Api-Key: " + redirCanary,
		"--journal", journal, first.URL + "/mcp"}, &out, &errb)
	stderr := errb.String()
	if code == exitOK || !strings.Contains(stderr, "redirected (307) to "+other.URL+"/mcp") ||
		!strings.Contains(stderr, "--allow-redirect "+other.URL) {
		t.Fatalf("exit %d; want a refused redirect naming %s and --allow-redirect\nstdout: %s\nstderr: %s", code, other.URL, out.String(), stderr)
	}
	if got := other.requests(); len(got) != 0 {
		t.Fatalf("the other origin was reached: %v", got)
	}
	j := journals(t, journal)
	if !bytes.Contains(j, []byte(`"event":"redirect"`)) {
		t.Fatalf("the journal has no redirect event:\n%s", j)
	}
	for what, b := range map[string][]byte{"stdout": out.Bytes(), "stderr": errb.Bytes(), "journal": j} {
		if bytes.Contains(b, []byte(redirCanary)) {
			t.Fatalf("the bearer is in %s:\n%s", what, b)
		}
	}
}

// With --allow-redirect the redirect is followed, and still no credential
// goes to the other origin.
func TestToolsRedirectAllowedWithoutCredentials(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	other := newTinyMCP(t)
	first := httptest.NewServer(http.RedirectHandler(other.URL+"/mcp", http.StatusPermanentRedirect))
	t.Cleanup(first.Close)

	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"tools", "--bearer", redirCanary, "-H", "X-Api-Key: " + redirCanary,
		"--allow-redirect", other.URL, "--no-journal", first.URL + "/mcp"}, &out, &errb)
	if code != exitOK || !strings.Contains(out.String(), "tiny-tool") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
	}
	got := other.requests()
	if len(got) == 0 {
		t.Fatal("the allowed origin was never reached")
	}
	for _, r := range got {
		if strings.Contains(r, redirCanary) || strings.Contains(r, "Authorization") {
			t.Fatalf("a credential reached the other origin: %s", r)
		}
	}
}

func TestAllowRedirectUsage(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"tools", "--no-journal", "--allow-redirect", "https://auth.example.com/path",
		"http://127.0.0.1:1/mcp"}, &out, &errb)
	if code != exitUsage || !strings.Contains(errb.String(), "not an origin") {
		t.Fatalf("exit %d, %s", code, errb.String())
	}
}

// A detached call made on a URL with credentials in it is recorded without
// them; rejoining it asks for the full URL again, by the flag that gives it.
func TestRejoinAsksForTheURLAgain(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	full := "http://ada:" + redirCanary + "@127.0.0.1:1/mcp?api_key=" + redirCanary
	ri := connect.RejoinInfo(connect.Spec{URL: full})
	d := statestore.Detached{Handle: "h-url", Target: ri.Target, Transport: "http", SecretRefs: ri.SecretRefs, SessionID: "s1",
		RequestID: json.RawMessage("3"), Method: "tools/call", LastEventIDs: map[string]string{"post:3": "e.1"}}
	if err := statestore.Default().Put(d); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"rejoin", "--no-journal", "h-url"}, &out, &errb)
	if code == exitOK || !strings.Contains(errb.String(), "give that full URL again") || !strings.Contains(errb.String(), "--url URL") {
		t.Fatalf("exit %d, %s", code, errb.String())
	}
	errb.Reset()
	code = Run(context.Background(), []string{"rejoin", "--no-journal", "--url", "http://127.0.0.1:1/other?api_key=x", "h-url"}, &out, &errb)
	if code == exitOK || !strings.Contains(errb.String(), "not on http://127.0.0.1:1/other?api_key=[redacted]") {
		t.Fatalf("exit %d, %s", code, errb.String())
	}
	b, _ := os.ReadFile(filepath.Join(statestore.Default().Dir, "h-url.json"))
	if len(b) == 0 || bytes.Contains(b, []byte(redirCanary)) || bytes.Contains(out.Bytes(), []byte(redirCanary)) {
		t.Fatalf("record:\n%s", b)
	}
}
