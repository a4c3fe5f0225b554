package cli

import (
	"mcpscope/framestore"
)

// followBatch bounds the frames read back at once.
const followBatch = 4096

// follow hands fn the frames after *seq that match, in order, and moves
// *seq on. It looks in the store's index and reads back only the frames
// that match: a command that follows one call reads that call's frames,
// not the session's.
func follow(st *framestore.Store, seq *uint64, match func(framestore.Entry) bool, fn func(*framestore.Item)) {
	for {
		var want []uint64
		st.Scan(*seq+1, 0, func(e framestore.Entry) bool {
			*seq = e.Seq
			if match(e) {
				want = append(want, e.Seq)
			}
			return len(want) < followBatch
		})
		for _, s := range want {
			if it := st.Get(s); it != nil {
				fn(it)
			}
		}
		if len(want) < followBatch {
			return
		}
	}
}
