package session

import "testing"

// Once a journal is read back, what only the reading needed goes: an ended
// call's progress token (no progress comes after), while every call is still
// found by its key and listed in order from the maps built again at size.
func TestOpenDropsWhatOnlyTheReadingNeeded(t *testing.T) {
	path := writeJournal(t, "stdio: node server.js",
		out(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":"p1"}}}`),
		in(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1,"total":2}}`),
		in(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`),
		out(`{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"echo","_meta":{"progressToken":"p2"}}}`),
		in(`{"jsonrpc":"2.0","id":"two","result":{"content":[]}}`))
	s, _, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	waitLoaded(t, s)
	calls := s.Calls()
	if len(calls) != 2 || calls[0].Key != "1" || calls[1].Key != `"two"` {
		t.Fatalf("calls after the read-back: %d, want 1 and \"two\" in order", len(calls))
	}
	for _, c := range calls {
		if s.Lookup(c.Key) != c {
			t.Errorf("Lookup(%s) does not find its call after the read-back", c.Key)
		}
		s.mu.Lock()
		tok := c.Token
		s.mu.Unlock()
		if tok != "" {
			t.Errorf("ended call %s still holds its progress token %s", c.Key, tok)
		}
	}
	if p := s.Lookup("1").Snapshot().Progress; p.Updates != 1 || p.Value != 1 {
		t.Errorf("call 1's progress after the read-back: %+v, want the one update", p)
	}
}
