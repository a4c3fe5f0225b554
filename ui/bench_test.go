package ui

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"mcpscope/session"
	"mcpscope/transport"
)

// floodSession is a live session with n items of history: calls with
// progress and log notifications, as a busy server leaves behind.
func floodSession(b *testing.B, n int) (*session.Session, *fakeTransport) {
	s, f := liveSession(b, nil)
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

// flood injects notifications as fast as one goroutine can until stop;
// it returns how many it sent.
func flood(f *fakeTransport, stop <-chan struct{}, sent *atomic.Int64) {
	data := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"flood"}}`)
	for {
		select {
		case <-stop:
			return
		default:
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
			go flood(f, stop, &sent)
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

// BenchmarkKeyLatency is the time from a key press to the next frame
// (Update + View) with 100,000 items and a live flood. Wake-ups from the
// store are interleaved the way the program delivers them.
func BenchmarkKeyLatency(b *testing.B) {
	s, f := floodSession(b, 100_000)
	m := New(Options{Session: s, Clipboard: func(string) error { return nil }})
	m.Update(windowSize(120, 40))
	press(m, "focus-next")
	stop := make(chan struct{})
	var sent atomic.Int64
	go flood(f, stop, &sent)
	keys := []tea.KeyPressMsg{m.km.Press("up"), m.km.Press("down"), m.km.Press("page-up"), m.km.Press("filter")}
	var lat []time.Duration
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		m.Update(storeChangedMsg{})
		t := time.Now()
		m.Update(keys[i%len(keys)])
		_ = m.View()
		lat = append(lat, time.Since(t))
	}
	el := time.Since(start)
	close(stop)
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(pct(0.5), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(pct(1), "max-µs")
	b.ReportMetric(float64(sent.Load())/el.Seconds(), "flood-msgs/s")
	b.ReportMetric(float64(s.Store().Len()), "items")
}
