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
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"mcpscope/internal/filelock"
	"mcpscope/statestore"
	"mcpscope/statestore/redisstore"
	"mcpscope/testkit/redistest"
)

const (
	trustBearer = "bearer-canary-7f3a"
	trustCloud  = "cloud-canary-91c2"
	trustRedis  = "redis-canary-5d10"
)

// recorder is an HTTP server that keeps every request's headers and
// answers 404 (a session it does not know): where a rejoin's credentials
// went.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // method, URL and headers of each request
}

func startRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s\n", req.Method, req.URL)
		req.Header.Write(&b)
		r.mu.Lock()
		r.seen = append(r.seen, b.String())
		r.mu.Unlock()
		http.Error(w, "no such session", http.StatusNotFound)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// leaked is the first canary that reached r.
func (r *recorder) leaked() string {
	for _, req := range r.requests() {
		for _, c := range []string{trustBearer, trustCloud, trustRedis} {
			if strings.Contains(req, c) {
				return c + " in:\n" + req
			}
		}
	}
	return ""
}

func forged(handle, target string, refs map[string]string) statestore.Detached {
	return statestore.Detached{Handle: handle, Target: target, Transport: "http", SecretRefs: refs, SessionID: "s1",
		ProtocolVersion: "2025-11-25", RequestID: json.RawMessage("3"), Method: "tools/call", Name: "slow",
		LastEventIDs: map[string]string{"post:3": "e.1"}, Started: time.Now()}
}

func trustEnv(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv(statestore.EnvStateKey, "")
	t.Setenv("MY_CLOUD_TOKEN", trustCloud)
	t.Setenv("REDISCLI_AUTH", trustRedis)
	t.Setenv("MCPSCOPE_BEARER", "")
}

func rejoinRun(argv ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Run(context.Background(), append([]string{"rejoin", "--no-journal"}, argv...), &out, &errb)
	return code, out.String(), errb.String()
}

// Records planted by someone who can write to the store (the file store
// here, a real redis-server below) get no credential and no environment
// value to an origin the user did not name: env: references other than
// the one mcpscope writes are refused by name, a foreign record's
// flag:--bearer is refused with the --url that would name its origin, the
// target is printed before anything is sent, and a record never makes
// mcpscope run a program.
func TestForgedRecordsFileStore(t *testing.T) {
	trustEnv(t)
	forgedRecordCases(t, nil, func(d statestore.Detached) {
		if err := statestore.Default().Put(d); err != nil {
			t.Fatal(err)
		}
	})
}

func TestForgedRecordsRedis(t *testing.T) {
	trustEnv(t)
	srv := redistest.Start(t)
	store, err := redisstore.Open(redisstore.Options{URL: srv.URL(0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	forgedRecordCases(t, []string{"--state", srv.URL(0)}, func(d statestore.Detached) {
		if err := store.Put(d); err != nil {
			t.Fatal(err)
		}
	})
}

func forgedRecordCases(t *testing.T, state []string, put func(statestore.Detached)) {
	evil := startRecorder(t)
	target := evil.URL + "/mcp"
	mark := filepath.Join(t.TempDir(), "ran")
	huge := strings.Repeat("\x1b[2J\x1b]52;c;Zm9v\x07\u202e", 20000)

	for _, c := range []struct {
		name    string
		d       statestore.Detached
		argv    []string
		code    int
		want    []string // in stderr
		reached bool     // the request goes out (without credentials)
	}{
		{"env ref", forged("f-env", target, map[string]string{"X-Leak": "env:MY_CLOUD_TOKEN"}), []string{"--bearer", trustBearer},
			exitUsage, []string{"MY_CLOUD_TOKEN", "refused"}, false},
		{"redis password", forged("f-redis", target, map[string]string{"X-Leak": "env:REDISCLI_AUTH"}), nil,
			exitUsage, []string{"REDISCLI_AUTH", "refused"}, false},
		{"bearer env in another header", forged("f-envhdr", target, map[string]string{"X-Leak": "env:MCPSCOPE_BEARER"}), nil,
			exitUsage, []string{"refused"}, false},
		{"flag bearer", forged("f-bearer", target, map[string]string{"Authorization": "flag:--bearer"}), []string{"--bearer", trustBearer},
			exitUsage, []string{"foreign", "--url " + target, "rejoin: call f-bearer on " + target}, false},
		{"user's bearer, record asks none", forged("f-plain", target, nil), []string{"--bearer", trustBearer},
			exitUsage, []string{"foreign", "--bearer is given", "--url " + target}, false},
		{"credential header by value", func() statestore.Detached {
			d := forged("f-hdr", target, nil)
			d.Headers = map[string]string{"Authorization": "Bearer attacker"}
			return d
		}(), nil, exitUsage, []string{"credential header"}, false},
		{"unknown ref", forged("f-ref", target, map[string]string{"X-Leak": "file:/etc/passwd"}), nil,
			exitUsage, []string{"refused"}, false},
		{"stdio", func() statestore.Detached {
			d := forged("f-stdio", "sh -c 'touch "+mark+"'", nil)
			d.Transport = "stdio"
			return d
		}(), nil, exitUsage, []string{"never makes mcpscope run a program"}, false},
		{"command target", forged("f-cmd", "touch "+mark, nil), nil, exitUsage, []string{"not an http(s) URL"}, false},
		{"escape target", forged("f-esc", target+"/\x1b]52;c;Zm9v\x07", nil), nil, exitUsage, []string{"refused"}, false},
		{"huge target", forged("f-huge", target+"/"+strings.Repeat("a", 1<<20), nil), nil, exitUsage, []string{"bytes"}, false},
		{"another handle", forged("f-other", target, nil), nil,
			exitUsage, []string{"says it is call f-other"}, false},
		// Nothing asked, nothing given: it goes there, bare (no login either).
		{"bare", func() statestore.Detached {
			d := forged("f-bare", target, nil)
			d.Name, d.Method = huge, huge
			return d
		}(), nil, 0, []string{"rejoin: call f-bare on " + target, "no credential goes there unless --url names it"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(evil.requests())
			handle := c.d.Handle
			if c.name == "another handle" { // kept as f-asked, it says it is f-other
				handle = "f-asked"
				putAs(t, state, handle, c.d)
			} else {
				put(c.d)
			}
			// The env bearer is not a given credential: never sent to a foreign origin either.
			t.Setenv("MCPSCOPE_BEARER", trustBearer)
			code, out, errs := rejoinRun(append(append(append([]string{}, state...), c.argv...), handle)...)
			if c.code != 0 && code != c.code {
				t.Fatalf("exit %d, want %d; stderr:\n%.2000s", code, c.code, errs)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%.2000s", w, errs)
				}
			}
			if strings.ContainsAny(errs+out, "\x1b\x07") || strings.Contains(errs+out, "\u202e") {
				t.Errorf("a control sequence reached the terminal:\n%q", errs+out)
			}
			if len(errs) > 8000 {
				t.Errorf("stderr is %d bytes: hostile fields are not bounded", len(errs))
			}
			if reached := len(evil.requests()) > before; reached != c.reached {
				t.Errorf("request reached the record's origin: %v, want %v; stderr:\n%.2000s", reached, c.reached, errs)
			}
			if l := evil.leaked(); l != "" {
				t.Fatalf("a credential reached an origin the user did not name: %s", l)
			}
			if _, err := os.Stat(mark); err == nil {
				t.Fatal("a record made mcpscope run a program")
			}
		})
	}
	// The list shows them inert and bounded, each marked foreign.
	code, out, errs := rejoinRun(state...)
	if code != 0 || strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, "foreign") {
		t.Fatalf("list: exit %d\n%.3000q\n%s", code, out, errs)
	}
	for _, l := range strings.Split(out, "\n") {
		if len(l) > 1200 {
			t.Fatalf("a listed line is %d bytes", len(l))
		}
	}
	// Named with --url, the same origin gets what the record asks for:
	// the user said so (and the recorder does see credentials).
	put(forged("f-named", target, map[string]string{"Authorization": "flag:--bearer"}))
	_, _, errs = rejoinRun(append(append([]string{}, state...), "--bearer", trustBearer, "--url", target, "f-named")...)
	if l := evil.leaked(); !strings.HasPrefix(l, trustBearer) || !strings.Contains(errs, "--url names its origin") {
		t.Fatalf("with --url naming the origin the bearer should go there; got %q\n%s", l, errs)
	}
}

// putAs writes d under handle as raw JSON, the way anyone with write access
// to the store can.
func putAs(t *testing.T, state []string, handle string, d statestore.Detached) {
	b, _ := json.Marshal(d)
	if len(state) == 0 {
		dir := statestore.Default().Dir
		os.MkdirAll(dir, 0o700)
		if err := os.WriteFile(filepath.Join(dir, handle+".json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	o, err := redis.ParseURL(state[1])
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(o)
	defer c.Close()
	if err := c.Set(context.Background(), "mcpscope:call:"+handle, b, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
}

var sealedRuns atomic.Int64

// A record sealed on "another machine" (its own config folder) with the
// key the user copied there is trusted with --bearer alone; sealed with
// another key it is foreign and refused.
func TestSealedRecordFromAnotherMachine(t *testing.T) {
	trustEnv(t)
	srv := startRecorder(t)
	target := srv.URL + "/mcp"
	machineA := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", machineA)
	// A handle of its own per run: this process remembers the handles it
	// rejoined as foreign (statestore.KeepForeign) and never seals them.
	h := fmt.Sprintf("sealed-%d", sealedRuns.Add(1))
	d := forged(h, target, map[string]string{"Authorization": "flag:--bearer"})
	statestore.SealRecord(&d)
	if d.Tag == "" {
		t.Fatal("not sealed")
	}
	if err := statestore.Default().Put(d); err != nil {
		t.Fatal(err)
	}
	// Machine B without the key: foreign, refused, nothing sent.
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if code, _, errs := rejoinRun("--bearer", trustBearer, h); code != exitUsage || !strings.Contains(errs, "foreign") || srv.leaked() != "" {
		t.Fatalf("without the shared key: exit %d, leaked %q\n%s", code, srv.leaked(), errs)
	}
	// The key file copied to B: trusted.
	key, err := os.ReadFile(filepath.Join(machineA, "mcpscope", "state.key"))
	if err != nil {
		t.Fatal(err)
	}
	machineB := os.Getenv("XDG_CONFIG_HOME")
	os.MkdirAll(filepath.Join(machineB, "mcpscope"), 0o700)
	if err := os.WriteFile(filepath.Join(machineB, "mcpscope", "state.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	_, out, _ := rejoinRun(h)
	if _, _, errs := rejoinRun("--bearer", trustBearer, h); !strings.HasPrefix(srv.leaked(), trustBearer) ||
		!strings.Contains(errs, "record sealed with your state key") {
		t.Fatalf("with the shared key and --bearer: %q\n%s", srv.leaked(), errs)
	}
	if strings.Contains(out, "foreign") {
		t.Fatal(out)
	}
	// Or the same key given as the environment variable.
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv(statestore.EnvStateKey, strings.TrimSpace(string(key)))
	if err := statestore.Default().Put(d); err != nil { // the rejoin above ended it (the server knew no session)
		t.Fatal(err)
	}
	if _, out, _ := rejoinRun(); strings.Contains(out, "foreign") || !strings.Contains(out, h) {
		t.Fatalf("with $%s the record is not foreign:\n%s", statestore.EnvStateKey, out)
	}
}

// A rejoiner that wins the lease after the winner finished (the record
// deleted, the lease let go) finds the record gone and says so, exit 1,
// writing nothing: it claims before it reads. The store's lease lock holds
// the late rejoiner at its claim while the "winner" finishes.
func TestRejoinClaimsBeforeItReads(t *testing.T) {
	trustEnv(t)
	srv := startRecorder(t)
	store := statestore.Default()
	d := forged("race-1", srv.URL+"/mcp", nil)
	statestore.SealRecord(&d)
	if err := store.Put(d); err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(filepath.Clean(store.Dir)+".leases", ".lock")
	os.MkdirAll(filepath.Dir(lockPath), 0o700)
	lf, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	if err := filelock.Lock(lf); err != nil {
		t.Fatal(err)
	}
	type res struct {
		code      int
		out, errs string
	}
	done := make(chan res, 1)
	go func() {
		code, out, errs := rejoinRun("race-1")
		done <- res{code, out, errs}
	}()
	waitBlockedOn(t, lockPath)
	// The winner finishes: its record goes, then its lease.
	if err := store.Delete("race-1"); err != nil {
		t.Fatal(err)
	}
	filelock.Unlock(lf)
	var r res
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the late rejoiner did not end within 60s")
	}
	if r.code != exitServerErr || !strings.Contains(r.errs, "already finished or was forgotten") {
		t.Fatalf("late rejoiner: exit %d\n%s", r.code, r.errs)
	}
	if n := len(srv.requests()); n != 0 {
		t.Fatalf("the late rejoiner reached the server %d times", n)
	}
	if _, err := store.Get("race-1"); err == nil {
		t.Fatal("the late rejoiner wrote the finished call's record back")
	}
	if hs, _ := store.Holders(statestore.CallLease("race-1")); len(hs) != 0 {
		t.Fatalf("the late rejoiner kept its claim: %+v", hs)
	}
}
