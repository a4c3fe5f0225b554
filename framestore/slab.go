package framestore

import (
	"sync"

	"mcpscope/journal"
	"mcpscope/transport"
)

// Slot is an item and its message's envelope in one allocation: ingest
// makes one for every message, and the two live and go together.
type Slot struct {
	it  Item
	env journal.Envelope
}

// Slab hands ingest's items out of chunks of slabChunk: one allocation for
// that many frames instead of one each (a quarter of what record added to
// reading a flood was allocating and collecting items). The window lets go
// of items in order, so a chunk goes soon after its last item does.
//
// When the store keeps no window (Store.NoWindow), an item is free once
// ingested, and is used again for the next frame (Put): record without a
// filter allocates no item at all.
type Slab struct {
	mu    sync.Mutex // stdout's and stderr's readers ingest at once
	chunk []Slot
	free  []*Slot
}

const (
	slabChunk = 32 // 20 KiB: a size class of its own
	slabFree  = 8  // the most items waiting to be used again (one per frame ingested at once)
)

func (a *Slab) get() *Slot {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := len(a.free); n > 0 {
		x := a.free[n-1]
		a.free = a.free[:n-1]
		return x
	}
	if len(a.chunk) == 0 {
		a.chunk = make([]Slot, slabChunk)
	}
	x := &a.chunk[0]
	a.chunk = a.chunk[1:]
	return x
}

// Put takes back an item nothing refers to any more.
func (a *Slab) Put(x *Slot) {
	*x = Slot{}
	a.mu.Lock()
	if len(a.free) < slabFree {
		a.free = append(a.free, x)
	}
	a.mu.Unlock()
}

// Item is f as an item, its message read once (Seq still to give); a frame
// that is not JSON becomes Garbage. x is where it was allocated, nil for a
// frame without a message.
func (a *Slab) Item(f *transport.Frame) (it *Item, x *Slot) {
	if f.Kind != transport.Message {
		return &Item{Frame: *f}, nil
	}
	x = a.get()
	it = &x.it
	var isJSON bool
	if it.Env, it.Batch, it.Class, isJSON = journal.DecodeFrameInto(f.Data, &x.env); !isJSON {
		f.Kind, it.Class = transport.Garbage, journal.ClassNone // the transport only looked at its first byte
	}
	it.Frame = *f
	return it, x
}
