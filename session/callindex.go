package session

import (
	"slices"
	"sort"
	"strings"
)

// callIndex finds a session's calls by key. Calls go into a map as the
// session makes or meets them; a journal read back, once loaded, moves
// its calls into a slice sorted by key (8 bytes a call where a map entry
// took about 50: at ten million frames, 60 MB of the session's heap).
// The map is asked first, so a call added after the freeze wins over a
// read-back call with its key, as the later write to one map did.
type callIndex struct {
	m      map[string]*Call
	frozen []*Call // sorted by Key: for a key, the call the map held when frozen
	// spilled finds a call gone out of memory under key (spill.go); nil
	// while nothing can go. It is asked last: a call in memory under the
	// key is newer.
	spilled func(key string) *Call
}

func newCallIndex() callIndex { return callIndex{m: map[string]*Call{}} }

// get is the call under key, nil when there is none.
func (x *callIndex) get(key string) *Call {
	if c, ok := x.m[key]; ok {
		return c
	}
	i := sort.Search(len(x.frozen), func(i int) bool { return x.frozen[i].Key >= key })
	if i < len(x.frozen) && x.frozen[i].Key == key {
		return x.frozen[i]
	}
	if x.spilled != nil {
		return x.spilled(key)
	}
	return nil
}

// forget drops c from the map, when the map has it under its key (it goes
// out of memory: spill.go).
func (x *callIndex) forget(c *Call) {
	if x.m[c.Key] == c {
		delete(x.m, c.Key)
	}
}

// has reports whether a call is under key.
func (x *callIndex) has(key string) bool { return x.get(key) != nil }

func (x *callIndex) set(key string, c *Call) { x.m[key] = c }

// freeze moves the map's calls held under their own keys into the sorted
// slice; the others (a followed call's second key) stay in a map of the
// size they need.
func (x *callIndex) freeze() {
	frozen := make([]*Call, 0, len(x.m)+len(x.frozen))
	rest := map[string]*Call{}
	for k, c := range x.m {
		if c != nil && c.Key == k {
			frozen = append(frozen, c)
		} else {
			rest[k] = c
		}
	}
	frozen = append(frozen, x.frozen...)
	// Stable by key, so among equal keys the map's call (the later one)
	// comes first; then one call a key, the first.
	slices.SortStableFunc(frozen, func(a, b *Call) int { return strings.Compare(a.Key, b.Key) })
	frozen = slices.CompactFunc(frozen, func(a, b *Call) bool { return a.Key == b.Key })
	x.frozen, x.m = slices.Clip(frozen), rest
}
