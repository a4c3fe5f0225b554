package bench

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestIngestCountsEveryMessage proves the measured path stores every line.
func TestIngestCountsEveryMessage(t *testing.T) {
	r, err := Run(2000, 1, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if r.JournalBytes == 0 {
		t.Fatal("journal is empty after ingest")
	}
}

func BenchmarkDecodeBaseline(b *testing.B) {
	data := Lines(10000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if n, err := Decode(data); err != nil || n != 10000 {
			b.Fatal(n, err)
		}
	}
	b.ReportMetric(float64(10000*b.N)/b.Elapsed().Seconds(), "msg/s")
}

func BenchmarkIngest(b *testing.B) {
	dir := b.TempDir()
	data := Lines(10000)
	file := filepath.Join(dir, "lines.jsonl")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Ingest(file, b.TempDir(), 10000); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(10000*b.N)/b.Elapsed().Seconds(), "msg/s")
}

// The proxy row's CPU figure reads /proc/PID/stat: it must parse and
// count the CPU a process spends (here this one's, spinning until the
// 10 ms clock ticks).
func TestProcCPUCounts(t *testing.T) {
	c0, ok := procCPU(os.Getpid())
	if !ok {
		t.Skip("no /proc here")
	}
	deadline := time.Now().Add(20 * time.Second) // a hang guard
	x := 0
	for time.Now().Before(deadline) {
		for i := 0; i < 1e6; i++ {
			x += i
		}
		if c1, _ := procCPU(os.Getpid()); c1 > c0 {
			return
		}
	}
	t.Fatalf("procCPU stayed at %v after 20s of spinning (%d)", c0, x)
}

// TestSpread: the smallest and largest of a pair-by-pair figure, pairs
// taken in their rounds' order (not sorted first), extra rounds of one
// side ignored.
func TestSpread(t *testing.T) {
	s := time.Second
	a := []time.Duration{2 * s, 3 * s, 8 * s, 5 * s}
	b := []time.Duration{4 * s, 1 * s, 4 * s}
	lo, hi := spread(a, b, func(a, b time.Duration) float64 { return a.Seconds() / b.Seconds() })
	if lo != 0.5 || hi != 3 {
		t.Fatalf("spread %v to %v, want 0.5 to 3", lo, hi)
	}
}
