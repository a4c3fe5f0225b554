package journal

import (
	"math/rand"
	"sync"
	"testing"
	"time"
)

// TestJournalStampIsRFC3339Nano: a record's time is written as
// time.RFC3339Nano writes it, for every fraction (none, trailing zeros,
// all nine digits), in UTC, fixed and real zones (a DST change among
// them), at years on the edges of four digits and beyond, one second after
// another and with the location changing from one call to the next.
func TestJournalStampIsRFC3339Nano(t *testing.T) {
	locs := []*time.Location{time.UTC, time.Local, time.FixedZone("", 0), time.FixedZone("IST", 5*3600+1800),
		time.FixedZone("x", -(3*3600 + 59)), time.FixedZone("lmt", 561)}
	if ny, err := time.LoadLocation("America/New_York"); err == nil {
		locs = append(locs, ny)
	}
	check := func(tm time.Time) {
		t.Helper()
		if got, want := string(appendStamp([]byte("x"), tm)), "x"+tm.Format(time.RFC3339Nano); got != want {
			t.Fatalf("%v (%s): got %s, want %s", tm, tm.Location(), got, want)
		}
	}
	rng := rand.New(rand.NewSource(3))
	nanos := []int{0, 1, 10, 100_000_000, 120_000_000, 999_999_999, 500, 123_456_789, 100}
	bases := []time.Time{time.Now(), time.Unix(0, 0), time.Date(2026, 3, 8, 6, 59, 58, 0, time.UTC), // New York's DST starts at 07:00 UTC
		time.Date(9999, 12, 31, 23, 59, 58, 0, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 6, 1, 0, 0, 0, 0, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
	for _, base := range bases {
		for s := range 4 {
			for _, ns := range nanos {
				for _, loc := range locs {
					check(base.Add(time.Duration(s)*time.Second + time.Duration(ns)).In(loc))
				}
			}
		}
	}
	for range 20000 {
		tm := time.Unix(rng.Int63n(1<<36)-1<<35, rng.Int63n(1e9))
		check(tm.In(locs[rng.Intn(len(locs))]))
	}
	// The same second from many goroutines, each in its own location.
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	now := time.Now()
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loc := locs[g%len(locs)]
			for i := range 2000 {
				tm := now.Add(time.Duration(i) * 997 * time.Microsecond).In(loc)
				if got, want := string(appendStamp(nil, tm)), tm.Format(time.RFC3339Nano); got != want {
					errs <- got + " want " + want
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

func BenchmarkJournalStamp(b *testing.B) {
	tm := time.Now()
	buf := make([]byte, 0, 64)
	b.Run("appendStamp", func(b *testing.B) {
		for b.Loop() {
			buf = appendStamp(buf[:0], tm)
		}
	})
	b.Run("AppendFormat", func(b *testing.B) {
		for b.Loop() {
			buf = tm.AppendFormat(buf[:0], time.RFC3339Nano)
		}
	})
}
