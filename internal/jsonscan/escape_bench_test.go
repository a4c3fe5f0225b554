package jsonscan

import (
	"testing"

	"mcpscope/testkit/benchframes"
)

// BenchmarkAppendJSONText: the journal's escaper on each frame (B/s is
// bytes of frame escaped).
func BenchmarkAppendJSONText(b *testing.B) {
	for _, f := range benchframes.Frames {
		b.Run(f.Name, func(b *testing.B) {
			buf := make([]byte, 0, 2*len(f.Data))
			b.SetBytes(int64(len(f.Data)))
			for b.Loop() {
				buf = AppendJSONText(buf[:0], f.Data, false)
			}
		})
	}
}

// BenchmarkEscapeByteLoop is the reference on the same frames.
func BenchmarkEscapeByteLoop(b *testing.B) {
	for _, f := range benchframes.Frames {
		b.Run(f.Name, func(b *testing.B) {
			buf := make([]byte, 0, 2*len(f.Data))
			b.SetBytes(int64(len(f.Data)))
			for b.Loop() {
				buf = escapeByteLoop(buf[:0], f.Data)
			}
		})
	}
}
