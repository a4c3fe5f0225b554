package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"mcpscope/internal/termsafe"
	"mcpscope/journal"
	"mcpscope/testkit/testservers"
	"mcpscope/transport"
)

// The hostile-server suite: mcpscope's command line against servers of our
// own that misbehave on purpose, over stdio and HTTP. Every scenario runs
// the real command in-process, bounded by a deadline, and is judged the same
// way: it must not hang, must not crash (an exit code of the documented
// set), must lose nothing (what the server sent is in the journal), and
// must leak no terminal escape and no secret to stdout, stderr, the journal
// or the state directory. Run with -v for the counts.

// hostileCanary is a secret given to mcpscope (bearer, header, URL) that
// must never be written anywhere.
const hostileCanary = "CANARY-5e1f"

// hostileEvil is part of what the escapes server writes (cmd/hostile), as
// it is on the wire: JSON escapes ESC, and sends U+202E as it is.
const hostileEvil = "\\u001b[2J\\u001b]52;c;cHduZWQ=\\u0007"

type hostileRun struct {
	code           int
	stdout, stderr string
	journal        []byte // the journal file, "" without one
	state          []byte // every file under the state directory
	took           time.Duration
}

type hostileScenario struct {
	name string
	// start returns the argv (command and target) and, optionally, what the
	// journal must hold (the server's words, for "nothing lost").
	start func(t *testing.T) (argv []string, mustJournal string)
	codes []int // acceptable exit codes
	check func(t *testing.T, r hostileRun)
}

// tally is the suite's score, logged at the end.
type tally struct{ tried, hung, crashed, lost, escapes, secrets int }

func TestHostileServers(t *testing.T) {
	var score tally
	for _, sc := range hostileScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			score.tried++
			state := t.TempDir()
			t.Setenv("XDG_STATE_HOME", state)
			journal := filepath.Join(t.TempDir(), "j.jsonl")
			argv, must := sc.start(t)
			argv = append([]string{"--journal", journal}, argv...)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var out, errb bytes.Buffer
			began := time.Now()
			done := make(chan int, 1)
			go func() {
				defer func() {
					if p := recover(); p != nil {
						errb.WriteString(fmt.Sprintf("PANIC: %v", p))
						done <- -1
					}
				}()
				done <- Run(ctx, argv, &out, &errb)
			}()
			var r hostileRun
			select {
			case r.code = <-done:
			case <-time.After(25 * time.Second):
				score.hung++
				t.Fatalf("hung: no exit within 25 s (%v)", argv)
			}
			r.took = time.Since(began)
			r.stdout, r.stderr = out.String(), errb.String()
			r.journal, _ = os.ReadFile(journal)
			r.state = readTree(state)
			if ctx.Err() != nil {
				score.hung++
				t.Errorf("hung: the command ran out its 20 s deadline")
			}
			if !contains(sc.codes, r.code) {
				if r.code == -1 {
					score.crashed++
				}
				t.Errorf("exit %d, want one of %v\nstdout: %.600s\nstderr: %.600s", r.code, sc.codes, r.stdout, r.stderr)
			}
			if must != "" && !journalHolds(r.journal, must) {
				score.lost++
				t.Errorf("lost: the journal lacks what the server sent (%q)", must)
			}
			for what, text := range map[string]string{"stdout": r.stdout, "stderr": r.stderr, "journal": string(r.journal)} {
				if i := unsafeAt(text); i >= 0 {
					score.escapes++
					t.Errorf("escape leaked to %s at byte %d: %q", what, i, text[max(0, i-30):min(len(text), i+30)])
				}
			}
			for what, text := range map[string][]byte{"stdout": []byte(r.stdout), "stderr": []byte(r.stderr), "journal": r.journal, "state": r.state} {
				if bytes.Contains(text, []byte(hostileCanary)) {
					score.secrets++
					t.Errorf("secret leaked to %s", what)
				}
			}
			if sc.check != nil {
				sc.check(t, r)
			}
		})
	}
	t.Logf("hostile servers: %d scenarios tried, %d hung, %d crashed, %d lost, %d escapes leaked, %d secrets leaked",
		score.tried, score.hung, score.crashed, score.lost, score.escapes, score.secrets)
}

func hostileScenarios() []hostileScenario {
	hostile := func(mode string, extra ...string) func(t *testing.T) ([]string, string) {
		return func(t *testing.T) ([]string, string) {
			must := ""
			argv := append(extra, "--", testservers.BuildHostile(t), "-mode", mode)
			if mode == "escapes" {
				must = hostileEvil
				if len(extra) > 0 && extra[0] == "record" {
					argv = append(argv, "-exit-after-init") // a session that ends by itself
				}
			}
			return argv, must
		}
	}
	stderrHas := func(want ...string) func(t *testing.T, r hostileRun) {
		return func(t *testing.T, r hostileRun) {
			for _, w := range want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		}
	}
	return []hostileScenario{
		// 1. Server text on every headless output path.
		{name: "error text with escapes (call)", start: hostile("escapes", "call", "echo", "text=x"), codes: []int{exitServerErr},
			check: stderrHas("tool failed", "␛[2J")},
		{name: "descriptions with escapes (tools)", start: hostile("escapes", "tools"), codes: []int{exitOK}},
		{name: "descriptions with escapes (tools --json)", start: hostile("escapes", "tools", "--json"), codes: []int{exitOK},
			check: func(t *testing.T, r hostileRun) {
				var v map[string]any
				if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || !strings.Contains(r.stdout, `\u001b`) {
					t.Errorf("--json must stay JSON with the escapes as \\u sequences (%v):\n%s", err, r.stdout)
				}
			}},
		{name: "escapes in record output", start: hostile("escapes", "record"), codes: []int{exitOK, exitTransport},
			check: func(t *testing.T, r hostileRun) {
				if !strings.Contains(r.stdout, `\u202e`) || !strings.Contains(r.stdout, `hostile: \u001b[2J`) {
					t.Errorf("record should show the server's bytes, escaped:\n%.800s", r.stdout)
				}
			}},
		// 2, 3. Credentials stay with their origin; secrets in URLs.
		{name: "redirect to another origin with credentials", start: func(t *testing.T) ([]string, string) {
			other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
			t.Cleanup(other.Close)
			home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
			}))
			t.Cleanup(home.Close)
			return []string{"tools", "--bearer", hostileCanary, "-H", "X-Api-Key: " + hostileCanary, home.URL + "/mcp"}, ""
		}, codes: []int{exitTransport}, check: stderrHas("--allow-redirect")},
		{name: "secrets in the URL", start: func(t *testing.T) ([]string, string) {
			h := testservers.StartHTTPServer(t, testservers.HTTPOpts{})
			u := strings.Replace(h.URL, "http://", "http://ada:"+hostileCanary+"@", 1) + "?api_key=" + hostileCanary
			return []string{"tools", u}, ""
		}, codes: []int{exitOK}},
		// 4, 5. Every wait bounded; no speculative request.
		{name: "accepts TCP, never answers", start: func(t *testing.T) ([]string, string) {
			return []string{"tools", "--timeout", "1s", silentServer(t)}, ""
		}, codes: []int{exitTimeout}, check: func(t *testing.T, r hostileRun) {
			if r.took > 10*time.Second {
				t.Errorf("a silent server held mcpscope %s with --timeout 1s", r.took)
			}
		}},
		{name: "GETs stall, POSTs answer; no GET before the first POST", start: func(t *testing.T) ([]string, string) {
			return []string{"tools", stallingGETs(t)}, ""
		}, codes: []int{exitOK}},
		// 6. Bounds that are bounds.
		{name: "retry of 277 hours", start: func(t *testing.T) ([]string, string) {
			return []string{"call", "x", "--timeout", "1s", "--era", "legacy", closingStreams(t, "retry: 1000000000\n", false)}, ""
		}, codes: []int{exitTimeout}},
		{name: "fresh priming ids, retry 10ms", start: func(t *testing.T) ([]string, string) {
			return []string{"call", "x", "--era", "legacy", closingStreams(t, "retry: 10\n", true)}, ""
		}, codes: []int{exitTransport}, check: stderrHas("gave up after 5 resume attempts")},
		{name: "response with a string id", start: hostile("wrong-id", "call", "echo", "text=x", "--timeout", "1s"), codes: []int{exitTimeout},
			check: stderrHas("warning: response to unknown id", "ids are typed")},
		{name: "mute server", start: hostile("mute", "tools", "--timeout", "1s"), codes: []int{exitTimeout}},
		// 10, 11. Start-up.
		{name: "dies at start", start: hostile("die-at-start", "tools"), codes: []int{exitTransport},
			check: stderrHas("API_KEY is not set", "the whole exchange is in the journal", "␛[31mfatal")},
		{name: "exits on server/discover", start: hostile("exit-on-discover", "tools"), codes: []int{exitOK}},
		{name: "no resources capability", start: hostile("legacy", "resources"), codes: []int{exitOK},
			check: func(t *testing.T, r hostileRun) {
				if !strings.Contains(r.stdout, "declares no resources capability") {
					t.Errorf("stdout: %s", r.stdout)
				}
			}},
		{name: "malformed URL", start: func(t *testing.T) ([]string, string) {
			return []string{"tools", "http://ada:" + hostileCanary + "@[::1/mcp"}, ""
		}, codes: []int{exitUsage}},
	}
}

// silentServer accepts TCP connections and never answers on them.
func silentServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(done)
				return
			}
			conns = append(conns, c) // held open, never read or answered
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String() + "/mcp"
}

// stallingGETs answers POSTs but holds the standalone GET without a
// header, and fails the test if a GET comes before the first POST (a
// speculative request).
func stallingGETs(t *testing.T) string {
	var posted atomic.Bool
	release := make(chan struct{})
	srv := testservers.StartScripted(t, nil)
	srv.Listen = func(w http.ResponseWriter, r *http.Request) {
		if !posted.Load() {
			t.Error("a GET came before any POST")
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	t.Cleanup(func() { close(release) })
	scripted := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posted.Store(true)
		}
		scripted.ServeHTTP(w, r)
	})
	return srv.URL
}

// closingStreams answers tools/call (and every resume) with a priming
// event carrying retry, then closes the stream; fresh gives each one a new
// event id.
func closingStreams(t *testing.T, retry string, fresh bool) string {
	var n atomic.Int32
	srv := testservers.StartScripted(t, func(w http.ResponseWriter, r *http.Request, _ json.RawMessage, _ string) {
		id := int32(1)
		if fresh {
			id = n.Add(1)
		}
		testservers.SSE(w, fmt.Sprintf("id: p%d\n%sdata: \n\n", id, retry))
	})
	return srv.URL
}

// unsafeAt is where text holds a byte that could drive a terminal: a
// control other than newline and tab, or a hidden rune (bidi, C1, DEL).
func unsafeAt(text string) int {
	for i, r := range text {
		if (r < 0x20 && r != '\n' && r != '\t') || termsafe.Hidden(r) {
			return i
		}
	}
	return -1
}

// journalHolds reports whether a frame of the journal carries want in its
// exact bytes.
func journalHolds(file []byte, want string) bool {
	found := false
	_, _ = journal.Read(bytes.NewReader(file), func(_ uint64, f transport.Frame) error {
		found = found || bytes.Contains(f.Data, []byte(want))
		return nil
	})
	return found
}

func readTree(dir string) []byte {
	var all []byte
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(p)
			all = append(all, b...)
		}
		return nil
	})
	return all
}

func contains(codes []int, c int) bool {
	for _, x := range codes {
		if x == c {
			return true
		}
	}
	return false
}
