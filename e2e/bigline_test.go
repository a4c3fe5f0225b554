package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/session"
	"mcpscope/transport"
)

// bigLine is the size of the huge frame in bigJournal: large enough that
// copies of it stand out of the binary's own few megabytes. hugeLine is
// the size a hostile journal was seen with (the 300 MB of issue 37).
const (
	bigLine  = 64 << 20
	hugeLine = 300 << 20
)

// bigJournal writes a journal of a Streamable HTTP session whose one
// tools/call result is a single frame of about bigLine bytes (text with
// escapes and a multi-byte character, so decoding and encoding both have
// work), between initialize and tools/list.
func bigJournal(t *testing.T, path string, bigLine int, request bool) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	const url = "http://127.0.0.1:3001/mcp"
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	head, _ := json.Marshal(session.Header{Format: session.JournalFormat, Started: at, Target: "http: " + url, PID: 1})
	w.Write(append(head, '\n'))
	var seq uint64
	put := func(dir transport.Dir, kind transport.Kind, stream, event string, data []byte) {
		seq++
		m := transport.Meta{HTTPMethod: "POST", URL: url, Stream: stream, Event: event}
		if event == transport.EvStreamOpened {
			m.Status = 200
		}
		if dir == transport.In {
			m.EventType = "message"
		}
		if _, err := session.WriteRecord(w, nil, seq, transport.Frame{Time: at.Add(time.Duration(seq) * time.Millisecond),
			Dir: dir, Kind: kind, Data: data, Meta: m}); err != nil {
			t.Fatal(err)
		}
	}
	msg := func(dir transport.Dir, stream, raw string) { put(dir, transport.Message, stream, "", []byte(raw)) }
	ev := func(name, stream string) { put(transport.Local, transport.Event, stream, name, nil) }
	msg(transport.Out, "post:0", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	ev(transport.EvStreamOpened, "post:0")
	msg(transport.In, "post:0", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"big","version":"1"}}}`)
	ev(transport.EvStreamClosed, "post:0")
	// The huge line is written a piece at a time, as AppendRecord would
	// write it whole, so this process stays small. It is the call's
	// result, or with request its arguments.
	huge := func(dir transport.Dir, head, tail string) {
		seq++
		m := transport.Meta{HTTPMethod: "POST", URL: url, Stream: "post:1"}
		if dir == transport.In {
			m.EventType = "message"
		}
		rec := session.AppendRecord(nil, seq, transport.Frame{Time: at.Add(time.Duration(seq) * time.Millisecond), Dir: dir,
			Kind: transport.Message, Data: []byte("x"), Meta: m})
		esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace
		w.Write(rec[:len(rec)-len(`x"}`+"\n")])
		w.WriteString(esc(head))
		unit := esc(`a line of \"text\" with é\n`) // the text's JSON escapes, escaped again in the record
		for range bigLine / len(unit) {
			w.WriteString(unit)
		}
		w.WriteString(esc(tail) + `"}` + "\n")
	}
	if request {
		huge(transport.Out, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"dump","arguments":{"text":"`, `"}}}`)
		ev(transport.EvStreamOpened, "post:1")
		msg(transport.In, "post:1", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`)
	} else {
		msg(transport.Out, "post:1", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"dump"}}`)
		ev(transport.EvStreamOpened, "post:1")
		huge(transport.In, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`, `"}]}}`)
	}
	ev(transport.EvStreamClosed, "post:1")
	msg(transport.Out, "post:2", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	ev(transport.EvStreamOpened, "post:2")
	msg(transport.In, "post:2", `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"dump","inputSchema":{"type":"object"}}]}}`)
	ev(transport.EvStreamClosed, "post:2")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// A journal with one huge line is read by journal, export (jsonl, har,
// otlp) and diff in memory within 1.5 times the line, plus the binary's
// own: the line is held once (decoded in place, its parts slices of it),
// and what is written is encoded a piece at a time. export jsonl still
// copies it byte for byte.
func TestBigLineMemory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.jsonl")
	bigJournal(t, path, bigLine, false)
	checkBigLinePeaks(t, dir, path, bigLine, 24<<20)
	in, _ := os.ReadFile(path)
	out, _ := os.ReadFile(filepath.Join(dir, "out.jsonl"))
	if !bytes.Equal(in, out) {
		t.Errorf("export jsonl: %d bytes for a %d-byte journal, not the same bytes", len(out), len(in))
	}
	if har, _ := os.ReadFile(filepath.Join(dir, "out.har")); !json.Valid(har) || !bytes.Contains(har, []byte(`with é\\n`)) {
		t.Errorf("export har: %d bytes, valid JSON %v", len(har), json.Valid(har))
	}
}

// The same at the size seen in the wild, 300 MB, as a result and as a
// request: every reader peaks at 1.5 times the line + 64 MiB at most
// (before: diff held a huge request twice, 2.3 times the line). Not with
// -short: it writes 300 MB journals and their exports.
func TestHugeLineMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 300 MB journal")
	}
	for _, request := range []bool{false, true} {
		t.Run(map[bool]string{false: "result", true: "request"}[request], func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "huge.jsonl")
			bigJournal(t, path, hugeLine, request)
			checkBigLinePeaks(t, dir, path, hugeLine, 64<<20)
		})
	}
}

// checkBigLinePeaks runs each reader of the journal at path (one line of
// about line bytes) as a child and holds its peak resident set (rusage)
// to 1.5 × line + allowance.
func checkBigLinePeaks(t *testing.T, dir, path string, line, allowance int64) {
	t.Helper()
	st, _ := os.Stat(path)
	limit := line*3/2 + allowance
	for _, args := range [][]string{
		{"journal", path},
		{"export", path, "--format", "jsonl", "-o", filepath.Join(dir, "out.jsonl")},
		{"export", path, "--format", "har", "-o", filepath.Join(dir, "out.har")},
		{"export", path, "--format", "otlp", "-o", filepath.Join(dir, "out.otlp")},
		{"diff", path, path},
	} {
		cmd := mcpscope(t, t.TempDir(), args...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		peak, err := runMeasured(t, cmd)
		if err != nil {
			t.Fatalf("%s: %v\n%s", args[0:1], err, errb.String())
		}
		t.Logf("%s: peak %d MiB for a %d MiB line (journal %d MiB)", strings.Join(append([]string{args[0]}, args[2:]...), " "), peak>>20, line>>20, st.Size()>>20)
		if peak > limit {
			t.Errorf("%v: peak memory %d MiB, want under %d MiB (1.5 × the %d MiB line + %d MiB)", args, peak>>20, limit>>20, line>>20, allowance>>20)
		}
	}
}
