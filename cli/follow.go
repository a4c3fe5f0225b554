package cli

import "mcpscope/session"

// followBatch bounds the frames read back at once.
const followBatch = 4096

// follow hands fn the frames after *seq that match, in order, and moves
// *seq on. It looks in the store's index and reads back only the frames
// that match: a command that follows one call reads that call's frames,
// not the session's.
func follow(st *session.Store, seq *uint64, match func(session.Entry) bool, fn func(*session.Item)) {
	for {
		var want []uint64
		st.Scan(*seq+1, 0, func(e session.Entry) bool {
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
