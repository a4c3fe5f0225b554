package journal

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"mcpscope/internal/termsafe"
	"mcpscope/transport"
)

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
		if _, err := Read(bytes.NewReader(line), func(_ uint64, f transport.Frame) error {
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
		if _, _, got := DecodeClass([]byte(in)); got != want {
			t.Errorf("DecodeClass(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestIDKey(t *testing.T) {
	cases := map[string]string{`7`: "7", `7.0`: "7", ` 7 `: "7", `"7"`: `"7"`, `"a\u0062"`: `"ab"`, `null`: "", ``: ""}
	for in, want := range cases {
		if got := IDKey(json.RawMessage(in)); got != want {
			t.Errorf("IDKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// A pid beside any other field must keep that field (the pid-only shortcut
// of the encoder must not apply).
func TestJournalKeepsFieldsBesidePID(t *testing.T) {
	code := 3
	m := transport.Meta{PID: 9, Signal: "killed", Resumes: "post:3", EventType: "message", ExitCode: &code}
	line := AppendRecord(nil, 1, transport.Frame{Time: time.Unix(1, 0).UTC(), Dir: transport.In, Kind: transport.Stderr, Data: []byte("x"), Meta: m})
	var got transport.Frame
	if _, err := Read(bytes.NewReader(line), func(_ uint64, f transport.Frame) error { got = f; return nil }); err != nil {
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
	if _, err := Read(bytes.NewReader(line), func(_ uint64, f transport.Frame) error { got = f; return nil }); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Data, data) || got.Meta.Detail != fr.Meta.Detail {
		t.Fatalf("round trip changed the frame:\n%q\n%q", got.Data, got.Meta.Detail)
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
	_, err := Read(bytes.NewReader(torn), func(seq uint64, f transport.Frame) error {
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
