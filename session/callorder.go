package session

import "iter"

// callOrder is a session's calls in the order made, in chunks: a chunk
// whose calls all went out of memory (spill.go) is let go, so an opened
// journal's order costs next to nothing a call.
type callOrder struct {
	chunks [][]*Call // orderChunk calls each; nil once none of its calls is in memory
	held   []int32   // calls in memory in each chunk
	n      int
}

const orderChunk = 1024

func (o *callOrder) len() int { return o.n }

// at is call i, nil when it went out of memory.
func (o *callOrder) at(i int) *Call {
	if ch := o.chunks[i/orderChunk]; ch != nil {
		return ch[i%orderChunk]
	}
	return nil
}

func (o *callOrder) add(c *Call) {
	if o.n%orderChunk == 0 {
		o.chunks = append(o.chunks, make([]*Call, orderChunk))
		o.held = append(o.held, 0)
	}
	o.set(o.n, c)
	o.n++
}

// set puts c (nil: the call went out of memory) as call i.
func (o *callOrder) set(i int, c *Call) {
	k := i / orderChunk
	ch := o.chunks[k]
	if ch == nil {
		if c == nil {
			return
		}
		ch = make([]*Call, orderChunk)
		o.chunks[k] = ch
	}
	switch old := ch[i%orderChunk]; {
	case old == nil && c != nil:
		o.held[k]++
	case old != nil && c == nil:
		o.held[k]--
	}
	ch[i%orderChunk] = c
	if o.held[k] == 0 && (k+1)*orderChunk <= o.n {
		o.chunks[k] = nil // full, and none of it in memory
	}
}

// all is the calls memory holds, in order.
func (o *callOrder) all() iter.Seq[*Call] {
	return o.from(0)
}

// from is the calls memory holds from call i on, in order.
func (o *callOrder) from(i int) iter.Seq[*Call] {
	return func(yield func(*Call) bool) {
		for k := i / orderChunk; k < len(o.chunks); k++ {
			ch := o.chunks[k]
			if ch == nil {
				continue
			}
			for j := max(i-k*orderChunk, 0); j < orderChunk && k*orderChunk+j < o.n; j++ {
				if c := ch[j]; c != nil && !yield(c) {
					return
				}
			}
		}
	}
}
