package scan_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"mcpscope/artifact/scan"
	"mcpscope/filter"
	"mcpscope/framefilter"
	"mcpscope/session"
	"mcpscope/statestore"
)

// FuzzScan: any journal text scans without panicking; every call is told
// to CallEnded exactly once; every frame that names a call names one that
// was made; and the one filter adapter describes every frame (the filter
// parser itself is fuzzed in package filter).
func FuzzScan(f *testing.F) {
	head := `{"format":"mcpscope-journal/1","started":"2026-01-01T00:00:00Z","target":"stdio: x","pid":1}` + "\n"
	f.Add(head+`{"seq":1,"t":"2026-01-01T00:00:00Z","dir":"out","kind":"message","raw":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\",\"_meta\":{\"progressToken\":1}}}"}`+"\n"+
		`{"seq":2,"t":"2026-01-01T00:00:01Z","dir":"in","kind":"message","raw":"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}"}`+"\n"+
		`{"seq":3,"t":"2026-01-01T00:00:02Z","dir":"in","kind":"message","raw":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"isError\":true}}"}`+"\n", "~e")
	f.Add(head+`{"seq":1,"t":"2026-01-01T00:00:00Z","dir":"out","kind":"message","raw":"[{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"ping\"}]"}`+"\n"+
		`{"seq":2,"t":"2026-01-01T00:00:00Z","dir":"out","kind":"message","raw":"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"x\"}}"}`+"\n"+
		`{"seq":3,"t":"2026-01-01T00:00:00Z","dir":"local","kind":"event","meta":{"event":"closed","stream":"post:x"}}`+"\n", "~s cancelled | ~s late")
	f.Add(head+`{"seq":1,"t":"bad","dir":"sideways"}`+"\n", "~k event")
	f.Fuzz(func(t *testing.T, journal, expr string) {
		flt, err := filter.Parse(expr)
		if err != nil {
			flt = nil
		}
		subj := framefilter.NewSubjects()
		made := map[int]bool{}
		told := map[int]int{}
		_, _ = scan.Reader(strings.NewReader(journal), func(i int, c *session.CallSnapshot) { told[i]++ }, func(fr *scan.Frame) error {
			if fr.Call != nil {
				if fr.CallIndex < 0 {
					t.Fatalf("seq %d: a call without an index", fr.Seq)
				}
				if fr.Env != nil && fr.Env.Method == fr.Call.Method && bytes.Equal(fr.Env.ID, fr.Call.ID) {
					made[fr.CallIndex] = true
				}
			}
			s := subj.Fill(&fr.Frame, fr.Env, fr.Call, fr.Time)
			if s.Kind == "" || s.Size != len(fr.Data) {
				t.Fatalf("seq %d: subject %+v", fr.Seq, s)
			}
			flt.Match(s)
			return nil
		})
		for i := range made {
			if told[i] != 1 {
				t.Fatalf("call %d told %d times", i, told[i])
			}
		}
		for i, n := range told {
			if n != 1 {
				t.Fatalf("call %d told %d times", i, n)
			}
		}
	})
}

// FuzzNoProgressEndsCallsTheSame: a scan that follows no progress
// (Options.NoProgress, journal without a filter) ends every call as one
// that does, in the same order, and ties every frame but progress to the
// same call: all it leaves out is the calls' progress.
func FuzzNoProgressEndsCallsTheSame(f *testing.F) {
	head := `{"format":"mcpscope-journal/1","started":"2026-01-01T00:00:00Z","target":"stdio: x","pid":1}` + "\n"
	rec := func(seq int, dir, raw string) string {
		b, _ := json.Marshal(raw)
		return fmt.Sprintf(`{"seq":%d,"t":"2026-01-01T00:00:%02dZ","dir":"%s","kind":"message","raw":%s}`+"\n", seq, seq%60, dir, b)
	}
	f.Add(head +
		rec(1, "out", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":1}}}`) +
		rec(2, "out", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b","_meta":{"progressToken":1}}}`) +
		rec(3, "in", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`) +
		rec(4, "in", `{"jsonrpc":"2.0","id":1,"result":{"isError":true}}`) +
		rec(5, "out", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"progressToken":2}}}`) +
		rec(6, "in", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":1,"total":2,"message":"m"}}`) +
		rec(7, "in", `{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"no"}}`) +
		rec(8, "in", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}`) +
		rec(9, "out", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`) +
		`{"seq":10,"t":"2026-01-01T00:00:10Z","dir":"local","kind":"event","meta":{"event":"exited"}}` + "\n")
	f.Add(head +
		rec(1, "out", `{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"_meta":{"progressToken":"s"}}}`) +
		`{"seq":2,"t":"2026-01-01T00:00:01Z","dir":"in","kind":"message","meta":{"stream":"post:\"s\""},"raw":"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"s\",\"progress\":1}}"}` + "\n" +
		`{"seq":3,"t":"2026-01-01T00:00:02Z","dir":"in","kind":"message","meta":{"stream":"post:\"s\""},"raw":"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}"}` + "\n" +
		rec(4, "in", `[{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"s","progress":2}},{"jsonrpc":"2.0","id":"s","result":{}}]`))
	path := filepath.Join(f.TempDir(), "j.jsonl") // one file, written over: a folder per input is slow to make
	f.Fuzz(func(t *testing.T, journal string) {
		if err := os.WriteFile(path, []byte(journal), 0o600); err != nil {
			t.Fatal(err)
		}
		type ended struct {
			i int
			c session.CallSnapshot
		}
		type frame struct {
			index int
			late  bool
			call  session.CallSnapshot
		}
		// What progress leaves in a call: taken out of both.
		lean := func(c session.CallSnapshot) session.CallSnapshot {
			c.Progress, c.HasProgress = statestore.Progress{}, false
			if c.State == session.StateStreaming {
				c.State = session.StatePending
			}
			return c
		}
		read := func(noProgress bool) (calls []ended, frames []frame, err error) {
			o := scan.Options{Borrow: true, NoProgress: noProgress,
				CallEnded: func(i int, c *session.CallSnapshot) { calls = append(calls, ended{i, lean(*c)}) }}
			_, err = scan.File(path, o, func(fr *scan.Frame) error {
				if fr.Env != nil && fr.Env.Method == "notifications/progress" {
					frames = append(frames, frame{}) // its call is what progress changes
					return nil
				}
				x := frame{index: fr.CallIndex, late: fr.Late}
				if fr.Call != nil {
					x.call = lean(*fr.Call)
				}
				frames = append(frames, x)
				return nil
			})
			return calls, frames, err
		}
		wantCalls, wantFrames, wantErr := read(false)
		gotCalls, gotFrames, gotErr := read(true)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("NoProgress: error %v, want %v", gotErr, wantErr)
		}
		if !reflect.DeepEqual(gotCalls, wantCalls) {
			t.Fatalf("NoProgress ended calls\n%+v\nwant\n%+v", gotCalls, wantCalls)
		}
		if !reflect.DeepEqual(gotFrames, wantFrames) {
			t.Fatalf("NoProgress frames\n%+v\nwant\n%+v", gotFrames, wantFrames)
		}
	})
}
