// Command bigjournal writes a synthetic journal of a Streamable HTTP
// session for measuring how mcpscope reads long journals: cycles of a
// tools/call POST, its SSE stream, progress notifications and the result,
// with a log line, an error and a cancelled call now and then.
//
//	go run ./scripts/bigjournal -frames 1000000 -o big.jsonl
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"time"

	"mcpscope/session"
	"mcpscope/transport"
)

func main() {
	frames := flag.Int("frames", 1_000_000, "how many frames to write (at least)")
	out := flag.String("o", "big.jsonl", "the journal to write")
	flag.Parse()
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	const url = "http://127.0.0.1:3001/mcp"
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	fmt.Fprintf(w, `{"format":"mcpscope-journal/1","started":%q,"target":"http: %s","pid":1}`+"\n", at.Format(time.RFC3339Nano), url)
	seq := uint64(0)
	var buf []byte
	put := func(fr transport.Frame) {
		seq++
		at = at.Add(time.Millisecond)
		fr.Time = at
		buf = session.AppendRecord(buf[:0], seq, fr)
		w.Write(buf)
	}
	msg := func(dir transport.Dir, stream string, raw string, status int) {
		m := transport.Meta{HTTPMethod: "POST", URL: url, Stream: stream}
		if dir == transport.Out {
			m.Headers = map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
				"Mcp-Session-Id": "S1", "Authorization": "Bearer [redacted]"}
		} else {
			m.EventType = "message"
		}
		m.Status = status
		put(transport.Frame{Dir: dir, Kind: transport.Message, Data: []byte(raw), Meta: m})
	}
	event := func(name, stream string, status int) {
		put(transport.Frame{Dir: transport.Local, Kind: transport.Event, Meta: transport.Meta{Event: name, HTTPMethod: "POST", URL: url,
			Stream: stream, Status: status, Headers: map[string]string{"Content-Type": "text/event-stream"}}})
	}
	msg(transport.Out, "post:0", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bigjournal","version":"1"}}}`, 0)
	event(transport.EvStreamOpened, "post:0", 200)
	msg(transport.In, "post:0", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"big","version":"1"}}}`, 0)
	event(transport.EvStreamClosed, "post:0", 0)
	tools := []string{"search", "fetch", "get_weather", "summarise", "translate"}
	for id := 1; int(seq) < *frames; id++ {
		key := fmt.Sprint(id)
		stream := "post:" + key
		tool := tools[id%len(tools)]
		msg(transport.Out, stream, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"query":"paris weather %d","limit":10},"_meta":{"progressToken":"t%d"}}}`, id, tool, id, id), 0)
		event(transport.EvStreamOpened, stream, 200)
		for p := 1; p <= 3; p++ {
			msg(transport.In, stream, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t%d","progress":%d,"total":3,"message":"step %d/3"}}`, id, p, p), 0)
		}
		if id%10 == 0 {
			msg(transport.In, stream, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"cache miss"}}`, 0)
		}
		switch {
		case id%50 == 0:
			msg(transport.In, stream, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32602,"message":"unknown argument"}}`, id), 0)
		case id%97 == 0:
			msg(transport.Out, "", fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"user"}}`, id), 0)
		default:
			msg(transport.In, stream, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"result %d of %s: sunny, 21°C, light wind from the west"}]}}`, id, id, tool), 0)
		}
		event(transport.EvStreamClosed, stream, 0)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	f.Close()
	fmt.Fprintf(os.Stderr, "wrote %d frames to %s\n", seq, *out)
}
