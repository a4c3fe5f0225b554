package session_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/testkit/faultproxy"
	"mcpscope/testkit/testservers"
	"mcpscope/transport"
)

// A real server behind a proxy that cuts streams at seeded random points,
// delays requests and answers some with 500: every call ends (result,
// resumed result, or error), no progress step is applied twice, and the
// journal holds every frame the session saw.
func TestFaultInjection(t *testing.T) {
	srv := testservers.StartHTTPServer(t, testservers.HTTPOpts{EventStore: true})
	var on atomic.Bool
	url, proxy := faultproxy.Start(t, srv.URL, faultproxy.Faults{
		Seed: 7, CutProbability: 0.5, MaxCutBytes: 800, Delay: 2 * time.Millisecond, Jitter: 5 * time.Millisecond,
		Fail500Every: 6, Match: func(*http.Request) bool { return on.Load() },
	})
	jpath := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := journal.Create(jpath, "faults")
	if err != nil {
		t.Fatal(err)
	}
	s := session.New(transport.NewHTTP(transport.HTTPOptions{URL: url}), session.Options{Journal: j})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if _, err := s.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	on.Store(true) // faults from here on: the handshake itself is not the subject

	var calls []*session.Call
	for i := 0; i < 12; i++ {
		if i%3 == 0 {
			calls = append(calls, s.Call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "x"}}))
		} else {
			calls = append(calls, s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 0.4, "steps": 4}}))
		}
	}
	var wg sync.WaitGroup
	for _, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Wait(ctx); ctx.Err() != nil {
				t.Errorf("call %s never ended: %v %+v", c.Key, err, c.Snapshot())
			}
		}()
	}
	wg.Wait()

	ok, failed := 0, 0
	for _, c := range calls {
		sn := c.Snapshot()
		switch sn.State {
		case session.StateOK:
			ok++
		case session.StateError:
			failed++
			if sn.Err() == nil || sn.Err().Error() == "" {
				t.Errorf("call %s failed without saying why", c.Key)
			}
		default:
			t.Errorf("call %s ended in state %s", c.Key, sn.State)
		}
		// No progress step applied twice: applied values strictly increase.
		last := -1.0
		for _, it := range s.Store().Since(0, 0) {
			if it.CallKey != c.Key || it.Env == nil || it.Env.Method != "notifications/progress" || it.Note != "" {
				continue
			}
			var p struct {
				Progress float64 `json:"progress"`
			}
			if err := jsonUnmarshal(it.Env.Params, &p); err != nil || p.Progress <= last {
				t.Errorf("call %s: progress %g applied after %g (a duplicate)", c.Key, p.Progress, last)
			}
			last = p.Progress
		}
		if sn.State == session.StateOK && sn.HasProgress && sn.Progress.Updates > 4 {
			t.Errorf("call %s: %d progress updates for 4 steps", c.Key, sn.Progress.Updates)
		}
	}
	st := proxy.Stats()
	if st.Cuts == 0 || st.Fail500 == 0 {
		t.Fatalf("the faults did not happen: %+v", st)
	}
	t.Logf("%d ok, %d failed; proxy: %d requests, %d cuts, %d 500s", ok, failed, st.Requests, st.Cuts, st.Fail500)
	if ok == 0 {
		t.Fatal("no call succeeded: resumption did not help at all")
	}

	s.Close()
	b, err := os.ReadFile(jpath)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if _, err := journal.Read(bytesReader(b), func(uint64, transport.Frame) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != s.Store().Len() {
		t.Fatalf("journal has %d frames, the session saw %d", n, s.Store().Len())
	}
}
