// Package bench measures ingest: notifications per second from a real child
// process over stdio, through the journal and the store, against a bare
// decode loop over the same bytes in the same run.
package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"mcpscope/framestore"
	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/transport"
)

// Lines makes n newline-terminated server notifications, alternating
// progress and log messages of realistic size.
func Lines(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpscope-1","progress":%d,"total":%d,"message":"step %d of %d"}}`+"\n", i, n, i, n)
		} else {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"bench","data":"line %d: the quick brown fox jumps over the lazy dog"}}`+"\n", i)
		}
	}
	return b.Bytes()
}

// Decode is the baseline: split lines and decode each JSON-RPC envelope
// with the decoder ingest itself uses (journal.Decode, one pass), nothing
// else, so that the ratio is what ingest adds to decoding. It returns the
// number of messages decoded.
func Decode(data []byte) (int, error) {
	r := bufio.NewReaderSize(bytes.NewReader(data), 1<<16)
	n := 0
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 1 {
			if env, batch := journal.Decode(line); env == nil && batch == nil {
				return n, fmt.Errorf("line %d is not a JSON-RPC message", n+1)
			}
			n++
		}
		if err != nil {
			return n, nil
		}
	}
}

// Ingest spawns `cat file` (a real process writing to a real pipe) into a
// session with a journal under dir and returns once every line is stored.
func Ingest(file, dir string, n int) (time.Duration, error) {
	j, err := journal.Create(filepath.Join(dir, "bench.jsonl"), "bench")
	if err != nil {
		return 0, err
	}
	t := transport.NewStdio(transport.StdioOptions{Command: "cat", Args: []string{file}, Grace: time.Second})
	s := session.New(t, session.Options{Journal: j, Timeout: -1, MaxTimeout: -1})
	start := time.Now()
	if err := s.Start(); err != nil {
		return 0, err
	}
	<-t.Done()
	elapsed := time.Since(start)
	s.Close()
	got := 0
	s.Store().Scan(0, 0, func(e framestore.Entry) bool {
		if e.Kind == transport.Message && e.Class == journal.ClassNotification {
			got++
		}
		return true
	})
	if got != n {
		return elapsed, fmt.Errorf("ingest stored %d of %d messages", got, n)
	}
	return elapsed, nil
}

// Result is one run's ingest figures.
type Result struct {
	N            int
	Rounds       int
	Baseline     time.Duration // the bare decode loop over the same bytes, with ingest's decoder
	Ingest       time.Duration
	AllocPerMsg  float64 // bytes allocated per message during ingest
	JournalBytes int64
}

// Ratio is the ingest rate as a fraction of the bare decode loop's.
func (r Result) Ratio() float64 { return r.Baseline.Seconds() / r.Ingest.Seconds() }

// Run measures n messages: the baseline decode, then the full ingest,
// rounds times alternately (the machine may be shared: each figure is the
// median of its rounds).
func Run(n, rounds int, dir string) (Result, error) {
	data := Lines(n)
	file := filepath.Join(dir, "lines.jsonl")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return Result{}, err
	}
	r := Result{N: n}
	var base, ingest []time.Duration
	for i := 0; i < max(1, rounds); i++ {
		start := time.Now()
		if got, err := Decode(data); err != nil || got != n {
			return r, fmt.Errorf("baseline decoded %d of %d: %v", got, n, err)
		}
		base = append(base, time.Since(start))

		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		d, err := Ingest(file, dir, n)
		if err != nil {
			return r, err
		}
		runtime.ReadMemStats(&after)
		ingest = append(ingest, d)
		r.AllocPerMsg = float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
		if st, err := os.Stat(filepath.Join(dir, "bench.jsonl")); err == nil {
			r.JournalBytes = st.Size()
		}
		os.Remove(filepath.Join(dir, "bench.jsonl"))
	}
	r.Rounds = len(base)
	r.Baseline, r.Ingest = median(base), median(ingest)
	return r, nil
}

// median sorts d: take what else is wanted of its order first (spread).
func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// spread is the smallest and largest of f(a[i], b[i]) over paired rounds:
// how far one pair can stray from the median, which says how much a
// single run on this machine can be trusted.
func spread(a, b []time.Duration, f func(a, b time.Duration) float64) (lo, hi float64) {
	for i := range min(len(a), len(b)) {
		x := f(a[i], b[i])
		if i == 0 || x < lo {
			lo = x
		}
		if i == 0 || x > hi {
			hi = x
		}
	}
	return lo, hi
}

func rate(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }

// String formats the figures for people.
func (r Result) String() string {
	return fmt.Sprintf(`ingest: %d notifications from a real pipe (cat), through journal and store, against a bare decode loop over the same bytes (median of %d rounds)
  bare decode loop (journal.Decode)   %9.0f msg/s  %s
  stdio → journal → store             %9.0f msg/s  %s
  ingest / decode loop                %9.0f %%
  allocated during ingest             %9.0f bytes/message
  journal written                     %9.1f MiB
`, r.N, r.Rounds, rate(r.N, r.Baseline), r.Baseline.Round(time.Millisecond), rate(r.N, r.Ingest), r.Ingest.Round(time.Millisecond),
		100*r.Ratio(), r.AllocPerMsg, float64(r.JournalBytes)/(1<<20))
}
