package session

import "slices"

// JournalLines appends to buf the journal lines of frames from…to
// (inclusive), byte for byte as the journal holds them (each AppendRecord's
// line, newline included), in one read, and returns buf and where each
// line ends in it. ok is false, with buf as it was, when the lines cannot
// be read that way: a frame without a line of this session's journal (no
// journal, a device or FIFO, a journal that failed, a gap), lines that do
// not follow each other, more than maxBytes of them, or a failed read.
// Then the caller encodes the frames itself (AppendRecord).
//
// It is how record prints a frame without encoding it a second time: the
// journal's writer has encoded it already.
func (s *Store) JournalLines(buf []byte, from, to uint64, maxBytes int) (_ []byte, ends []int, ok bool) {
	if from > to {
		return buf, nil, true
	}
	s.mu.RLock()
	if s.src == nil || !s.has(from) || !s.has(to) {
		s.mu.RUnlock()
		return buf, nil, false
	}
	start := s.entryAt(from)
	off, span := start.off, 0
	ends = make([]int, 0, to-from+1)
	base := len(buf)
	for seq := from; seq <= to; seq++ {
		e := start
		if seq != from {
			e = s.entryAt(seq)
		}
		if e.kind == 0 || e.off < 0 || e.n == 0 || e.off != off+int64(span) || span+int(e.n) > maxBytes {
			s.mu.RUnlock()
			return buf, nil, false
		}
		span += int(e.n)
		ends = append(ends, base+span)
	}
	s.mu.RUnlock()
	buf = slices.Grow(buf, span)[:base+span]
	if s.src.readAt(buf[base:], off) != nil {
		return buf[:base], nil, false
	}
	return buf, ends, true
}
