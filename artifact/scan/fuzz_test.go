package scan_test

import (
	"bytes"
	"strings"
	"testing"

	"mcpscope/artifact/scan"
	"mcpscope/filter"
	"mcpscope/session"
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
		subj := session.NewSubjects()
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
