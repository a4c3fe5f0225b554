package bench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"time"

	"mcpscope/journal"
	"mcpscope/transport"
)

// WriteJournal writes a synthetic journal of at least frames frames to
// path: cycles of a tools/call, three progress notifications and the
// result, with a log line, an error and a cancelled call now and then.
// With http the session is Streamable HTTP (each call a POST with its
// headers and an SSE stream opened and closed around it, SSE metadata on
// every frame), else stdio (the pid on every frame, a stderr line now and
// then). It is what scripts/bigjournal and the read-back rows use.
func WriteJournal(path string, frames int, http bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	writeJournal(w, frames, http)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeJournal(w io.Writer, frames int, http bool) {
	const url = "http://127.0.0.1:3001/mcp"
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	target := "stdio: node server.js"
	if http {
		target = "http: " + url
	}
	fmt.Fprintf(w, `{"format":%q,"started":%q,"target":%q,"pid":1}`+"\n", journal.Format, at.Format(time.RFC3339Nano), target)
	seq := uint64(0)
	var buf []byte
	put := func(fr transport.Frame) {
		seq++
		at = at.Add(time.Millisecond)
		fr.Time = at
		if !http {
			fr.Meta = transport.Meta{PID: 4242}
		}
		buf = journal.AppendRecord(buf[:0], seq, fr)
		w.Write(buf)
	}
	msg := func(dir transport.Dir, stream string, raw string) {
		m := transport.Meta{HTTPMethod: "POST", URL: url, Stream: stream}
		if dir == transport.Out {
			m.Headers = map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
				"Mcp-Session-Id": "S1", "Authorization": "Bearer [redacted]"}
		} else {
			m.EventType, m.EventID = "message", fmt.Sprintf("%s-%d", stream, seq)
		}
		put(transport.Frame{Dir: dir, Kind: transport.Message, Data: []byte(raw), Meta: m})
	}
	event := func(name, stream string, status int) {
		if !http {
			return
		}
		put(transport.Frame{Dir: transport.Local, Kind: transport.Event, Meta: transport.Meta{Event: name, HTTPMethod: "POST", URL: url,
			Stream: stream, Status: status, Headers: map[string]string{"Content-Type": "text/event-stream"}}})
	}
	msg(transport.Out, "post:0", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bigjournal","version":"1"}}}`)
	event(transport.EvStreamOpened, "post:0", 200)
	msg(transport.In, "post:0", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"big","version":"1"}}}`)
	event(transport.EvStreamClosed, "post:0", 0)
	tools := []string{"search", "fetch", "get_weather", "summarise", "translate"}
	for id := 1; int(seq) < frames; id++ {
		key := fmt.Sprint(id)
		stream := "post:" + key
		tool := tools[id%len(tools)]
		msg(transport.Out, stream, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"query":"paris weather %d","limit":10},"_meta":{"progressToken":"t%d"}}}`, id, tool, id, id))
		event(transport.EvStreamOpened, stream, 200)
		for p := 1; p <= 3; p++ {
			msg(transport.In, stream, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t%d","progress":%d,"total":3,"message":"step %d/3"}}`, id, p, p))
		}
		if id%10 == 0 {
			msg(transport.In, stream, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"cache miss"}}`)
			if !http {
				put(transport.Frame{Dir: transport.In, Kind: transport.Stderr, Data: []byte("warn: cache miss for \"paris\"")})
			}
		}
		switch {
		case id%50 == 0:
			msg(transport.In, stream, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32602,"message":"unknown argument"}}`, id))
		case id%97 == 0:
			msg(transport.Out, "", fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"user"}}`, id))
		default:
			msg(transport.In, stream, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"result %d of %s: sunny, 21°C, light wind from the west"}]}}`, id, id, tool))
		}
		event(transport.EvStreamClosed, stream, 0)
	}
}
