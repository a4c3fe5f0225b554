package connect_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/connect"
	"mcpscope/statestore"
	"mcpscope/testkit/clienttest"
	"mcpscope/transport"
)

// urlCanary is the secret in every URL below, and must appear nowhere else.
const urlCanary = "CANARY-41c7"

// withSecrets puts credentials into an http://127.0.0.1:PORT/path URL: a
// password and two secret query parameters.
func withSecrets(u string) string {
	return strings.Replace(u, "http://", "http://ada:"+urlCanary+"-pw@", 1) + "?api_key=" + urlCanary + "-key&token=" + urlCanary + "-tok&x=1"
}

// A session on a URL with secrets in it writes none of them: not in the
// HTTP+SSE fallback note, the journal (header,
// frames, endpoint) or the session's target. The server is the Go SDK's
// HTTP+SSE handler, so Streamable HTTP gets 400 and the fallback runs.
func TestNoURLSecretInJournalOrNotes(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "sse-only", Version: "1"}, nil)
	ts := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	dir := t.TempDir()
	var notes bytes.Buffer
	s := clienttest.Connect(t, connect.Spec{URL: withSecrets(ts.URL + "/mcp"), Journal: filepath.Join(dir, "j.jsonl"), Notes: &notes})
	if in := s.Info(); strings.Contains(in.Target, urlCanary) || !strings.Contains(in.Target, "[redacted]") {
		t.Fatalf("session target %q", in.Target)
	}
	s.Close()

	if n := notes.String(); !strings.Contains(n, "answered 400 to Streamable HTTP; trying the HTTP+SSE transport") || strings.Contains(n, urlCanary) {
		t.Fatalf("notes:\n%s", n)
	}
	journals, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(journals) != 1 { // the Streamable HTTP attempt and the HTTP+SSE session, in one
		t.Fatalf("journals %v", journals)
	}
	var all []byte
	for _, j := range journals {
		b, err := os.ReadFile(j)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	for _, want := range []string{"endpoint http://[redacted]@", "api_key=[redacted]"} {
		if !bytes.Contains(all, []byte(want)) {
			t.Errorf("the journals lack %q", want)
		}
	}
	if bytes.Contains(all, []byte(urlCanary)) {
		t.Fatalf("a URL secret is in the journal:\n%s", all)
	}
}

// The rejoin record of a URL with secrets keeps it redacted and says the
// URL must be given again; a rejoin without it (or with another) fails
// plainly, and with it the full URL reaches the server while the journal
// still shows none of it.
func TestRejoinURLWithSecrets(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	queries := make(chan string, 4)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries <- r.URL.RawQuery
		http.Error(w, "no such session", http.StatusNotFound)
	}))
	t.Cleanup(ts.Close)
	full := withSecrets(ts.URL + "/mcp")

	ri := connect.RejoinInfo(connect.Spec{URL: full})
	if b, _ := json.Marshal(ri); bytes.Contains(b, []byte(urlCanary)) || ri.SecretRefs["URL"] == "" {
		t.Fatalf("rejoin info %s", b)
	}
	if plain := connect.RejoinInfo(connect.Spec{URL: ts.URL + "/mcp"}); plain.Target != ts.URL+"/mcp" || len(plain.SecretRefs) != 0 {
		t.Fatalf("a URL without secrets is kept as it is: %+v", plain)
	}
	d := statestore.Detached{Handle: "h1", Target: ri.Target, Transport: "http", SecretRefs: ri.SecretRefs, SessionID: "s1",
		ProtocolVersion: "2025-11-25", RequestID: json.RawMessage("3"), Method: "tools/call", Name: "slow",
		LastEventIDs: map[string]string{"post:3": "e.1"}, Started: time.Now()}
	store := &statestore.FileStore{Dir: t.TempDir()}
	if err := store.Put(d); err != nil { // a rejoin takes a record from its store
		t.Fatal(err)
	}

	var missing *connect.MissingSecretError
	if _, err := connect.Rejoin(connect.Spec{NoJournal: true}, d, store); !errors.As(err, &missing) || strings.Contains(err.Error(), "--") {
		t.Fatalf("without the URL: want a MissingSecretError naming no flag, got %v", err)
	}
	other := strings.Replace(full, urlCanary+"-key", "another-key", 1) // another api_key redacts the same
	other = strings.Replace(other, "/mcp", "/elsewhere", 1)
	if _, err := connect.Rejoin(connect.Spec{URL: other, NoJournal: true}, d, store); err == nil || strings.Contains(err.Error(), urlCanary) {
		t.Fatalf("with another URL: want an error without secrets, got %v", err)
	}

	journal := filepath.Join(t.TempDir(), "rejoin.jsonl")
	s, err := connect.Rejoin(connect.Spec{URL: full, Journal: journal}, d, store)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Rejoin(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	select {
	case q := <-queries:
		if !strings.Contains(q, "api_key="+urlCanary+"-key") {
			t.Fatalf("the resume GET went to ?%s, not to the full URL", q)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the rejoined call never reached the server")
	}
	s.Close()
	b, _ := os.ReadFile(journal)
	if len(b) == 0 || bytes.Contains(b, []byte(urlCanary)) {
		t.Fatalf("rejoin journal:\n%s", b)
	}
}

// Every transport connect builds for a URL carries the Spec's allowed
// redirect origins: an allowed one is followed, without credentials.
func TestSpecAllowRedirects(t *testing.T) {
	var mu sync.Mutex
	var gotAuth []string
	seen := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), gotAuth...) }
	srv := mcp.NewServer(&mcp.Implementation{Name: "there", Version: "1"}, nil)
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	there := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotAuth = append(gotAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { there.CloseClientConnections(); there.Close() })
	here := httptest.NewServer(http.RedirectHandler(there.URL+"/mcp", http.StatusTemporaryRedirect))
	t.Cleanup(here.Close)

	sp := connect.Spec{URL: here.URL + "/mcp", Bearer: urlCanary, Transport: "http", NoJournal: true, Era: "legacy"}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	_, err := clienttest.TryConnect(sp)
	var re *transport.RedirectError
	if !errors.As(err, &re) || re.Origin != there.URL {
		t.Fatalf("without AllowRedirects: want a RedirectError to %s, got %v", there.URL, err)
	}
	if got := seen(); len(got) != 0 {
		t.Fatalf("the other origin was reached: %v", got)
	}
	sp.AllowRedirects = []string{there.URL}
	s := clienttest.Connect(t, sp)
	s.Close()
	if len(seen()) == 0 {
		t.Fatal("the allowed origin was never reached")
	}
	for _, a := range seen() {
		if a != "" {
			t.Fatalf("the other origin got Authorization %q", a)
		}
	}
}
