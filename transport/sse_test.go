package transport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// sseDeadline bounds every wait in these tests; nothing here sleeps to sync.
func sseDeadline(t testing.TB) <-chan time.Time {
	t.Helper()
	return time.After(testWait)
}

// sseEv builds an expected event; retry -1 means none.
func sseEv(id string, hasID bool, typ, data string, retry int) SSEEvent {
	e := SSEEvent{ID: id, HasID: hasID, Type: typ, Retry: retry}
	if data != "\x00nil" {
		e.Data = []byte(data)
	}
	return e
}

const sseNoData = "\x00nil"

func sseReadAll(t testing.TB, r io.Reader) ([]SSEEvent, *SSEReader, error) {
	t.Helper()
	sr := NewSSEReader(r)
	var out []SSEEvent
	for {
		e, err := sr.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return out, sr, err
		}
		out = append(out, e)
	}
}

func TestSSEParse(t *testing.T) {
	cases := []struct {
		name     string
		in       string
		want     []SSEEvent
		comments int
		lastID   string
		cut      bool // ends inside an event
	}{
		{"single", "data: {\"a\":1}\n\n", []SSEEvent{sseEv("", false, "", `{"a":1}`, -1)}, 0, "", false},
		{"multiline data", "data: a\ndata: b\ndata:\n\n", []SSEEvent{sseEv("", false, "", "a\nb\n", -1)}, 0, "", false},
		{"crlf", "data: a\r\ndata: b\r\n\r\n", []SSEEvent{sseEv("", false, "", "a\nb", -1)}, 0, "", false},
		{"cr only", "data: a\rdata: b\r\r", []SSEEvent{sseEv("", false, "", "a\nb", -1)}, 0, "", false},
		{"mixed endings", "data: a\r\ndata: b\rdata: c\n\r\n", []SSEEvent{sseEv("", false, "", "a\nb\nc", -1)}, 0, "", false},
		{"comments", ": ok\n\n:keepalive\ndata: x\n\n", []SSEEvent{sseEv("", false, "", "x", -1)}, 2, "", false},
		{"no colon", "data\ndata\n\n", []SSEEvent{sseEv("", false, "", "\n", -1)}, 0, "", false},
		{"one space stripped", "data:  x\ndata:y\n\n", []SSEEvent{sseEv("", false, "", " x\ny", -1)}, 0, "", false},
		{"bom", "\xef\xbb\xbfdata: x\n\n", []SSEEvent{sseEv("", false, "", "x", -1)}, 0, "", false},
		{"second bom is a field name", "\xef\xbb\xbf\xef\xbb\xbfdata: x\n\ndata: y\n\n", []SSEEvent{sseEv("", false, "", "y", -1)}, 0, "", false},
		{"event type", "event: message\nid: 1\ndata: x\n\n", []SSEEvent{sseEv("1", true, "message", "x", -1)}, 0, "1", false},
		{"id persists", "id: 7\ndata: a\n\ndata: b\n\n", []SSEEvent{sseEv("7", true, "", "a", -1), sseEv("7", false, "", "b", -1)}, 0, "7", false},
		{"id reset", "id: 7\ndata: a\n\nid\ndata: b\n\n", []SSEEvent{sseEv("7", true, "", "a", -1), sseEv("", true, "", "b", -1)}, 0, "", false},
		{"id with NUL ignored", "id: 3\ndata: a\n\nid: 4\x005\ndata: b\n\n", []SSEEvent{sseEv("3", true, "", "a", -1), sseEv("3", false, "", "b", -1)}, 0, "3", false},
		{"retry", "retry: 3000\ndata: a\n\n", []SSEEvent{sseEv("", false, "", "a", 3000)}, 0, "", false},
		{"retry not digits", "retry: 30a\nretry: -1\nretry:\ndata: a\n\n", []SSEEvent{sseEv("", false, "", "a", -1)}, 0, "", false},
		{"retry with space", "retry:  5\ndata: a\n\n", []SSEEvent{sseEv("", false, "", "a", -1)}, 0, "", false},
		{"retry saturates", "retry: 99999999999999999999\n\n", []SSEEvent{sseEv("", false, "", sseNoData, 2147483647)}, 0, "", false},
		{"priming (spec example)", "id: 42\nretry: 3000\ndata: \n\n", []SSEEvent{sseEv("42", true, "", "", 3000)}, 0, "42", false},
		{"priming (go-sdk)", "event: prime\nid: s1_0\ndata: \n\n", []SSEEvent{sseEv("s1_0", true, "prime", "", -1)}, 0, "s1_0", false},
		{"priming without data line", "id: e-1\nretry: 500\n\n", []SSEEvent{sseEv("e-1", true, "", sseNoData, 500)}, 0, "e-1", false},
		{"go-sdk close", "event: close\nretry: 100\ndata: \n\n", []SSEEvent{sseEv("", false, "close", "", 100)}, 0, "", false},
		{"event only is nothing", "event: foo\n\ndata: a\n\n", []SSEEvent{sseEv("", false, "", "a", -1)}, 0, "", false},
		{"unknown field", "foo: bar\ndata: a\n\n", []SSEEvent{sseEv("", false, "", "a", -1)}, 0, "", false},
		{"blank lines", "\n\n\r\n\rdata: a\n\n\n\n", []SSEEvent{sseEv("", false, "", "a", -1)}, 0, "", false},
		{"cut mid event", "data: a\n\ndata: b\n", []SSEEvent{sseEv("", false, "", "a", -1)}, 0, "", true},
		{"cut mid line", "data: a\n\ndata: b", []SSEEvent{sseEv("", false, "", "a", -1)}, 0, "", true},
		{"cut id commits nothing", "id: 1\ndata: a\n\nid: 2\n", []SSEEvent{sseEv("1", true, "", "a", -1)}, 0, "1", true},
		{"unterminated comment is no cut", "data: a\n\n: bye", []SSEEvent{sseEv("", false, "", "a", -1)}, 0, "", false},
		{"colon in value", "data: a:b: c\n\n", []SSEEvent{sseEv("", false, "", "a:b: c", -1)}, 0, "", false},
		{"empty", "", nil, 0, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, mode := range []string{"whole", "bytewise"} {
				var r io.Reader = strings.NewReader(c.in)
				if mode == "bytewise" {
					r = iotest.OneByteReader(r)
				}
				got, sr, err := sseReadAll(t, r)
				if c.cut != errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("%s: err = %v, cut = %v", mode, err, c.cut)
				}
				if !c.cut && err != nil {
					t.Fatalf("%s: %v", mode, err)
				}
				if !reflect.DeepEqual(got, c.want) {
					t.Fatalf("%s: got %#v\nwant %#v", mode, got, c.want)
				}
				if sr.Comments() != c.comments {
					t.Errorf("%s: comments = %d, want %d", mode, sr.Comments(), c.comments)
				}
				if sr.LastEventID() != c.lastID {
					t.Errorf("%s: last id = %q, want %q", mode, sr.LastEventID(), c.lastID)
				}
			}
		})
	}
}

func TestSSETrailingCommentLine(t *testing.T) {
	_, sr, err := sseReadAll(t, strings.NewReader("data: a\n\n: bye\n"))
	if err != nil || sr.Comments() != 1 {
		t.Fatalf("err %v comments %d", err, sr.Comments())
	}
}

// A CR must end a line at once: the reader may not wait for a possible LF
// before handing over an event the server has completed.
func TestSSECRDoesNotWait(t *testing.T) {
	pr, pw := io.Pipe()
	sr := NewSSEReader(pr)
	go pw.Write([]byte("data: a\r\r"))
	got := make(chan SSEEvent, 1)
	go func() {
		e, _ := sr.Next()
		got <- e
	}()
	select {
	case e := <-got:
		if string(e.Data) != "a" {
			t.Fatalf("got %q", e.Data)
		}
	case <-sseDeadline(t):
		t.Fatal("event completed by CR CR was not delivered")
	}
	go pw.Write([]byte("\ndata: b\n\n")) // the LF after the CR is skipped
	e, err := sr.Next()
	if err != nil || string(e.Data) != "b" {
		t.Fatalf("got %q %v", e.Data, err)
	}
	pw.Close()
}

func TestSSEBigLine(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 20<<20)
	var in bytes.Buffer
	in.WriteString("id: big\ndata: ")
	in.Write(big)
	in.WriteString("\n\ndata: after\n\n")
	got, _, err := sseReadAll(t, &in)
	if err != nil || len(got) != 2 || !bytes.Equal(got[0].Data, big) || string(got[1].Data) != "after" {
		t.Fatalf("err %v, %d events", err, len(got))
	}
}

// Data must be owned by the event: later events may not overwrite it.
func TestSSEDataOwned(t *testing.T) {
	got, _, _ := sseReadAll(t, strings.NewReader("data: first\n\ndata: xxxxx\n\n"))
	if string(got[0].Data) != "first" {
		t.Fatalf("first event data changed to %q", got[0].Data)
	}
}

// sseChunkReader returns the input in pieces whose sizes come from cuts.
type sseChunkReader struct {
	b    []byte
	cuts []byte
}

func (c *sseChunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(c.cuts) > 0 {
		n = int(c.cuts[0])%7 + 1
		c.cuts = c.cuts[1:]
	} else {
		n = len(c.b)
	}
	n = min(n, len(p), len(c.b))
	copy(p, c.b[:n])
	c.b = c.b[n:]
	return n, nil
}

// sseSerialize writes events back as a stream the parser must read identically.
func sseSerialize(evs []SSEEvent) []byte {
	var b bytes.Buffer
	for _, e := range evs {
		if e.Type != "" {
			fmt.Fprintf(&b, "event: %s\n", e.Type)
		}
		if e.HasID {
			fmt.Fprintf(&b, "id: %s\n", e.ID)
		}
		if e.Retry >= 0 {
			fmt.Fprintf(&b, "retry:%d\n", e.Retry)
		}
		if e.Data != nil {
			for _, l := range bytes.Split(e.Data, []byte("\n")) {
				b.WriteString("data: ")
				b.Write(l)
				b.WriteByte('\n')
			}
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func FuzzSSE(f *testing.F) {
	seeds := []string{
		"data: a\n\n", "id: 1\r\ndata: x\r\n\r\n", "event: prime\nid: s_0\ndata: \n\n",
		"\xef\xbb\xbfdata\rdata: y\r\r", ": c\nretry: 10\n\n", "id: a\x00b\ndata: z\n\n",
		"data: 1\ndata: 2\n\nid\n\n", "\xef\xbb", "data: a\n\ndata: b",
	}
	for _, s := range seeds {
		f.Add([]byte(s), []byte{0, 3, 1, 5})
	}
	f.Fuzz(func(t *testing.T, in, cuts []byte) {
		whole, sr1, err1 := sseReadAll(t, bytes.NewReader(in))
		split, sr2, err2 := sseReadAll(t, &sseChunkReader{b: in, cuts: cuts})
		if !reflect.DeepEqual(whole, split) || (err1 == nil) != (err2 == nil) {
			t.Fatalf("split changed result:\n%#v %v\n%#v %v", whole, err1, split, err2)
		}
		if sr1.LastEventID() != sr2.LastEventID() || sr1.Comments() != sr2.Comments() {
			t.Fatalf("split changed state")
		}
		for _, e := range whole {
			if bytes.IndexByte(e.Data, '\r') >= 0 || strings.ContainsAny(e.ID, "\x00\r\n") || strings.ContainsAny(e.Type, "\r\n") {
				t.Fatalf("line break or NUL leaked into %#v", e)
			}
			if !e.IsMessage() && !e.HasID && e.Retry < 0 && e.Data == nil {
				t.Fatalf("empty event reported: %#v", e)
			}
		}
		// Round trip: writing the events back and reading them gives the same
		// events (ids persist, so compare only what each block set).
		again, _, err := sseReadAll(t, bytes.NewReader(sseSerialize(whole)))
		if err != nil || len(again) != len(whole) {
			t.Fatalf("round trip: %v, %d vs %d events", err, len(again), len(whole))
		}
		for i := range whole {
			a, b := whole[i], again[i]
			if a.HasID != b.HasID || (a.HasID && a.ID != b.ID) || a.Type != b.Type || a.Retry != b.Retry || !bytes.Equal(a.Data, b.Data) {
				t.Fatalf("round trip changed event %d: %#v vs %#v", i, a, b)
			}
		}
	})
}
