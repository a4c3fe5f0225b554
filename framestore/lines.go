package framestore

import (
	"slices"
)

// JournalLines appends to buf the journal lines of frames from…to
// (inclusive), byte for byte as the journal holds them (each AppendRecord's
// line, newline included), in one read, and returns buf and, appended to
// ends, where each line ends in it. ok is false, with buf as it was, when
// the lines cannot be read that way: a frame without a line of this
// session's journal (no journal, a device or FIFO, a journal that failed, a
// gap), lines that do not follow each other, more than maxBytes of them, or
// a failed read. Then the caller encodes the frames itself (AppendRecord).
//
// It is how record prints a frame without encoding it a second time: the
// journal's writer has encoded it already.
func (s *Store) JournalLines(buf []byte, ends []int, from, to uint64, maxBytes int) (_ []byte, _ []int, ok bool) {
	if from > to {
		return buf, ends, true
	}
	s.mu.RLock()
	if s.src == nil || !s.has(from) || !s.has(to) {
		s.mu.RUnlock()
		return buf, ends, false
	}
	var (
		off, next int64
		span      int
		c         = newPageCursor()
		base      = len(buf)
		was       = len(ends)
	)
	for seq := from; seq <= to; seq++ {
		e := c.entry(s, seq)
		if seq == from {
			off, next = e.off, e.off
		}
		if e.kind == 0 || e.off < 0 || e.n == 0 || e.off != next || span+int(e.n) > maxBytes {
			s.mu.RUnlock()
			return buf, ends[:was], false
		}
		next += int64(e.n)
		span += int(e.n)
		ends = append(ends, base+span)
	}
	s.mu.RUnlock()
	buf = slices.Grow(buf, span)[:base+span]
	if s.src.ReadBack(buf[base:], off) != nil {
		return buf[:base], ends[:was], false
	}
	return buf, ends, true
}
