package ui

import (
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"mcpscope/session"
	"mcpscope/transport"
)

// floodSession is a live, journaled session with n items of history:
// calls with progress and log notifications, as a busy server leaves
// behind.
func floodSession(b testing.TB, n int) (*session.Session, *fakeTransport) {
	s, f := journaledSession(b, nil)
	for i := 0; i < 200; i++ {
		s.Call("tools/call", map[string]any{"name": "slow"})
	}
	for i := 0; s.Store().Len() < n; i++ {
		if i%2 == 0 {
			f.inject(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpscope-%d","progress":%d,"total":1000000,"message":"step %d"}}`, 1+i%200, i, i))
		} else {
			f.inject(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"flood","data":"log line with some text in it"}}`)
		}
	}
	return s, f
}

// flood injects notifications at rate per second (0: as fast as one
// goroutine can) until stop; sent counts them.
func flood(f *fakeTransport, rate int, stop <-chan struct{}, sent *atomic.Int64) {
	data := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"flood"}}`)
	start := time.Now()
	for {
		select {
		case <-stop:
			return
		default:
		}
		if rate > 0 && sent.Load() >= int64(time.Since(start).Seconds()*float64(rate)) {
			time.Sleep(200 * time.Microsecond)
			continue
		}
		f.sink(transport.Frame{Time: time.Now(), Dir: transport.In, Kind: transport.Message, Data: data})
		sent.Add(1)
	}
}

// BenchmarkView is the cost of one full-screen render with 100,000 items
// in history while a flood keeps arriving.
func BenchmarkView(b *testing.B) {
	for _, sz := range sizes {
		b.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(b *testing.B) {
			s, f := floodSession(b, 100_000)
			m := New(Options{Session: s, Clipboard: func(string) error { return nil }})
			m.Update(windowSize(sz.w, sz.h))
			stop := make(chan struct{})
			var sent atomic.Int64
			go flood(f, 0, stop, &sent)
			b.ResetTimer()
			start := time.Now()
			for i := 0; b.Loop(); i++ {
				if i%16 == 0 {
					m.Update(storeChangedMsg{}) // what the coalesced wake-up does
				}
				_ = m.View()
			}
			el := time.Since(start)
			close(stop)
			b.ReportMetric(float64(sent.Load())/el.Seconds(), "flood-msgs/s")
			b.ReportMetric(float64(s.Store().Len()), "items")
		})
	}
}

// keySamples is how many key presses BenchmarkKeyLatency times: enough
// that its p99 is a measured value, not an interpolation of a few.
const keySamples = 5000

// BenchmarkKeyLatency is the time from a key press to the next frame
// with 100,000 and 1,000,000 items and a flood of 10,000 notifications a
// second. As in the program, the store wakes the model at most once a
// frame (33 ms); a key that arrives behind such a wake-up waits for it,
// and that wait is counted. Keys scroll (to the oldest frame too, read
// back from the journal), page and switch filters.
func BenchmarkKeyLatency(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			s, f := floodSession(b, n)
			m := New(Options{Session: s, Clipboard: func(string) error { return nil }})
			m.Update(windowSize(120, 40))
			press(m, "focus-next")
			stop := make(chan struct{})
			var sent atomic.Int64
			go flood(f, 10_000, stop, &sent)
			names := []string{"up", "down", "page-up", "page-down", "kind-next", "top", "down", "page-down", "follow", "up"}
			ks := make([]tea.KeyPressMsg, len(names))
			for i, nm := range names {
				ks[i] = m.km.Press(nm)
			}
			var lat, pulls []time.Duration
			start := time.Now()
			for b.Loop() {
				lat, pulls = lat[:0], pulls[:0]
				lastPull := time.Now()
				for i := 0; i < keySamples; i++ {
					t0 := time.Now()
					if t0.Sub(lastPull) >= 33*time.Millisecond {
						m.Update(storeChangedMsg{}) // the wake-up the key queues behind
						_ = m.View()
						lastPull = time.Now()
						pulls = append(pulls, lastPull.Sub(t0))
					}
					m.Update(ks[i%len(ks)])
					_ = m.View()
					lat = append(lat, time.Since(t0))
					time.Sleep(time.Millisecond) // a person does not type at machine speed
				}
			}
			el := time.Since(start)
			close(stop)
			report(b, "", lat)
			report(b, "pull-", pulls)
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(sent.Load())/el.Seconds(), "flood-msgs/s")
			b.ReportMetric(float64(s.Store().Len()), "items")
			b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heap-MiB")
		})
	}
}

// report prints p50, p99 and max of samples.
func report(b *testing.B, prefix string, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	pct := func(p float64) float64 { return float64(d[int(p*float64(len(d)-1))].Microseconds()) }
	b.ReportMetric(pct(0.5), prefix+"p50-µs")
	b.ReportMetric(pct(0.99), prefix+"p99-µs")
	b.ReportMetric(pct(1), prefix+"max-µs")
	b.ReportMetric(float64(len(d)), prefix+"samples")
}
