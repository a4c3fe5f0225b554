package scan_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"mcpscope/artifact/scan"
	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/transport"
)

// seen is what a reader may take from a frame, copied during the callback.
type seen struct {
	Seq       uint64
	Data      string
	Method    string
	ID        string
	CallIndex int
	Call      *session.CallSnapshot
	Late      bool
}

func scanAll(t *testing.T, path string, o scan.Options) (frames []seen, ended map[int]session.CallSnapshot) {
	t.Helper()
	ended = map[int]session.CallSnapshot{}
	o.CallEnded = func(i int, c *session.CallSnapshot) { ended[i] = *c } // kept past the callback: must stay whole
	_, err := scan.File(path, o, func(fr *scan.Frame) error {
		s := seen{Seq: fr.Seq, Data: string(fr.Data), CallIndex: fr.CallIndex, Late: fr.Late}
		if fr.Env != nil {
			s.Method, s.ID = fr.Env.Method, string(fr.Env.ID)
		}
		if fr.Call != nil {
			c := *fr.Call // kept past the callback: must stay whole
			s.Call = &c
		}
		frames = append(frames, s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return frames, ended
}

// TestBorrowReadsTheSame: a scan that lends its frames' bytes (Borrow)
// hands over the frames, messages and calls an eager one does, and the
// calls it gives (their ids, params and errors) stay whole after the
// frames they came from are gone; a bare scan gives the same frames
// without messages or calls, and one with NoParams the same calls without
// their params and ids. Escaped and plain messages alike, one pass and two.
func TestBorrowReadsTheSame(t *testing.T) {
	at := time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)
	var j []byte
	j = append(j, `{"format":"mcpscope-journal/1","started":"2026-11-26T04:00:00Z","target":"stdio: x","pid":1}`+"\n"...)
	seq := uint64(0)
	add := func(dir transport.Dir, msg string) {
		seq++
		j = journal.AppendRecord(j, seq, transport.Frame{Time: at.Add(time.Duration(seq) * time.Millisecond), Dir: dir, Kind: transport.Message, Data: []byte(msg)})
	}
	for i := range 40 {
		id, _ := json.Marshal(i)
		add(transport.Out, `{"jsonrpc":"2.0","id":`+string(id)+`,"method":"tools/call","params":{"name":"t\"`+string(id)+`","arguments":{"q":"a\nb"},"_meta":{"progressToken":`+string(id)+`}}}`)
		add(transport.In, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`+string(id)+`,"progress":1,"message":"é\t"}}`)
		switch i % 3 {
		case 0:
			add(transport.In, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"content":[{"type":"text","text":"ok \"`+string(id)+`\""}]}}`)
		case 1:
			add(transport.In, `{"jsonrpc":"2.0","id":`+string(id)+`,"error":{"code":-32000,"message":"no \u00e9","data":{"why":"because\n`+string(id)+`"}}}`)
		}
		add(transport.In, `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"`+string(bytes.Repeat([]byte(`x\"`), 100*i))+`"}}`)
	}
	add(transport.In, `[{"jsonrpc":"2.0","method":"notifications/message","params":{}},{"jsonrpc":"2.0","id":"s\"1","method":"ping"}]`)
	add(transport.In, `[]`)
	add(transport.In, `{"jsonrpc":"2.0","id":5,"result":{}}`) // late: its call ended
	path := filepath.Join(t.TempDir(), "j.jsonl")
	if err := os.WriteFile(path, j, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, final := range []bool{false, true} {
		eager, eagerEnded := scanAll(t, path, scan.Options{Final: final})
		borrowed, borrowedEnded := scanAll(t, path, scan.Options{Final: final, Borrow: true})
		if len(eager) != int(seq) || len(eagerEnded) != 40 {
			t.Fatalf("final %v: %d frames and %d calls ended, want %d and 40", final, len(eager), len(eagerEnded), seq)
		}
		if !reflect.DeepEqual(eager, borrowed) {
			t.Errorf("final %v: the borrowing scan's frames differ from the eager one's", final)
		}
		if !reflect.DeepEqual(eagerEnded, borrowedEnded) {
			t.Errorf("final %v: the borrowing scan's ended calls differ from the eager one's", final)
		}
		// NoParams: the same, but for the calls' params and ids, which
		// are not kept.
		lean, leanEnded := scanAll(t, path, scan.Options{Final: final, Borrow: true, NoParams: true})
		for i := range eager {
			want := eager[i]
			if want.Call != nil {
				c := *want.Call
				c.ID, c.Params = nil, nil
				want.Call = &c
			}
			if !reflect.DeepEqual(lean[i], want) {
				t.Fatalf("final %v: NoParams frame %d = %+v, want %+v", final, i, lean[i], want)
			}
		}
		for i, c := range eagerEnded {
			c.ID, c.Params = nil, nil
			if !reflect.DeepEqual(leanEnded[i], c) {
				t.Fatalf("final %v: NoParams call %d ended as %+v, want %+v", final, i, leanEnded[i], c)
			}
		}
		if c := eagerEnded[1]; c.RPCError == nil || string(c.RPCError.Data) != `{"why":"because\n1"}` || string(c.ID) != "1" {
			t.Errorf("call 1 ended as %+v, want its error and its data", c)
		}
	}
	bare, _ := scanAll(t, path, scan.Options{Bare: true})
	eager, _ := scanAll(t, path, scan.Options{})
	for i := range eager {
		want := seen{Seq: eager[i].Seq, Data: eager[i].Data, CallIndex: -1}
		if bare[i] != want {
			t.Fatalf("bare frame %d = %+v, want %+v", i, bare[i], want)
		}
	}
}
