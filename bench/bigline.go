package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"mcpscope/journal"
	"mcpscope/transport"
)

// BigLineAllowance is what a reader may hold beside 1.5 times a huge line:
// the binary's own few megabytes and its buffers (issue 37: a 300 MB line
// must not cost its size more than once and a half).
const BigLineAllowance = 64 << 20

// BigLineLimit is the most a reader of a journal with one line of line
// bytes may peak at.
func BigLineLimit(line int64) int64 { return line*3/2 + BigLineAllowance }

// WriteBigLineJournal writes a journal of a Streamable HTTP session whose
// one tools/call result (with request: its arguments) is a single frame of
// about line bytes (text with escapes and a multi-byte character, so
// decoding and encoding both have work), between initialize and
// tools/list. The huge frame is written a piece at a time, so the writer
// stays small.
func WriteBigLineJournal(path string, line int, request bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	writeBigLine(w, line, request)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeBigLine(w *bufio.Writer, line int, request bool) {
	const url = "http://127.0.0.1:3001/mcp"
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	head, _ := json.Marshal(journal.Header{Format: journal.Format, Started: at, Target: "http: " + url, PID: 1})
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
		_, _ = journal.WriteRecord(w, nil, seq, transport.Frame{Time: at.Add(time.Duration(seq) * time.Millisecond),
			Dir: dir, Kind: kind, Data: data, Meta: m}) // a write error is Flush's
	}
	msg := func(dir transport.Dir, stream, raw string) { put(dir, transport.Message, stream, "", []byte(raw)) }
	ev := func(name, stream string) { put(transport.Local, transport.Event, stream, name, nil) }
	msg(transport.Out, "post:0", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	ev(transport.EvStreamOpened, "post:0")
	msg(transport.In, "post:0", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"big","version":"1"}}}`)
	ev(transport.EvStreamClosed, "post:0")
	// The huge frame as AppendRecord would write it whole: its record
	// around a one-byte frame, the frame's bytes written in between.
	huge := func(dir transport.Dir, head, tail string) {
		seq++
		m := transport.Meta{HTTPMethod: "POST", URL: url, Stream: "post:1"}
		if dir == transport.In {
			m.EventType = "message"
		}
		rec := journal.AppendRecord(nil, seq, transport.Frame{Time: at.Add(time.Duration(seq) * time.Millisecond), Dir: dir,
			Kind: transport.Message, Data: []byte("x"), Meta: m})
		esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace
		w.Write(rec[:len(rec)-len(`x"}`+"\n")])
		w.WriteString(esc(head))
		unit := esc(`a line of \"text\" with é\n`) // the text's JSON escapes, escaped again in the record
		for range line / len(unit) {
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
}

// BigLineReaders is every command that reads a whole journal at path, as
// mcpscope's arguments, writing what it writes under out.
func BigLineReaders(path, out string) [][]string {
	return [][]string{
		{"journal", path},
		{"export", path, "--format", "jsonl", "-o", filepath.Join(out, "out.jsonl")},
		{"export", path, "--format", "har", "-o", filepath.Join(out, "out.har")},
		{"export", path, "--format", "otlp", "-o", filepath.Join(out, "out.otlp")},
		{"diff", path, path},
	}
}

// BigLineRow is the readers' peaks over a journal of one huge line.
type BigLineRow struct {
	Line    int64  // the huge frame's size
	Request bool   // the line is a request's arguments (else a result)
	Peaks   []Peak // one per reader, in BigLineReaders' order
}

// Peak is one reader's peak resident set.
type Peak struct {
	Name string
	KiB  int64
}

// BigLine measures each reader of a journal of one line of line bytes,
// as a result and as a request, each in a child process of its own.
func BigLine(self, dir string, env []string, line int) ([]BigLineRow, error) {
	var rows []BigLineRow
	for _, request := range []bool{false, true} {
		path := filepath.Join(dir, "bigline.jsonl")
		if err := WriteBigLineJournal(path, line, request); err != nil {
			return rows, fmt.Errorf("write a journal of a %d MiB line: %w", line>>20, err)
		}
		row := BigLineRow{Line: int64(line), Request: request}
		for _, args := range BigLineReaders(path, dir) {
			p, err := runProc(append([]string{self}, args...), env, false)
			if err != nil {
				os.Remove(path)
				return rows, fmt.Errorf("%s over a %d MiB line: %w", args[0], line>>20, err)
			}
			name := args[0]
			if name == "export" {
				name += " " + args[3]
			}
			row.Peaks = append(row.Peaks, Peak{Name: name, KiB: p.PeakRSSKiB})
		}
		for _, f := range []string{"bigline.jsonl", "out.jsonl", "out.har", "out.otlp"} {
			os.Remove(filepath.Join(dir, f))
		}
		journal.RemoveIndex(path)
		rows = append(rows, row)
	}
	return rows, nil
}

// printBigLine prints the big-line rows: each reader's peak, the worst
// against the goal.
func printBigLine(w io.Writer, rows []BigLineRow) {
	for _, r := range rows {
		what := "a result"
		if r.Request {
			what = "a request's arguments"
		}
		var parts []string
		var worst int64
		for _, p := range r.Peaks {
			parts = append(parts, fmt.Sprintf("%s %.0f", p.Name, mib(p.KiB)))
			worst = max(worst, p.KiB)
		}
		limit := BigLineLimit(r.Line)
		fmt.Fprintf(w, "  one %d MiB line (%s), peak MiB: %s   goal ≤ 1.5 × the line + %d MiB = %d MiB   %s\n",
			r.Line>>20, what, strings.Join(parts, ", "), BigLineAllowance>>20, limit>>20, metWord(worst > 0 && worst<<10 <= limit))
	}
}
