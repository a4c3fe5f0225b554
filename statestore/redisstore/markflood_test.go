package redisstore_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/statestore/redisstore"
	"mcpscope/testkit/redistest"
	"mcpscope/testkit/testservers"
	"mcpscope/transport"
)

// timedStore counts a store's (fenced) marks and the time spent in them.
type timedStore struct {
	statestore.Store
	marks, ns atomic.Int64
}

func (s *timedStore) MarkFenced(handle string, m statestore.Mark, l statestore.Lease) error {
	start := time.Now()
	err := s.Store.MarkFenced(handle, m, l)
	s.ns.Add(int64(time.Since(start)))
	s.marks.Add(1)
	return err
}

// floodSteps is how many progress notifications one flood call gets.
const floodSteps = 10000

// BenchmarkProgressFloodMarks: what the per-step Mark (a progress step is
// written to the state store before it is shown) costs under a progress
// flood: the Go SDK's HTTP server with an event store sends floodSteps
// steps as fast as it can, the session follows the call with no state
// store, the file store and Redis. ns/step is the call's whole time per
// step; ns/mark the time one Mark took inside it.
//
//	go test -run '^$' -bench ProgressFloodMarks -benchtime 3x ./statestore/redisstore/
func BenchmarkProgressFloodMarks(b *testing.B) {
	url := testservers.StartHTTP(b, testservers.HTTPOpts{EventStore: true})
	srv := redistest.Start(b)
	rs, err := redisstore.Open(redisstore.Options{URL: srv.URL(0)})
	if err != nil {
		b.Fatal(err)
	}
	defer rs.Close()
	for _, bk := range []struct {
		name  string
		store statestore.Store
	}{{"none", nil}, {"file", &statestore.FileStore{Dir: b.TempDir()}}, {"redis", rs}} {
		b.Run(bk.name, func(b *testing.B) {
			var ts *timedStore
			o := session.Options{Timeout: -1, MaxTimeout: -1, Rejoin: session.RejoinInfo{Target: url}}
			if bk.store != nil {
				ts = &timedStore{Store: bk.store}
				o.StateStore = ts
			}
			var took time.Duration
			for range b.N {
				s := session.New(transport.NewHTTP(transport.HTTPOptions{URL: url}), o)
				if err := s.Start(); err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang guard
				if _, err := s.Initialize(ctx); err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				c := s.Call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 0, "steps": floodSteps}})
				if _, err := c.Wait(ctx); err != nil {
					b.Fatal(err)
				}
				took += time.Since(start)
				if n := c.Snapshot().Progress.Updates; n != floodSteps {
					b.Fatalf("%d steps shown, want %d", n, floodSteps)
				}
				cancel()
				s.Close()
			}
			b.ReportMetric(float64(took.Nanoseconds())/float64(b.N*floodSteps), "ns/step")
			if ts != nil && ts.marks.Load() > 0 {
				b.ReportMetric(float64(ts.ns.Load())/float64(ts.marks.Load()), "ns/mark")
				b.ReportMetric(float64(ts.marks.Load())/float64(b.N), "marks/op")
			}
		})
	}
}

// BenchmarkMark is one Mark alone, on a record that exists: the file
// store (write a temporary file, rename it over the mark) and Redis (one
// script round trip).
func BenchmarkMark(b *testing.B) {
	srv := redistest.Start(b)
	rs, err := redisstore.Open(redisstore.Options{URL: srv.URL(0)})
	if err != nil {
		b.Fatal(err)
	}
	defer rs.Close()
	for _, bk := range []struct {
		name  string
		store statestore.Store
	}{{"file", &statestore.FileStore{Dir: b.TempDir()}}, {"redis", rs}} {
		b.Run(bk.name, func(b *testing.B) {
			d := statestore.Detached{Handle: "bench-" + bk.name, Target: "http://127.0.0.1:1/mcp", SessionID: "s", Method: "tools/call"}
			if err := bk.store.Put(d); err != nil {
				b.Fatal(err)
			}
			m := statestore.Mark{Stream: "post:1", EventID: "ev", Progress: statestore.Progress{Updates: 1}}
			b.ResetTimer()
			for i := range b.N {
				m.Progress.Updates = i + 1
				if err := bk.store.Mark(d.Handle, m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
