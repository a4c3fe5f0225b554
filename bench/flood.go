package bench

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"time"
)

// Flood is what the flood server sends once the client is initialized:
// Burst notifications as fast as it can, then Rate a second for Paced,
// then nothing. With Exit it exits then; otherwise it serves until its
// stdin closes.
type Flood struct {
	Burst int
	Rate  int
	Paced time.Duration
	Exit  bool
}

// FloodLine is notification i of a flood: a log message whose data reads
// "n i", so a reader can tell which one it is looking at.
func FloodLine(buf []byte, i int) []byte {
	buf = append(buf, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"flood","data":"n `...)
	buf = strconv.AppendInt(buf, int64(i), 10)
	return append(buf, "\"}}\n"...)
}

// Serve is a minimal MCP server over stdio (the initialize era) that
// answers the handshake and floods its client with notifications.
func Serve(in io.Reader, out io.Writer, f Flood) error {
	w := bufio.NewWriterSize(out, 64<<10)
	var mu sync.Mutex
	send := func(b []byte) {
		mu.Lock()
		w.Write(b)
		w.Flush()
		mu.Unlock()
	}
	started := make(chan struct{})
	done := make(chan struct{})
	var once sync.Once
	go func() {
		<-started
		flood(w, &mu, f)
		close(done)
	}()
	lines := make(chan []byte)
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 1<<16), 1<<24)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(lines)
	}()
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				return nil
			}
			if answer(line, send) {
				once.Do(func() { close(started) })
			}
		case <-done:
			if f.Exit {
				return nil
			}
			done = nil
		}
	}
}

// answer replies to one request; it reports notifications/initialized.
func answer(line []byte, send func([]byte)) (initialized bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil {
		return false
	}
	if len(m.ID) == 0 {
		return m.Method == "notifications/initialized"
	}
	var result string
	switch m.Method {
	case "initialize":
		v, _ := json.Marshal(m.Params.ProtocolVersion)
		result = `{"protocolVersion":` + string(v) + `,"capabilities":{"logging":{}},"serverInfo":{"name":"mcpscope-flood","version":"1"}}`
	case "ping", "logging/setLevel":
		result = `{}`
	case "tools/list":
		result = `{"tools":[]}`
	default:
		msg, _ := json.Marshal("method not found: " + m.Method)
		send([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":` + string(msg) + "}}\n"))
		return false
	}
	send([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + "}\n"))
	return false
}

// flood sends the notifications; it stops when the client is gone (a
// write fails: the client was killed, say).
func flood(w *bufio.Writer, mu *sync.Mutex, f Flood) {
	var buf []byte
	n := 0
	for n < f.Burst {
		mu.Lock()
		var err error
		for k := 0; k < 256 && n < f.Burst && err == nil; k++ {
			buf = FloodLine(buf[:0], n)
			_, err = w.Write(buf)
			n++
		}
		mu.Unlock()
		if err != nil {
			return
		}
	}
	mu.Lock()
	err := w.Flush()
	mu.Unlock()
	if err != nil || f.Rate <= 0 || f.Paced <= 0 {
		return
	}
	start := time.Now()
	sent := 0
	for time.Since(start) < f.Paced {
		due := int(time.Since(start).Seconds() * float64(f.Rate))
		mu.Lock()
		for ; sent < due; sent++ {
			buf = FloodLine(buf[:0], n)
			w.Write(buf)
			n++
		}
		err := w.Flush()
		mu.Unlock()
		if err != nil {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
