package session

// stringPool hands out one copy of strings that repeat from call to call
// (tool names, progress messages): a journal read back holds a Call for
// every call, and each would otherwise keep a string of its own. It holds
// at most maxPooled distinct strings, each at most maxPooledLen bytes, so
// a server that never repeats itself costs it a bounded map; past that, a
// string is kept as given. Used under the session's lock.
type stringPool struct {
	m map[string]string
}

const (
	maxPooled    = 4096
	maxPooledLen = 256
)

// get returns the pool's copy of v, adding v while there is room.
func (p *stringPool) get(v string) string {
	if v == "" || len(v) > maxPooledLen {
		return v
	}
	if w, ok := p.m[v]; ok {
		return w
	}
	if p.m == nil {
		p.m = map[string]string{}
	}
	if len(p.m) < maxPooled {
		p.m[v] = v
	}
	return v
}
