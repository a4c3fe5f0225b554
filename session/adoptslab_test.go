package session

import (
	"bytes"
	"encoding/json"
	"testing"

	"mcpscope/journal"
)

// A slab clone is a copy of its own: appending to one never writes over
// the next, and nil stays nil (an absent id or params).
func TestAdoptSlabCloneIsolated(t *testing.T) {
	var a adoptSlab
	x := a.clone([]byte(`{"a":1}`))
	y := a.clone([]byte(`{"b":2}`))
	_ = append(x, "XXXXXXXX"...)
	if string(y) != `{"b":2}` {
		t.Fatalf("appending to one clone changed the next: %q", y)
	}
	if a.clone(nil) != nil {
		t.Fatal("clone(nil) is not nil")
	}
	big := bytes.Repeat([]byte("z"), ownClone+1)
	if got := a.clone(big); !bytes.Equal(got, big) {
		t.Fatal("a long clone is not its source's bytes")
	}
}

// An adopted call's key is the key the id's own text gives, whether it
// shares the id's bytes (a canonical id) or not (spaces around it).
func TestAdoptedKeyMatchesEnvelopeKey(t *testing.T) {
	var a adoptSlab
	for _, id := range []string{`7`, `"abc"`, ` 7 `, `7.0`, `"a\u0062c"`} {
		e := &journal.Envelope{ID: json.RawMessage(id)}
		if got, want := adoptedKey(e, a.clone(e.ID)), e.Key(); got != want {
			t.Errorf("id %s: key %q, want %q", id, got, want)
		}
	}
}
