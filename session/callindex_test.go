package session

import (
	"fmt"
	"testing"
)

// A frozen index finds every call the map held, under its own key and
// under a second key; a call set after the freeze wins over the frozen
// call with its key; a key never set finds nothing.
func TestCallIndexFreezes(t *testing.T) {
	x := newCallIndex()
	calls := map[string]*Call{}
	for i := range 1000 {
		c := &Call{Key: fmt.Sprintf("%d", (i*7919)%1000)}
		calls[c.Key] = c
		x.set(c.Key, c)
	}
	alias := calls["5"]
	x.set("s:five", alias)
	x.freeze()
	if len(x.frozen) != 1000 || len(x.m) != 1 {
		t.Fatalf("frozen %d calls, %d left in the map; want 1000 and the one second key", len(x.frozen), len(x.m))
	}
	for k, c := range calls {
		if x.get(k) != c {
			t.Fatalf("key %q finds %p, want %p", k, x.get(k), c)
		}
	}
	if x.get("s:five") != alias || x.has("1000") || x.has("") {
		t.Fatal("the second key lost, or a key never set found")
	}
	later := &Call{Key: "5"}
	x.set("5", later)
	if x.get("5") != later {
		t.Fatal("a call set after the freeze does not win over the frozen one")
	}
	// Frozen again: the later call stays the one under its key.
	x.freeze()
	if x.get("5") != later || len(x.frozen) != 1000 {
		t.Fatalf("after a second freeze key 5 finds %p (want the later %p); %d frozen", x.get("5"), later, len(x.frozen))
	}
}
