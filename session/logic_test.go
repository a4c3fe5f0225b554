package session

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"mcpscope/internal/termsafe"
	"mcpscope/transport"
)

func TestIDKey(t *testing.T) {
	cases := map[string]string{`7`: "7", `7.0`: "7", ` 7 `: "7", `"7"`: `"7"`, `"a\u0062"`: `"ab"`, `null`: "", ``: ""}
	for in, want := range cases {
		if got := idKey(json.RawMessage(in)); got != want {
			t.Errorf("idKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestProgressTokenInjection(t *testing.T) {
	cases := []struct {
		params any
		want   string
	}{
		{nil, `{"_meta":{"progressToken":"p"}}`},
		{map[string]any{"name": "x"}, `{"_meta":{"progressToken":"p"},"name":"x"}`},
		{json.RawMessage(`{"_meta":{"a":1}}`), `{"_meta":{"a":1,"progressToken":"p"}}`},
		{json.RawMessage(`{"_meta":{"progressToken":9}}`), `{"_meta":{"progressToken":9}}`}, // the caller's own wins
		{json.RawMessage(`[1,2]`), `[1,2]`},                                                 // no place for a token
	}
	for _, c := range cases {
		got, err := withMeta(c.params, "p", nil)
		if err != nil || string(got) != c.want {
			t.Errorf("withMeta(%v) = %s, %v; want %s", c.params, got, err, c.want)
		}
	}
	if got := StripMeta(json.RawMessage(`{"_meta":{"progressToken":"p"},"name":"x"}`)); string(got) != `{"name":"x"}` {
		t.Errorf("strip: %s", got)
	}
	if _, err := withMeta(json.RawMessage(`{bad`), "p", nil); err == nil {
		t.Error("invalid raw params accepted")
	}
}

func TestDecodeShapes(t *testing.T) {
	cases := map[string]Class{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`:                          ClassRequest,
		`{"jsonrpc":"2.0","method":"notifications/progress"}`:               ClassNotification,
		`{"jsonrpc":"2.0","id":1,"result":{}}`:                              ClassResult,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`: ClassError,
		`[{"jsonrpc":"2.0","id":1,"result":{}}]`:                            ClassBatch,
		`{"hello":"world"}`:                                                 ClassInvalid,
		`not json`:                                                          ClassInvalid,
	}
	for in, want := range cases {
		if _, _, got := decode([]byte(in)); got != want {
			t.Errorf("decode(%s) = %s, want %s", in, got, want)
		}
	}
}

// Exact bytes survive the journal: UTF-8 as raw text, anything else base64,
// and a torn last line loses only itself.
func TestJournalRoundTrip(t *testing.T) {
	frames := []transport.Frame{
		{Time: time.Unix(1, 0).UTC(), Dir: transport.Out, Kind: transport.Message, Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"<&>"}}`)},
		{Time: time.Unix(2, 0).UTC(), Dir: transport.In, Kind: transport.Garbage, Data: []byte("bad \xff\xfe bytes")},
		{Time: time.Unix(3, 0).UTC(), Dir: transport.Local, Kind: transport.Event, Meta: transport.Meta{Event: transport.EvExited, ExitCode: new(int)}},
		{Time: time.Unix(4, 0).UTC(), Dir: transport.In, Kind: transport.Message, Data: []byte("{\n  \"pretty\": true\n}")},
	}
	var buf []byte
	for i, f := range frames {
		buf = AppendRecord(buf, uint64(i+1), f)
	}
	if n := bytes.Count(buf, []byte("\n")); n != len(frames) {
		t.Fatalf("want one line per frame, got %d lines", n)
	}
	if !bytes.Contains(buf, []byte(`<&>`)) {
		t.Fatal("HTML characters were escaped; the journal should stay greppable")
	}
	torn := append(append([]byte{}, buf...), []byte(`{"seq":5,"t":"`)...)
	var got []transport.Frame
	_, err := ReadJournal(bytes.NewReader(torn), func(seq uint64, f transport.Frame) error {
		got = append(got, f)
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Fatalf("torn line: want an 'incomplete' error, got %v", err)
	}
	if len(got) != len(frames) {
		t.Fatalf("read %d frames, want %d", len(got), len(frames))
	}
	for i := range frames {
		if !bytes.Equal(got[i].Data, frames[i].Data) || got[i].Dir != frames[i].Dir || got[i].Kind != frames[i].Kind ||
			!got[i].Time.Equal(frames[i].Time) || got[i].Meta.Event != frames[i].Meta.Event {
			t.Fatalf("frame %d changed: %+v != %+v", i, got[i], frames[i])
		}
	}
}

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

// The hand-written encoder must produce exactly what encoding/json reads
// back, for every byte the journal may see.
func FuzzAppendRecord(f *testing.F) {
	f.Add([]byte(`{"a":"<&>\u2028"}`), "note", 3)
	f.Add([]byte("tab\there\x00\x1f\"\\"), "", 0)
	f.Fuzz(func(t *testing.T, data []byte, detail string, pid int) {
		// Meta is plain text encoded by encoding/json (invalid UTF-8 becomes
		// U+FFFD there); Data is what must survive byte for byte.
		detail = strings.ToValidUTF8(detail, "\uFFFD")
		fr := transport.Frame{Time: time.Unix(5, 7).UTC(), Dir: transport.In, Kind: transport.Message, Data: data,
			Meta: transport.Meta{Detail: detail, PID: pid}}
		line := AppendRecord(nil, 9, fr)
		var got []transport.Frame
		if _, err := ReadJournal(bytes.NewReader(line), func(_ uint64, f transport.Frame) error {
			got = append(got, f)
			return nil
		}); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		if len(got) != 1 || !bytes.Equal(got[0].Data, data) || got[0].Meta.Detail != detail || got[0].Meta.PID != pid {
			t.Fatalf("round trip changed the frame: %q", line)
		}
	})
}

// A pid beside any other field must keep that field (the pid-only shortcut
// of the encoder must not apply).
func TestJournalKeepsFieldsBesidePID(t *testing.T) {
	code := 3
	m := transport.Meta{PID: 9, Signal: "killed", Resumes: "post:3", EventType: "message", ExitCode: &code}
	line := AppendRecord(nil, 1, transport.Frame{Time: time.Unix(1, 0).UTC(), Dir: transport.In, Kind: transport.Stderr, Data: []byte("x"), Meta: m})
	var got transport.Frame
	if _, err := ReadJournal(bytes.NewReader(line), func(_ uint64, f transport.Frame) error { got = f; return nil }); err != nil {
		t.Fatal(err)
	}
	g := got.Meta
	if g.PID != 9 || g.Signal != "killed" || g.Resumes != "post:3" || g.EventType != "message" || g.ExitCode == nil || *g.ExitCode != 3 {
		t.Fatalf("fields lost beside the pid: %q", line)
	}
}

// A journal line shows no character that could hijack the terminal it is
// printed on (mcpscope record writes these lines to stdout), and still
// reads back as the exact bytes.
func TestJournalLineIsInert(t *testing.T) {
	data := []byte("{\"text\":\"a\u202Eb\u0085c\u2028d\u200Fe\x7ff\"}")
	fr := transport.Frame{Time: time.Unix(5, 0).UTC(), Dir: transport.In, Kind: transport.Message, Data: data,
		Meta: transport.Meta{Detail: "server says \u202Eevil\u0085", Status: 500}}
	line := AppendRecord(nil, 1, fr)
	for _, r := range string(line) {
		if termsafe.Hidden(r) || (r < 0x20 && r != '\n') {
			t.Fatalf("the line carries %U raw: %q", r, line)
		}
	}
	var got transport.Frame
	if _, err := ReadJournal(bytes.NewReader(line), func(_ uint64, f transport.Frame) error { got = f; return nil }); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Data, data) || got.Meta.Detail != fr.Meta.Detail {
		t.Fatalf("round trip changed the frame:\n%q\n%q", got.Data, got.Meta.Detail)
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
		if it.Class != ClassRequest || it.Frame.Dir != transport.In {
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
