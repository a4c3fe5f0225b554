package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpscope/journal"
	"mcpscope/transport"
)

// scriptedHost is a host as a test writes it: it runs `mcpscope proxy`
// in front of the demo server, as a host's config would, and speaks
// JSON-RPC on the proxy's stdin and stdout.
type scriptedHost struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	mu    sync.Mutex
	lines []string                 // every line the host got, in order
	got   map[string]chan hostLine // answers by id
	done  chan struct{}
}

type hostLine struct {
	raw   string
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result json.RawMessage `json:"result"`
}

func startHost(t *testing.T, env []string, name string) *scriptedHost {
	t.Helper()
	bin := binary(t)
	cmd := exec.Command(bin, "proxy", "--name", name, "--", bin, "demo")
	cmd.Env = env
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &scriptedHost{t: t, cmd: cmd, in: in, got: map[string]chan hostLine{}, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			line := sc.Text()
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			var hl hostLine
			_ = json.Unmarshal([]byte(line), &m)
			_ = json.Unmarshal([]byte(line), &hl)
			hl.raw = line
			h.mu.Lock()
			h.lines = append(h.lines, line)
			if len(m.ID) > 0 {
				h.chanFor(string(m.ID)) <- hl
			}
			h.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		h.in.Close()
		select {
		case <-h.done:
		case <-time.After(hangGuard):
			cmd.Process.Kill()
		}
		cmd.Wait()
	})
	return h
}

// chanFor is the channel id's answer comes on (h.mu held).
func (h *scriptedHost) chanFor(id string) chan hostLine {
	c := h.got[id]
	if c == nil {
		c = make(chan hostLine, 4)
		h.got[id] = c
	}
	return c
}

func (h *scriptedHost) send(format string, a ...any) {
	h.t.Helper()
	if _, err := fmt.Fprintf(h.in, format+"\n", a...); err != nil {
		h.t.Fatalf("host write: %v", err)
	}
}

// answer waits (bounded) for the answer to the host's request id.
func (h *scriptedHost) answer(id int) hostLine {
	h.t.Helper()
	h.mu.Lock()
	c := h.chanFor(strconv.Itoa(id))
	h.mu.Unlock()
	select {
	case l := <-c:
		return l
	case <-time.After(hangGuard):
		h.t.Fatalf("the host got no answer to request %d", id)
	case <-h.done:
		h.t.Fatalf("the proxy closed before answering request %d", id)
	}
	return hostLine{}
}

// call sends tools/call and returns the host's answer.
func (h *scriptedHost) call(id int, tool string, args string) hostLine {
	h.t.Helper()
	h.send(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
	return h.answer(id)
}

func attachEnv(t *testing.T, dir string) []string {
	t.Helper()
	// The runtime dir is short so that proxies' sockets go there and not
	// to the per-user fallback under /tmp, which other packages' tests
	// running at the same time would see (and list).
	run, err := os.MkdirTemp("", "e2e")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	env := []string{"XDG_STATE_HOME=" + dir + "/state", "XDG_RUNTIME_DIR=" + run, "XDG_CONFIG_HOME=" + dir + "/config"}
	var keep []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "XDG_") {
			keep = append(keep, kv)
		}
	}
	return append(keep, env...)
}

// A host runs through mcpscope proxy; mcpscope attach shows its calls from
// the start and live, marked as the host's; a replay from the attached TUI
// returns inside the same server while the host's own calls go on
// unaffected (and never see its answer); a host's slow call cancelled from
// the TUI, after confirming, ends in the host with the proxy's error.
func TestE2EAttach(t *testing.T) {
	dir := t.TempDir()
	env := attachEnv(t, dir)
	if testing.Short() {
		t.Skip("e2e: skipped in -short mode")
	}
	h := startHost(t, env, "e2e-host")
	h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"scripted-host","version":"1"}}}`)
	if a := h.answer(1); a.Error != nil {
		t.Fatalf("initialize: %s", a.raw)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if a := h.call(2, "echo", `{"message":"before-attach"}`); a.Error != nil || !strings.Contains(a.raw, "before-attach") {
		t.Fatalf("echo: %s", a.raw)
	}

	tm := pane(t, dir, env, 120, 40, "attach", "e2e-host")
	// From the start: the calls made before attaching, marked H.
	tm.waitRe(`attached: proxy e2e-host`, `H the host's`, `H\s+1\s+initialize`, `H\s+2\s+tools/call\s+echo`)

	// Live: the host's next call shows as it happens.
	if a := h.call(3, "echo", `{"message":"live-call"}`); a.Error != nil {
		t.Fatalf("echo: %s", a.raw)
	}
	tm.waitRe(`H\s+3\s+tools/call\s+echo\s+ok`)

	// A replay from the attached TUI: it runs in the host's server and
	// comes back here, while the host's own calls go on.
	// The host has a call running meanwhile, with progress.
	h.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":2,"steps":4},"_meta":{"progressToken":"host-10"}}}`)
	tm.waitRe(`H\s+10\s+tools/call\s+slow`)
	tm.selectReq("3     tools/call")
	tm.keys("r")
	tm.waitRe(`replayed call 3 as "mcpscope-[0-9a-f]+-\d+"`, `\d\d:\d\d:\d\d {3}\S+\s+tools/call\s+echo\s+ok`)
	if a := h.answer(10); a.Error != nil || len(a.Result) == 0 {
		t.Fatalf("the host's call running during the replay ended with %s", a.raw)
	}
	if a := h.call(4, "echo", `{"message":"after-replay"}`); a.Error != nil || !strings.Contains(a.raw, "after-replay") {
		t.Fatalf("the host's call after the replay: %s", a.raw)
	}
	tm.waitRe(`H\s+4\s+tools/call\s+echo\s+ok`)
	h.mu.Lock()
	for _, l := range h.lines {
		if strings.Contains(l, "mcpscope-attach") || strings.Contains(l, "live-call") && !strings.Contains(l, `"id":3`) {
			t.Errorf("the host got a message of the viewer's: %s", l)
		}
	}
	h.mu.Unlock()

	// Cancel a host's slow call from the TUI, confirming first.
	h.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":60,"steps":60}}}`)
	tm.waitRe(`H\s+5\s+tools/call\s+slow\s+pending`)
	tm.selectReq("5     tools/call")
	tm.keys("c")
	tm.waitFor("Cancel the host's call 5", "no, leave it running", "yes, cancel the host's call")
	tm.keys("j", "Enter")
	a := h.answer(5)
	if a.Error == nil || !strings.Contains(a.Error.Message, "cancelled from mcpscope") {
		t.Fatalf("the host's cancelled call ended with %s", a.raw)
	}
	// Cancelled here too, with the proxy's error ("late" once the server's
	// own answer to the cancelled request comes after it); the row has
	// room for its start only (the id column is as wide as the replay's
	// string id).
	tm.waitRe(`H\s+5\s+tools/call\s+slow\s+(cancelled|late)\s+\S+\s+server error -32800: request cancelled`, `cancelled the host's call 5`)

	// The host goes: the proxy ends, the TUI says so and keeps the panes.
	h.in.Close()
	tm.waitRe(`disconnected`, `H\s+2\s+tools/call\s+echo`)
	tm.keys("q")
	tm.waitFor("EXITED 0")
}

// A session recorded against the demo opens offline: its calls in the
// panes, the status bar says it is a recording, the detail has the raw
// bytes, cancel says why not; a replay asks before starting the recorded
// command, then returns in a live session; o goes back. `mcpscope journal
// FILE` on a terminal opens the same view.
func TestE2EOpen(t *testing.T) {
	dir := t.TempDir()
	env := attachEnv(t, dir)
	path := filepath.Join(dir, "session.jsonl")
	rec := exec.Command(binary(t), "call", "echo", "message=recorded-hello", "--journal", path)
	rec.Env = env
	if out, err := rec.CombinedOutput(); err != nil || !strings.Contains(string(out), "recorded-hello") {
		t.Fatalf("record: %v\n%s", err, out)
	}

	tm := pane(t, dir, env, 120, 40, "open", path)
	tm.waitRe(`recording: offline · session\.jsonl`, `3\s+tools/call\s+echo\s+ok`, `server/discover`)
	tm.selectReq("tools/call")
	tm.keys("c")
	tm.waitFor("cancel: this is a recording (session.jsonl): nothing runs to cancel")
	tm.keys(":")
	tm.waitFor("send: this is a recording (session.jsonl): nothing is connected")
	tm.keys("Enter")
	tm.waitFor("request │ response │ raw", "call 3 · tools/call echo · ok")
	tm.keys("Tab", "Tab")
	tm.waitRe(`out message \d+ bytes`, `"method":"tools/call"`)
	tm.keys("Escape")
	tm.waitFor("Requests 3")

	// A replay runs the recorded command only once confirmed.
	tm.keys("r")
	tm.waitFor("The replay starts this command on this machine: stdio:", "yes, start it and replay")
	tm.keys("j", "Enter")
	tm.waitRe(`replayed call 3 as \d+ — in a live session`, `connected`, `tools/call\s+echo\s+ok`)
	tm.keys("o")
	tm.waitRe(`recording: offline · session\.jsonl`, `Requests 3 `)
	tm.keys("q")
	tm.waitFor("EXITED 0")

	tj := pane(t, dir, env, 100, 30, "journal", path)
	tj.waitRe(`recording: offline · session\.jsonl`, `tools/call\s+echo\s+ok`)
	tj.keys("q")
	tj.waitFor("EXITED 0")
}

// A long journal opens at once and fills while it is read: the first
// screen comes before the reading ends, with its progress in the status
// bar, and every call is there once it has.
func TestE2EOpenLargeJournal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "long.jsonl")
	hdr, _ := json.Marshal(journal.Header{Format: journal.Format, Started: time.Now(), Target: "http: http://127.0.0.1:1/mcp"})
	buf := append(hdr, '\n')
	const calls = 100_000 // three frames each: 300,000 frames, about 60 MB
	t0 := time.Now()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= calls; i++ {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		id := strconv.Itoa(i)
		buf = journal.AppendRecord(buf, uint64(3*i-2), transport.Frame{Time: at, Dir: transport.Out, Kind: transport.Message,
			Data: []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"message":"m` + id + `"}}}`)})
		buf = journal.AppendRecord(buf, uint64(3*i-1), transport.Frame{Time: at, Dir: transport.In, Kind: transport.Message,
			Data: []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working on ` + id + `"}}`)})
		buf = journal.AppendRecord(buf, uint64(3*i), transport.Frame{Time: at, Dir: transport.In, Kind: transport.Message,
			Data: []byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"m` + id + `"}]}}`)})
		if len(buf) > 1<<20 {
			f.Write(buf)
			buf = buf[:0]
		}
	}
	f.Write(buf)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	tm := pane(t, dir, attachEnv(t, dir), 120, 30, "open", path)
	tm.waitRe(`recording: offline · long\.jsonl`, `loading \d+%`)
	tm.waitUntil("every call, the reading over", func(s string) bool {
		return strings.Contains(s, fmt.Sprintf("calls %d ", calls)) && !strings.Contains(s, "loading")
	})
	tm.keys("q")
	tm.waitFor("EXITED 0")
}
