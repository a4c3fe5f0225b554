package journal

import (
	"testing"

	"mcpscope/testkit/benchframes"
)

// BenchmarkUnescapeRaw: read-back's string decoder on each frame as the
// journal writes it (B/s is bytes of frame decoded).
func BenchmarkUnescapeRaw(b *testing.B) {
	for _, f := range benchframes.Frames {
		b.Run(f.Name, func(b *testing.B) {
			raw := appendJSONString(nil, f.Data)
			scratch := &rawScratch{borrow: true}
			b.SetBytes(int64(len(f.Data)))
			for b.Loop() {
				if _, _, ok := unescapeRaw(raw, 0, false, false, scratch); !ok {
					b.Fatal("unescapeRaw failed")
				}
			}
		})
	}
}
