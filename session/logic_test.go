package session

import (
	"encoding/json"
	"testing"
	"time"

	"mcpscope/journal"
	"mcpscope/transport"
)

// Correlation on an offline session: responses to unknown ids, late
// responses and batches are kept and annotated, never dropped.
func TestOfflineCorrelation(t *testing.T) {
	s := New(nil, Options{Timeout: -1, MaxTimeout: -1})
	s.offline = true
	in := func(d string) {
		s.Ingest(transport.Frame{Time: time.Now(), Dir: transport.In, Kind: transport.Message, Data: []byte(d)})
	}
	out := func(d string) {
		s.Ingest(transport.Frame{Time: time.Now(), Dir: transport.Out, Kind: transport.Message, Data: []byte(d)})
	}
	out(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"t1"}}}`)
	in(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t1","progress":1,"total":2,"message":"half"}}`)
	in(`{"jsonrpc":"2.0","id":99,"result":{}}`)
	out(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	in(`[{"jsonrpc":"2.0","id":1,"result":{"content":[]}},{"jsonrpc":"2.0","id":2,"result":{}}]`)
	in(`{"jsonrpc":"2.0","id":1,"result":{}}`)

	c1, c2 := s.Lookup("1").Snapshot(), s.Lookup("2").Snapshot()
	if c1.State != StateOK || c2.State != StateOK {
		t.Fatalf("batch responses did not complete calls: %s %s", c1.State, c2.State)
	}
	if c1.Progress.Message != "half" || c1.Progress.Total != 2 || c1.Name != "slow" {
		t.Fatalf("progress not correlated: %+v", c1)
	}
	if c1.Late != 1 {
		t.Fatalf("duplicate response should be flagged late, got %d", c1.Late)
	}
	notes := map[string]bool{}
	for _, it := range s.Store().Since(0, 0) {
		notes[it.Note] = true
	}
	if !notes["response to unknown id 99"] {
		t.Fatalf("unknown id not noted: %v", notes)
	}
}

// A request the server sends on a call's own POST stream (sampling here)
// belongs to that call, as its notifications do: the call's notifications
// tab shows what carries its key.
func TestServerRequestOnPostStreamBelongsToCall(t *testing.T) {
	s := New(nil, Options{Timeout: -1, MaxTimeout: -1})
	s.offline = true
	ingest := func(dir transport.Dir, stream, d string) {
		s.Ingest(transport.Frame{Time: time.Now(), Dir: dir, Kind: transport.Message, Meta: transport.Meta{Stream: stream}, Data: []byte(d)})
	}
	ingest(transport.Out, "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sampleLLM"}}`)
	ingest(transport.In, "post:1", `{"jsonrpc":"2.0","id":"s-1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":10}}`)
	ingest(transport.In, "post:1", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
	ingest(transport.In, "standalone", `{"jsonrpc":"2.0","id":"s-2","method":"roots/list"}`)
	got := map[string]string{}
	for _, it := range s.Store().Since(0, 0) {
		if it.Class != journal.ClassRequest || it.Frame.Dir != transport.In {
			continue
		}
		var m struct{ Method string }
		_ = json.Unmarshal(it.Frame.Data, &m)
		got[m.Method] = it.CallKey
	}
	if got["sampling/createMessage"] != "1" {
		t.Errorf("the sampling request on call 1's POST stream has call key %q, want 1", got["sampling/createMessage"])
	}
	if got["roots/list"] != "" {
		t.Errorf("a request on the standalone stream belongs to call %q, want none", got["roots/list"])
	}
}
