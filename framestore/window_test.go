package framestore

import (
	"testing"

	"mcpscope/journal"
	"mcpscope/transport"
)

// The window's byte count is what it holds: once the ring is full, each
// new item's slot was the oldest item's, and that item's bytes stayed in
// the count, so a long session's window ended up held by bytes it no
// longer had (here: seven items of eight, and in a real session a frame
// of a few MiB evicting thousands of frames that fit).
func TestWindowCountsTheBytesItHolds(t *testing.T) {
	s := New(nil, nil)
	s.window, s.winBytes = 8, 10*(100+itemOverhead)
	s.ring = s.ring[:s.window]
	for i := uint64(1); i <= 1000; i++ {
		s.Add(&Item{Seq: i, Frame: transport.Frame{Kind: transport.Message, Data: make([]byte, 100)}}, journal.LinePos{Off: -1})
	}
	held := 0
	for seq := uint64(1); seq <= 1000; seq++ {
		if s.inRing(seq) != nil {
			held++
		}
	}
	if held != 8 || s.ringBytes != 8*(100+itemOverhead) {
		t.Fatalf("the window holds %d items and counts %d bytes; want all 8 it has room for, %d bytes", held, s.ringBytes, 8*(100+itemOverhead))
	}
	// A frame of most of the byte bound evicts what it must, and
	// the next small one what the bound requires, no more.
	s.Add(&Item{Seq: 1001, Frame: transport.Frame{Kind: transport.Message, Data: make([]byte, 8*(100+itemOverhead))}}, journal.LinePos{Off: -1})
	s.Add(&Item{Seq: 1002, Frame: transport.Frame{Kind: transport.Message, Data: make([]byte, 100)}}, journal.LinePos{Off: -1})
	if s.inRing(1001) == nil || s.inRing(1002) == nil || s.inRing(1000) != nil {
		t.Fatalf("after a big frame: 1000 %v, 1001 %v, 1002 %v; want the big one and the next only", s.inRing(1000) != nil, s.inRing(1001) != nil, s.inRing(1002) != nil)
	}
}
