package journal

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"mcpscope/transport"
)

// decodedRead is one frame as a reader saw it: its record and its message
// described while it was valid (both are borrowed).
type decodedRead struct {
	seq  uint64
	f    transport.Frame
	msgs []string
}

// describeEnvelope is everything an Envelope holds, hints included, as text.
func describeEnvelope(e *Envelope) string {
	if e == nil {
		return "nil"
	}
	s := fmt.Sprintf("jsonrpc %q id %q method %q params %q result %q hints %#v", e.JSONRPC, e.ID, e.Method, e.Params, e.Result, e.h)
	if e.Error != nil {
		s += fmt.Sprintf(" error %d %q %q", e.Error.Code, e.Error.Message, e.Error.Data)
	}
	return s
}

func describeDecoded(env *Envelope, batch []*Envelope) []string {
	if len(batch) > 0 {
		out := []string{"batch"}
		for _, e := range batch {
			out = append(out, describeEnvelope(e))
		}
		return out
	}
	return []string{describeEnvelope(env)}
}

// readDecodedBoth reads journal in one pass (ReadDecoded) and in
// two (ReadBorrowed, then DecodeInto on each message frame's data).
func readDecodedBoth(journal []byte) (one, two []decodedRead, oneErr, twoErr error) {
	keep := func(seq uint64, f transport.Frame, msgs []string) decodedRead {
		if f.Data != nil {
			f.Data = bytes.Clone(f.Data)
		}
		return decodedRead{seq, f, msgs}
	}
	var into Envelope
	_, oneErr = ReadDecoded(bytes.NewReader(journal), &into, func(seq uint64, fp *transport.Frame, env *Envelope, batch []*Envelope) error {
		f := *fp
		var msgs []string
		if f.Kind == transport.Message {
			msgs = describeDecoded(env, batch)
		} else if env != nil || batch != nil {
			msgs = []string{"decoded a frame that is not a message"}
		}
		one = append(one, keep(seq, f, msgs))
		return nil
	})
	var into2 Envelope
	_, twoErr = ReadBorrowed(bytes.NewReader(journal), func(seq uint64, f transport.Frame) error {
		var msgs []string
		if f.Kind == transport.Message {
			msgs = describeDecoded(DecodeInto(&into2, f.Data))
		}
		two = append(two, keep(seq, f, msgs))
		return nil
	})
	return
}

func sameDecoded(t *testing.T, journal []byte) []decodedRead {
	t.Helper()
	one, two, oneErr, twoErr := readDecodedBoth(journal)
	if len(one) != len(two) {
		t.Fatalf("one pass read %d frames, two passes %d", len(one), len(two))
	}
	for i := range one {
		if !reflect.DeepEqual(one[i], two[i]) {
			t.Fatalf("frame %d differs:\n one pass   %+v\n two passes %+v", i, one[i], two[i])
		}
	}
	if fmt.Sprint(oneErr) != fmt.Sprint(twoErr) {
		t.Fatalf("errors differ: one pass %v, two passes %v", oneErr, twoErr)
	}
	sameDecodedNoProgress(t, journal, one, oneErr)
	return one
}

// sameDecodedNoProgress: ReadDecodedNoProgress reads journal as
// ReadDecoded did (one, err), each message decoded as decoding
// for a reader of no progress does on its own (checkDecodeNoProgress).
func sameDecodedNoProgress(t *testing.T, journal []byte, one []decodedRead, oneErr error) {
	t.Helper()
	var into Envelope
	i := 0
	_, err := ReadDecodedNoProgress(bytes.NewReader(journal), &into, func(seq uint64, f *transport.Frame, env *Envelope, batch []*Envelope) error {
		if i >= len(one) || seq != one[i].seq || !bytes.Equal(f.Data, one[i].f.Data) {
			t.Fatalf("no-progress read: frame %d (seq %d) is not the one-pass read's", i, seq)
		}
		i++
		if f.Kind != transport.Message {
			return nil
		}
		wenv, wbatch, _, _ := decodeFrameQuoted(f.Data, nil, nil, true)
		if got, want := describeDecoded(env, batch), describeDecoded(wenv, wbatch); !reflect.DeepEqual(got, want) {
			t.Fatalf("no-progress read: frame %d decoded\n%q\nwant\n%q", i-1, got, want)
		}
		return nil
	})
	if i != len(one) || fmt.Sprint(err) != fmt.Sprint(oneErr) {
		t.Fatalf("no-progress read: %d frames, error %v; want %d, %v", i, err, len(one), oneErr)
	}
}

const decodedHeader = `{"format":"mcpscope-journal/1","started":"2026-11-26T04:00:00Z","target":"stdio: x","pid":1}` + "\n"

// rawLine is a record whose raw member is body as it stands (its escapes
// written by hand).
func rawLine(seq int, body string) string {
	return fmt.Sprintf(`{"seq":%d,"t":"2026-11-26T04:00:00Z","dir":"in","kind":"message","raw":"%s"}`+"\n", seq, body)
}

// TestReadJournalDecodedMatchesTwoPasses: decoding a frame's message in the
// pass that unescapes it (its strings' ends taken from the quotes the
// unescape noted) gives what unescaping and then decoding gives, for
// messages whose data is clean (every quote an escape, nothing else
// escaped) and for every kind that is not: backslashes, controls, \u
// escapes (a quote among them), invalid UTF-8, lone surrogates, space
// between tokens, batches, unfinished strings, lines past the read and
// scratch buffers, binary frames, records read by encoding/json, and
// lines after each of them (a table left from a line before must not be
// used for the next).
func TestReadJournalDecodedMatchesTwoPasses(t *testing.T) {
	at := time.Date(2026, 11, 26, 4, 0, 0, 5, time.UTC)
	msg := func(s string) transport.Frame {
		return transport.Frame{Time: at, Dir: transport.In, Kind: transport.Message, Data: []byte(s)}
	}
	j := []byte(decodedHeader)
	frames := []transport.Frame{
		msg(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fetch","arguments":{"q":"x"},"_meta":{"progressToken":"t1"}}}`),
		msg(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t1","progress":1,"total":3,"message":"step 1/3"}}`),
		msg(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"sunny, 21°C"}],"isError":true,"resultType":"complete"}}`),
		msg(`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no such method","data":{"m":"x"}}}`),
		msg(`{"jsonrpc":"2.0","id":3,"result":{"text":"a \"quoted\" word and a \\ backslash"}}`),
		msg("{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"text\":\"tab\\there\\nline \u00e9 \U0001F600\"}}"),
		msg("{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"raw\":\"ctl \x01 \x1f in a string\"}}"),
		msg(" \t{ \"jsonrpc\" : \"2.0\" ,\n\"id\" : 6 , \"result\" : { \"isError\" : false } }\r\n"),
		msg(`[{"jsonrpc":"2.0","id":7,"result":{}},{"jsonrpc":"2.0","method":"m","params":{"name":"n"}}]`),
		msg(`{"jsonrpc":"2.0","method":"unfinished`),
		msg(`{"jsonrpc":"2.0","id":8,"result":"`),
		msg(`{"a":"1","b":"2" "c"}`),
		msg(`"just a string"`),
		msg(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"` + strings.Repeat(`a"b`, 40000) + `"}}`), // past the read buffer: its own buffer
		msg(`{"jsonrpc":"2.0","id":10,"result":{"huge":"` + strings.Repeat("x\n\"", 500000) + `"}}`),                   // past the scratch buffer
		msg(`{"jsonrpc":"2.0","id":11,"result":{"plain":"` + strings.Repeat("0123456789", 10000) + `"}}`),
		{Time: at, Dir: transport.In, Kind: transport.Message, Data: []byte("{\"jsonrpc\":\"2.0\",\"id\":12,\"result\":\"\xff\xfe\"}")}, // b64
		{Time: at, Dir: transport.Local, Kind: transport.Event, Meta: transport.Meta{Event: "exited", ExitCode: new(int)}},
		msg(`{"jsonrpc":"2.0","id":13,"result":{}}`),
		msg(``),
	}
	for i, f := range frames {
		j = AppendRecord(j, uint64(i+1), f)
	}
	for i, body := range []string{
		`{\u0022jsonrpc\u0022:\"2.0\",\"id\":1,\"result\":{}}`,                   // a quote made by \u: not clean
		`{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"u\":\"\\u0022\"}}`,          // \u in the frame, a backslash in the data
		`{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"p\":\"a\/b\"}}`,             // \/ keeps it clean
		`{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"s\":\"\ud800\"}}`,           // a lone surrogate
		"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":1,\\\"result\\\":\\\"\xff\\\"}", // invalid UTF-8: U+FFFD
		`{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"k\":1,\"k\":\"2\"}}`,
		`{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\"\n:1}}`,
		`{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":\t1}}`,
		`{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":1}}\"`,
		`\"`, `\"\"`, `\"\"\"`, `{\"`, `{\"a\":`, `{\"a\"}`, `[\"a\",\"b\"]`,
	} {
		j = append(j, rawLine(100+i, body)...)
		j = AppendRecord(j, uint64(200+i), frames[1]) // clean, after a line that may not be
	}
	// Lines read by encoding/json, and a raw followed by b64: the frame's
	// data is then not the buffer the quotes were noted on.
	j = append(j, `{"raw":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}","seq":300,"t":"2026-11-26T04:00:00Z","dir":"in","kind":"message","extra":1}`+"\n"...)
	j = append(j, `{"seq":301,"t":"2026-11-26T04:00:00Z","dir":"in","kind":"message","raw":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}","b64":"eyJpZCI6Mn0="}`+"\n"...)
	j = append(j, `{"seq":302,"t":"2026-11-26T04:00:00Z","dir":"in","kind":"message","raw":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}","raw":"{\"id\":3}"}`+"\n"...)
	got := sameDecoded(t, j)
	if len(got) < len(frames)+30 {
		t.Fatalf("read %d frames, want at least %d", len(got), len(frames)+30)
	}
	if want := describeEnvelope(&Envelope{}); got[0].msgs[0] == want || !strings.Contains(got[0].msgs[0], `"tools/call"`) {
		t.Fatalf("the first frame decoded as %q", got[0].msgs)
	}
	sameDecoded(t, append(j, rawLine(400, `{\"torn`)[:40]...))
}

// FuzzReadJournalDecodedMatchesTwoPasses: any two raw bodies, written by
// the journal's escaper or as they stand (hostile escapes and all), read
// the same in one pass as in two.
func FuzzReadJournalDecodedMatchesTwoPasses(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"a":"b"}}`), []byte(`{\"id\":1,\"method\":\"m\"}`), true)
	f.Add([]byte(`{\"id\":\"a\\\"b\",\"result\":[\"x\",1]}`), []byte(`{\u0022id\u0022:2}`), false)
	f.Add([]byte("{\"id\":1,\"result\":\"\xff\"}"), []byte(`[{\"id\":1,\"result\":{}},{\"id\":2}]`), true)
	f.Fuzz(func(t *testing.T, a, b []byte, escape bool) {
		j := []byte(decodedHeader)
		for i, body := range [][]byte{a, b} {
			if escape && i == 0 {
				j = AppendRecord(j, 1, transport.Frame{Time: time.Unix(1, 0), Dir: transport.Out, Kind: transport.Message, Data: body})
				continue
			}
			if bytes.ContainsAny(body, "\n") {
				return
			}
			j = append(j, rawLine(i+1, string(body))...)
		}
		sameDecoded(t, j)
	})
}
