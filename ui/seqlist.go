package ui

import (
	"math/bits"
	"sort"
)

// seqList is an ordered list of frame numbers: the rows of a pane. It is
// a bitmap over frame numbers in blocks of blockSeqs, with the rows before
// each block counted: a block whose rows follow each other (a flood of
// notifications) is 8 bytes, any other 72, so a pane costs at most a bit
// and a fraction a frame however its kinds alternate (runs of consecutive
// rows took 8 bytes a run: 63 MB for ten million alternating frames).
type seqList struct {
	base   uint64     // seq of the first block's first bit
	blocks []seqBlock // one for each blockSeqs frames from base, up to the last row's
	words  []uint64   // the mixed blocks' bitmaps, blockWords each
	n      int        // rows added
	lo     int        // rows before lo were trimmed
}

// seqBlock is one block: the rows before it (counted from the first row
// ever added), and where its rows are. at >= 0: its bitmap is
// words[at:at+blockWords]; at < 0: its rows are consecutive from offset
// -at-1 (none yet: the block's count is 0).
type seqBlock struct {
	cum uint32
	at  int32
}

const (
	blockWords = 8
	blockSeqs  = blockWords * 64
)

func (l *seqList) len() int { return l.n - l.lo }

func (l *seqList) at(i int) uint64 { return l.seqOf(l.lo + i) }

// count is the number of rows in block b.
func (l *seqList) count(b int) int {
	if b+1 < len(l.blocks) {
		return int(l.blocks[b+1].cum - l.blocks[b].cum)
	}
	return l.n - int(l.blocks[b].cum)
}

// seqOf is the frame of row r (counted from the first row ever added).
func (l *seqList) seqOf(r int) uint64 {
	b := sort.Search(len(l.blocks), func(b int) bool { return int(l.blocks[b].cum) > r }) - 1
	// Blocks with no rows share their cum with the next: the last of them
	// with cum <= r is the one holding row r.
	j := r - int(l.blocks[b].cum)
	start := l.base + uint64(b)*blockSeqs
	blk := l.blocks[b]
	if blk.at < 0 {
		return start + uint64(-blk.at-1) + uint64(j)
	}
	for w, word := range l.words[blk.at : blk.at+blockWords] {
		if c := bits.OnesCount64(word); j >= c {
			j -= c
			continue
		}
		for ; j > 0; j-- {
			word &= word - 1 // drop the lowest row
		}
		return start + uint64(w*64+bits.TrailingZeros64(word))
	}
	panic("seqList: row out of range")
}

// add appends seq, which follows every frame added before.
func (l *seqList) add(seq uint64) {
	if seq < l.base {
		return // before the list's first frame (callers add from there on)
	}
	off := seq - l.base
	b := int(off / blockSeqs)
	for len(l.blocks) <= b {
		l.blocks = append(l.blocks, seqBlock{cum: uint32(l.n), at: -1})
	}
	in := int(off % blockSeqs)
	blk := &l.blocks[b]
	c := l.count(b)
	switch {
	case blk.at >= 0:
	case c == 0:
		blk.at = int32(-in - 1)
		l.n++
		return
	case -int(blk.at)-1+c == in:
		l.n++ // the next of the block's consecutive rows
		return
	default:
		// A gap: the block becomes a bitmap of the rows it had.
		from := -int(blk.at) - 1
		at := len(l.words)
		l.words = append(l.words, make([]uint64, blockWords)...)
		for k := from; k < from+c; k++ {
			l.words[at+k/64] |= 1 << (k % 64)
		}
		blk.at = int32(at)
	}
	l.words[int(blk.at)+in/64] |= 1 << (in % 64)
	l.n++
}

// trimBelow drops the rows before seq and says how many went.
func (l *seqList) trimBelow(seq uint64) int {
	n := sort.Search(l.len(), func(i int) bool { return l.at(i) >= seq })
	l.lo += n
	l.dropBlocks()
	return n
}

// dropBlocks lets go of the blocks wholly before row lo, now and then (a
// session without a journal forgets its old frames: its panes follow).
func (l *seqList) dropBlocks() {
	k := sort.Search(len(l.blocks), func(b int) bool { return int(l.blocks[b].cum) > l.lo }) - 1
	if k <= 4096 || k <= len(l.blocks)/2 {
		return
	}
	rest := make([]seqBlock, len(l.blocks)-k)
	var words []uint64
	for i, blk := range l.blocks[k:] {
		if blk.at >= 0 {
			at := len(words)
			words = append(words, l.words[blk.at:blk.at+blockWords]...)
			blk.at = int32(at)
		}
		rest[i] = blk
	}
	l.blocks, l.words = rest, words
	l.base += uint64(k) * blockSeqs
}
