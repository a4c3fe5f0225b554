package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/transport"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "j.jsonl")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func record(seq int, data string) string {
	return string(journal.AppendRecord(nil, uint64(seq), transport.Frame{Time: time.Unix(1700000000, 0), Dir: transport.In, Kind: transport.Message, Data: []byte(data)}))
}

const header = `{"format":"mcpscope-journal/1","started":"2026-01-01T00:00:00Z","target":"stdio: srv","pid":1}` + "\n"

// mcpscope journal says what a file is: empty, a header alone, not a
// journal at all; it counts the frames it read, reports every line that
// is not a record by number and goes on past it.
func TestJournalCommandSaysWhatItRead(t *testing.T) {
	note := func(i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"%d"}}`, i)
	}
	damaged := header + record(1, note(1)) + "not a record\n" + record(3, note(3)) + `{"a":1}` + "\n" + record(5, note(5)) + `{"seq":6,"t":"`
	cases := []struct {
		name    string
		content string
		code    int
		want    []string
	}{
		{"empty", "", exitUsage, []string{"holds no frames and no journal header: it is empty"}},
		{"header only", header, exitOK, []string{"frames   0 (the journal has its header and nothing else"}},
		{"not a journal", `{"name":"pkg","version":"1.0.0"}` + "\n", exitUsage, []string{"is not an mcpscope journal", "neither a journal header nor a journal record"}},
		{"damaged", damaged, exitServerErr, []string{"frames   3 read", "in message       3", "line 3 is not a record", "line 5 is not a record",
			"line 7 is incomplete", "3 line(s) could not be read"}},
		{"record output", record(1, note(1)) + record(2, note(2)), exitOK, []string{"frames   2 read", "no journal header"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errb := run(t, "journal", writeFile(t, c.content))
			all := out + errb
			if code != c.code {
				t.Errorf("exit %d, want %d:\n%s", code, c.code, all)
			}
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("output lacks %q:\n%s", w, all)
				}
			}
		})
	}
}

// journal --json gives the summary as one JSON object, and journal names
// every call's state with the session's one rule: a call cancelled stays
// cancelled when the server's answer to the cancel comes late, and a host's
// call that mcpscope proxy cancelled for a viewer is cancelled, not an
// error, as the TUI shows it.
func TestJournalJSONAndCancelledCalls(t *testing.T) {
	frame := func(seq int, dir transport.Dir, via, data string) string {
		f := transport.Frame{Time: time.Unix(1700000000, int64(seq)*int64(time.Millisecond)), Dir: dir, Kind: transport.Message, Data: []byte(data)}
		f.Meta.Via = via
		return string(journal.AppendRecord(nil, uint64(seq), f))
	}
	const o, i = transport.Out, transport.In
	path := writeFile(t, header+
		frame(1, o, "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`)+
		frame(2, o, "", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}`)+
		frame(3, i, "", `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)+
		frame(4, o, transport.ViaHost, `{"jsonrpc":"2.0","id":"h-3","method":"tools/call","params":{"name":"slow"}}`)+
		frame(5, i, transport.ViaMcpscope, `{"jsonrpc":"2.0","id":"h-3","error":{"code":-32800,"message":"request cancelled from mcpscope"}}`)+
		frame(6, o, transport.ViaMcpscope, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"h-3","reason":"cancelled from mcpscope"}}`)+
		frame(7, i, transport.ViaDropped, `{"jsonrpc":"2.0","id":"h-3","result":{}}`))

	code, out, errb := run(t, "journal", path, "--json")
	if code != exitOK {
		t.Fatalf("journal --json: exit %d\n%s%s", code, out, errb)
	}
	var sum struct {
		Journal string
		Target  string
		Frames  int
		Kinds   map[string]int
		Calls   []struct{ Key, Method, State string }
		Total   int `json:"totalCalls"`
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil || strings.Count(out, "\n") != 1 {
		t.Fatalf("journal --json is not one JSON object: %v\n%s", err, out)
	}
	if sum.Journal != path || sum.Target != "stdio: srv" || sum.Frames != 7 || sum.Total != 2 || sum.Kinds["out message"] != 4 {
		t.Errorf("summary: %+v", sum)
	}
	states := map[string]string{}
	for _, c := range sum.Calls {
		states[c.Key] = c.State
	}
	if states["1"] != "cancelled" || states[`"h-3"`] != "cancelled" {
		t.Errorf("call states %v, want both cancelled", states)
	}
	// The session reading the same journal back says the same words.
	s, _, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for key, want := range states {
		sn := s.Lookup(key).Snapshot()
		if got := session.StateWord(&sn); got != want {
			t.Errorf("call %s: the session says %q, journal %q", key, got, want)
		}
	}
	_, text, _ := run(t, "journal", path, "--summary")
	if !strings.Contains(text, "cancelled") || strings.Contains(text, " late ") || strings.Contains(text, " error ") {
		t.Errorf("journal --summary:\n%s", text)
	}
}

// durText is Duration.String for every duration journal prints (whole
// milliseconds, under a second from its cache, longer or odd ones as
// they are), asked twice so that a cached text is read back too.
func TestJournalDurText(t *testing.T) {
	var sum journalSummary
	ds := []time.Duration{0, time.Millisecond, 999 * time.Millisecond, time.Second, 1001 * time.Millisecond,
		-time.Millisecond, -999 * time.Millisecond, time.Microsecond, 1500 * time.Microsecond, 90 * time.Minute}
	for ms := range 1000 {
		ds = append(ds, time.Duration(ms)*time.Millisecond)
	}
	for range 2 {
		for _, d := range ds {
			if got, want := sum.durText(d), d.String(); got != want {
				t.Fatalf("durText(%d) = %q, want %q", d, got, want)
			}
		}
	}
}

// TestJournalAndExportShowADetachedCall: a call detached in the recorded
// session (the journal's note "detached call 3 as HANDLE") reads detached,
// with its handle, in journal's summary (text and --json) and in an OTLP
// export, not lost when the transport closed after it; export --filter
// '~s detached' finds it.
func TestJournalAndExportShowADetachedCall(t *testing.T) {
	const path, handle = "../session/testdata/detached.jsonl", "20261206T041540-f9f85a-23180-3"
	code, out, errb := run(t, "journal", path)
	if code != exitOK || !regexp.MustCompile(`#3\s+tools/call slow\s+detached\s+40ms\s+as `+handle).MatchString(out) || strings.Contains(out, "lost") {
		t.Fatalf("journal: exit %d\n%s%s", code, out, errb)
	}
	code, out, errb = run(t, "journal", path, "--json")
	if code != exitOK || !strings.Contains(out, `"state":"detached","durationMs":40,"handle":"`+handle+`"`) {
		t.Fatalf("journal --json: exit %d\n%s%s", code, out, errb)
	}
	code, out, errb = run(t, "export", "--format", "otlp", path)
	if code != exitOK || !strings.Contains(out, `{"key":"mcpscope.call.handle","value":{"stringValue":"`+handle+`"}},{"key":"mcpscope.call.state","value":{"stringValue":"detached"}}`) ||
		strings.Contains(out, "transport_closed") {
		t.Fatalf("export --format otlp: exit %d\n%s%s", code, out, errb)
	}
	code, out, errb = run(t, "export", "--format", "jsonl", "--filter", "~s detached", path)
	if code != exitOK || !strings.Contains(out, `"detail":"detached call 3 as `+handle+`"`) || !strings.Contains(out, `\"name\":\"slow\"`) {
		t.Fatalf("export --filter '~s detached': exit %d\n%s%s", code, out, errb)
	}
}
