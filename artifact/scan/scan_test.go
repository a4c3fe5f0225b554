package scan_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/artifact/scan"
	"mcpscope/connect"
	"mcpscope/filter"
	"mcpscope/framefilter"
	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/testkit/recordtest"
	"mcpscope/testkit/testservers"
	"mcpscope/transport"
)

func TestMain(m *testing.M) { recordtest.Main(m) }

// recordings are real sessions with the Go SDK test server, over stdio and
// Streamable HTTP, recorded once per test binary.
func recordings(t *testing.T) map[string]string {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	return map[string]string{
		"stdio": recordtest.Once(t, "stdio", func(j string) string {
			return recordtest.Record(t, "stdio", connect.Spec{Journal: j, Command: []string{testservers.BuildStdio(t)}}, recordtest.GoScript)
		}),
		"http": recordtest.Once(t, "http", func(j string) string {
			return recordtest.Record(t, "http", connect.Spec{Journal: j, URL: testservers.StartHTTP(t, testservers.HTTPOpts{})}, recordtest.GoScript)
		}),
	}
}

// TestAgreesWithSession: the streaming scan ties every frame to the same
// call as the session's own correlation (session.Load), and, with Final,
// sees each call end the same way.
func TestAgreesWithSession(t *testing.T) {
	for name, path := range recordings(t) {
		t.Run(name, func(t *testing.T) {
			s, _, err := session.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			wantKey := map[uint64]string{}
			for _, it := range s.Store().Since(0, 0) {
				wantKey[it.Seq] = it.CallKey
			}
			wantState := map[string]string{}
			for _, c := range s.Calls() {
				sn := c.Snapshot()
				wantState[sn.Key] = session.StateWord(&sn)
			}
			states := map[string]bool{}
			_, err = scan.File(path, scan.Options{Final: true}, func(fr *scan.Frame) error {
				got := ""
				if fr.Call != nil {
					got = fr.Call.Key
					// session.Load does not apply the client's own
					// notifications/cancelled (offline calls end only by an
					// answer); the scan does, like the live session.
					if w := session.StateWord(fr.Call); w != wantState[got] && fr.Call.Name != "delay" {
						t.Errorf("seq %d (call %s %s): final state %q, the session says %q", fr.Seq, got, fr.Call.Name, w, wantState[got])
					}
					states[session.StateWord(fr.Call)] = true
				}
				if got != wantKey[fr.Seq] {
					t.Errorf("seq %d: call %q, the session says %q", fr.Seq, got, wantKey[fr.Seq])
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// The cancelled delay stays cancelled, whether or not the
			// server answers it late (the Go SDK does on stdio).
			for _, w := range []string{"ok", "error"} {
				if !states[w] {
					t.Errorf("no call ended %q in the recording; the script should make one (saw %v)", w, states)
				}
			}
			if !states["cancelled"] || states["late"] {
				t.Errorf("the cancelled delay is not cancelled, or a cancelled call reads late (saw %v)", states)
			}
		})
	}
}

// TestFilters runs filters over a recording through the one adapter
// (framefilter.Subjects) and checks what they pick.
func TestFilters(t *testing.T) {
	recs := recordings(t)
	path := recs["http"]
	count := func(expr string, final bool) (n int, methods map[string]int) {
		f, err := filter.Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		subj := framefilter.NewSubjects()
		methods = map[string]int{}
		_, err = scan.File(path, scan.Options{Final: final}, func(fr *scan.Frame) error {
			if f.Match(subj.Fill(&fr.Frame, fr.Env, fr.Call, fr.Time)) {
				n++
				methods[subj.Fill(&fr.Frame, fr.Env, fr.Call, fr.Time).Method]++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n, methods
	}
	if n, _ := count("~t slow & ~k progress", false); n != 3 {
		t.Errorf("progress of slow: %d frames, want 3", n)
	}
	// ~e with Final: the request of a failed call matches too.
	n, m := count("~e & ~k request", true)
	if n != 2 || m["tools/call"] != 2 {
		t.Errorf("failed requests: %d %v, want the tool error and the unknown tool", n, m)
	}
	if n, m := count("(~s cancelled | ~s late) & ~d out", true); n != 2 || m["tools/call"] != 1 || m["notifications/cancelled"] != 1 {
		t.Errorf("frames sent for the cancelled call: %d %v, want its request and the notifications/cancelled", n, m)
	}
	// Without Final the request is judged when it is sent: pending.
	if n, _ := count("~e & ~k request", false); n != 0 {
		t.Errorf("failed requests in one pass: %d, want 0 (nothing has failed yet when a request goes out)", n)
	}
	path = recs["stdio"] // where the Go SDK answers a cancelled call late: the call stays cancelled
	if n, _ := count("~s cancelled & ~k response", true); n != 1 {
		t.Errorf("responses of the cancelled call: %d, want its late answer", n)
	}
	if n, _ := count("~s late", true); n != 0 {
		t.Errorf("frames of a late call: %d, want 0 (a cancelled call answered late stays cancelled)", n)
	}
	path = recs["http"]
	if n, _ := count("~m tools/list & ~k response & ~c echo", false); n != 1 {
		t.Errorf("tools/list responses naming echo: %d, want 1", n)
	}
	if n, _ := count("~h content-type=text/event-stream", false); n == 0 {
		t.Error("no frame carried Content-Type: text/event-stream")
	}
	if n, _ := count("~dur >250ms & ~t slow & ~k request", true); n != 1 {
		t.Errorf("slow request longer than 250ms: %d, want 1", n)
	}
}

// TestBounded: a journal of many calls is scanned with a bounded table of
// calls (ended calls are forgotten after keepEnded), and a response to a
// forgotten call is simply a frame without a call.
func TestBounded(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"format":"mcpscope-journal/1","started":"2026-01-01T00:00:00Z","target":"stdio: x","pid":1}` + "\n")
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	seq := uint64(0)
	add := func(dir transport.Dir, raw string) {
		seq++
		at = at.Add(time.Millisecond)
		b.Write(journal.AppendRecord(nil, seq, transport.Frame{Time: at, Dir: dir, Kind: transport.Message, Data: []byte(raw)}))
	}
	const calls = 20000
	for i := 1; i <= calls; i++ {
		add(transport.Out, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t%d","_meta":{"progressToken":%d}}}`, i, i%7, i))
		add(transport.In, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%d,"progress":1}}`, i))
		add(transport.In, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}`, i))
	}
	add(transport.In, `{"jsonrpc":"2.0","id":1,"result":{}}`)           // far too late: forgotten
	add(transport.Out, `{"jsonrpc":"2.0","id":"open","method":"ping"}`) // never answered
	path := filepath.Join(t.TempDir(), "many.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	withCall, orphans, last := 0, 0, (*scan.Frame)(nil)
	told := map[int]int{}
	lastTold := ""
	ended := func(i int, c *session.CallSnapshot) {
		told[i]++
		lastTold = c.Key + " " + string(c.State)
	}
	_, err := scan.File(path, scan.Options{Final: true, CallEnded: ended}, func(fr *scan.Frame) error {
		if fr.Call != nil {
			withCall++
			if fr.Call.State != session.StateOK && fr.Call.Method != "ping" {
				t.Fatalf("seq %d: state %s", fr.Seq, fr.Call.State)
			}
		}
		if fr.Call == nil {
			orphans++
		}
		cp := *fr
		last = &cp
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if withCall != 3*calls+1 || last.Call == nil || last.Call.Key != `"open"` {
		t.Fatalf("%d frames with a call (want %d); the last: %+v", withCall, 3*calls+1, last.Call)
	}
	if orphans != 1 {
		t.Fatalf("%d frames without a call, want 1 (the answer to a call forgotten long ago)", orphans)
	}
	// The call still open when the journal ends ends with it, lost.
	if len(told) != calls+1 || lastTold != `"open" error` {
		t.Fatalf("CallEnded heard of %d calls (want %d), the last %q", len(told), calls+1, lastTold)
	}
	for i, n := range told {
		if n != 1 {
			t.Fatalf("call %d told %d times", i, n)
		}
	}
}

// TestTorn: a torn last line still lets every whole frame through, and
// the error says so.
func TestTorn(t *testing.T) {
	path := recordings(t)["stdio"]
	data, _ := os.ReadFile(path)
	torn := filepath.Join(t.TempDir(), "torn.jsonl")
	os.WriteFile(torn, data[:len(data)-20], 0o600)
	n := 0
	_, err := scan.File(torn, scan.Options{Final: true}, func(*scan.Frame) error { n++; return nil })
	if err == nil || !strings.Contains(err.Error(), "incomplete") || n == 0 {
		t.Fatalf("%d frames, err %v", n, err)
	}
}

// TestInfo: what a recording says about the server.
func TestInfo(t *testing.T) {
	for name, path := range recordings(t) {
		var in scan.Info
		if _, err := scan.File(path, scan.Options{}, func(fr *scan.Frame) error { in.Observe(fr); return nil }); err != nil {
			t.Fatal(err)
		}
		if in.ServerInfo.Name != "mcpscope-everything" || in.Transport != name || in.Era == "" || in.ProtocolVersion == "" || len(in.Capabilities) == 0 {
			t.Errorf("%s: %+v", name, in)
		}
		if name == "http" && (in.SessionID == "" || !strings.HasPrefix(in.URL, "http://127.0.0.1:")) {
			t.Errorf("http: session %q, url %q", in.SessionID, in.URL)
		}
	}
}

// TestExitEndsOpenCallsInOrder: the calls a server's exit leaves open end
// in the order they were made, every time (the correlator's map iterates
// in another order each run), so CallEnded and a listing are the same
// from one read to the next.
func TestExitEndsOpenCallsInOrder(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"format":"mcpscope-journal/1","started":"2026-01-01T00:00:00Z","target":"stdio: x","pid":1}` + "\n")
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const open = 12
	for i := 1; i <= open; i++ {
		b.Write(journal.AppendRecord(nil, uint64(i), transport.Frame{Time: at, Dir: transport.Out, Kind: transport.Message,
			Data: []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t%d"}}`, i, i))}))
	}
	b.Write(journal.AppendRecord(nil, open+1, transport.Frame{Time: at, Dir: transport.Local, Kind: transport.Event,
		Meta: transport.Meta{Event: transport.EvExited}}))
	for run := 0; run < 20; run++ {
		var names []string
		_, err := scan.Reader(bytes.NewReader(b.Bytes()), func(_ int, c *session.CallSnapshot) {
			names = append(names, c.Name)
		}, func(*scan.Frame) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		if len(names) != open {
			t.Fatalf("run %d: %d calls ended, want %d: %v", run, len(names), open, names)
		}
		for i, n := range names {
			if want := fmt.Sprintf("t%d", i+1); n != want {
				t.Fatalf("run %d: the calls the exit left open ended in the order %v, want t1…t%d", run, names, open)
			}
		}
	}
}

// TestDetachedCallEndsDetached: a call the journal's note says was detached
// ends there, detached under its handle, in one pass and with Final (its
// request frame then already knows), not lost when the transport closed.
func TestDetachedCallEndsDetached(t *testing.T) {
	const path, handle = "../../session/testdata/detached.jsonl", "20261206T041540-f9f85a-23180-3"
	for _, o := range []scan.Options{{}, {Final: true}, {Borrow: true, NoParams: true, NoProgress: true}, {Final: true, Borrow: true}} {
		t.Run(fmt.Sprintf("final=%v,borrow=%v", o.Final, o.Borrow), func(t *testing.T) {
			var ended []string
			o.CallEnded = func(_ int, c *session.CallSnapshot) {
				ended = append(ended, c.Key+" "+session.StateWord(c)+" "+c.Handle)
			}
			var request string
			_, err := scan.File(path, o, func(fr *scan.Frame) error {
				if fr.Call != nil && fr.Call.Key == "3" && fr.Dir == transport.Out {
					request = session.StateWord(fr.Call) + " " + fr.Call.Handle
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := "3 detached " + handle; len(ended) != 3 || ended[2] != want {
				t.Fatalf("calls ended: %q; want the last %q", ended, want)
			}
			if want := "detached " + handle; o.Final && request != want {
				t.Fatalf("with Final, the request frame's call is %q, want %q", request, want)
			}
		})
	}
}
