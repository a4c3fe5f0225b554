package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mcpscope/journal"
	"mcpscope/testkit/nodetest"
	"mcpscope/testkit/peers"
	"mcpscope/transport"
)

// waitLong bounds every wait in these tests: a hang guard only (nothing waits
// on time to synchronise), generous for a loaded 2-core machine under -race.
const waitLong = 2 * time.Minute

// shortTemp is a short directory for sockets (sun_path is ~104 bytes, and
// t.TempDir's names are long).
func shortTemp(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "mp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// running is a stdio proxy under test, with the host's ends of its pipes.
type running struct {
	t       *testing.T
	hostW   *os.File // the host writes here (the proxy's stdin)
	hostR   *bufio.Reader
	hostOut *os.File
	stderr  *lockedBuf
	hello   Hello
	done    chan struct{}
	res     Result
	err     error
	journal string
	sigs    chan os.Signal
}

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// fakeCmd is the command that runs this test binary as the fake server.
func fakeCmd(t *testing.T) (string, []string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe, []string{"-test.run=^$"}
}

func startProxy(t *testing.T, c StdioConfig) *running {
	t.Helper()
	if c.Command == "cat" || c.Command == "sh" {
		peers.POSIX(t, c.Command+" as the server")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	dir := shortTemp(t)
	r := &running{t: t, hostW: inW, hostR: bufio.NewReaderSize(outR, 1<<20), hostOut: outR, stderr: &lockedBuf{}, done: make(chan struct{}), sigs: make(chan os.Signal, 1)}
	if c.Name == "" {
		c.Name = "test"
	}
	if c.Journal == "" {
		c.Journal = filepath.Join(dir, "journal.jsonl")
	}
	if c.SocketDir == "" {
		c.SocketDir = dir
	}
	if c.Grace == 0 {
		c.Grace = 300 * time.Millisecond
	}
	r.journal = c.Journal
	c.In, c.Out, c.Err, c.Signals = inR, outW, r.stderr, r.sigs
	ready := make(chan Hello, 1)
	c.Ready = func(h Hello) { ready <- h }
	go func() {
		defer close(r.done)
		r.res, r.err = RunStdio(context.Background(), c)
		inR.Close()
		outW.Close()
	}()
	select {
	case r.hello = <-ready:
	case <-r.done:
		t.Fatalf("proxy ended before it was ready: %v", r.err)
	case <-time.After(waitLong):
		t.Fatal("proxy not ready")
	}
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-r.done:
		case <-time.After(waitLong):
			t.Errorf("proxy did not end after the host closed its stdin")
		}
		outR.Close()
	})
	return r
}

func startFake(t *testing.T, env ...string) *running {
	t.Helper()
	cmd, args := fakeCmd(t)
	return startProxy(t, StdioConfig{Command: cmd, Args: args, Env: append([]string{"PROXY_FAKE=1", "GORACE=atexit_sleep_ms=0"}, env...)})
}

func (r *running) send(line string) {
	r.t.Helper()
	if _, err := r.hostW.Write([]byte(line + "\n")); err != nil {
		r.t.Fatalf("host write: %v", err)
	}
}

// read returns the host's next line from the proxy.
func (r *running) read() string {
	r.t.Helper()
	r.hostOut.SetReadDeadline(time.Now().Add(waitLong))
	l, err := r.hostR.ReadString('\n')
	if err != nil {
		r.t.Fatalf("host read: %v (got %q)", err, l)
	}
	return strings.TrimSuffix(l, "\n")
}

// readUntil reads host lines until one contains want, returning all read.
func (r *running) readUntil(want string) []string {
	r.t.Helper()
	var got []string
	for {
		l := r.read()
		got = append(got, l)
		if strings.Contains(l, want) {
			return got
		}
	}
}

func (r *running) wait() Result {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(waitLong):
		r.t.Fatal("proxy did not end")
	}
	if r.err != nil {
		r.t.Fatalf("RunStdio: %v", r.err)
	}
	return r.res
}

// records reads the journal back.
func (r *running) records() []journal.Record {
	r.t.Helper()
	f, err := os.Open(r.journal)
	if err != nil {
		r.t.Fatal(err)
	}
	defer f.Close()
	var out []journal.Record
	_, err = journal.Read(f, func(seq uint64, fr transport.Frame) error {
		rec := journal.Record{Seq: seq, Dir: fr.Dir.String(), Kind: fr.Kind.String(), Meta: &fr.Meta}
		s := string(fr.Data)
		rec.Raw = &s
		out = append(out, rec)
		return nil
	})
	if err != nil {
		r.t.Fatal(err)
	}
	return out
}

func (r *running) viewer() *Conn {
	r.t.Helper()
	c, err := Dial(context.Background(), SocketPath(r.hello.socketDir(r), r.hello.Name, r.hello.PID), 5*time.Second)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { c.Close() })
	return c
}

func (h Hello) socketDir(r *running) string {
	ms, _ := filepath.Glob(filepath.Join(filepath.Dir(r.journal), "*.sock"))
	if len(ms) != 1 {
		r.t.Fatalf("sockets: %v", ms)
	}
	return filepath.Dir(ms[0])
}

// next reads the viewer's next line of type typ (frames skipped unless typ is "frame").
func nextMsg(t *testing.T, c *Conn, typ string) Line {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for {
		l, err := c.Next(deadline)
		if err != nil {
			t.Fatalf("viewer: waiting for %s: %v", typ, err)
		}
		if typ == "" || typ == "frame" && l.Record != nil || l.Msg != nil && l.Msg.Type == typ {
			return l
		}
		if l.Msg != nil && l.Msg.Type == "error" && typ != "error" {
			t.Fatalf("viewer got an error waiting for %s: %s", typ, l.Msg.Error)
		}
	}
}

// Bytes in both directions arrive exactly as sent: CRLF, blank lines, a
// line that is not JSON, non-ASCII, a 3 MiB line and a last line without a
// newline, through cat.
func TestStdioByteForByteThroughCat(t *testing.T) {
	r := startProxy(t, StdioConfig{Command: "cat"})
	var in bytes.Buffer
	in.WriteString("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n\n   \nnot json at all\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"x","params":{"s":"é ✓ \u2028 \"q\""}}` + "\n")
	in.WriteString(`{"big":"` + strings.Repeat("z", 3<<20) + "\"}\n")
	in.WriteString(`{"last":"no newline"}`)
	want := in.Bytes()
	got := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(r.hostR); got <- b }()
	go func() {
		// In odd pieces, as a pipe may deliver them.
		b := bytes.Clone(want)
		for len(b) > 0 {
			n := min(len(b), 7777)
			r.hostW.Write(b[:n])
			b = b[n:]
		}
		r.hostW.Close()
	}()
	var b []byte
	select {
	case b = <-got:
	case <-time.After(waitLong):
		t.Fatal("no end of output")
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("host got %d bytes, sent %d; first difference at %d", len(b), len(want), firstDiff(b, want))
	}
	r.wait()
	recs := r.records()
	var outs, ins int
	for _, rec := range recs {
		if rec.Kind == "message" || rec.Kind == "garbage" {
			if rec.Meta.Via != transport.ViaHost {
				t.Fatalf("frame without via=host: %+v", rec)
			}
			switch rec.Dir {
			case "out":
				outs++
			case "in":
				ins++
			}
		}
	}
	if outs != 6 || ins != 6 { // the two blank lines are forwarded but are no frames; "   " is one
		t.Fatalf("journal: %d out, %d in frames", outs, ins)
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// A line over MaxLine is still forwarded whole; the journal keeps its head
// and says how long it was.
func TestStdioLineOverLimit(t *testing.T) {
	r := startProxy(t, StdioConfig{Command: "cat", MaxLine: 100 << 10})
	big := `{"big":"` + strings.Repeat("y", 300<<10) + `"}`
	r.send(big)
	if got := r.read(); got != big {
		t.Fatalf("got %d bytes back, want %d", len(got), len(big))
	}
	r.hostW.Close()
	r.wait()
	var events, heads int
	for _, rec := range r.records() {
		if rec.Meta.Event == transport.EvLineTooLong {
			events++
			if !strings.Contains(rec.Meta.Detail, fmt.Sprint(len(big)+1)) {
				t.Fatalf("detail: %s", rec.Meta.Detail)
			}
		}
		if rec.Kind == "garbage" && len(*rec.Raw) == journalHead {
			heads++
		}
	}
	if events != 2 || heads != 2 {
		t.Fatalf("%d line-too-long events, %d heads", events, heads)
	}
}

func TestStdioServerExitCodeAfterFlush(t *testing.T) {
	r := startFake(t)
	r.send(`{"jsonrpc":"2.0","id":1,"method":"exit","params":{"code":5}}`)
	if l := r.read(); !strings.Contains(l, `"bye"`) {
		t.Fatalf("last line: %s", l)
	}
	res := r.wait()
	if res.ExitCode != 5 {
		t.Fatalf("exit code %d", res.ExitCode)
	}
	if !strings.Contains(r.stderr.String(), "fake: ready") {
		t.Fatalf("stderr not passed through: %q", r.stderr.String())
	}
	var stderrFrames int
	for _, rec := range r.records() {
		if rec.Kind == "stderr" {
			stderrFrames++
		}
	}
	if stderrFrames == 0 {
		t.Fatal("stderr not journaled")
	}
}

// Host EOF: a server that exits on EOF ends the proxy with its code; one
// that ignores EOF and SIGTERM is killed by the ladder.
func TestStdioHostEOFLadder(t *testing.T) {
	t.Run("polite", func(t *testing.T) {
		r := startFake(t)
		r.send(`{"jsonrpc":"2.0","id":1,"method":"echo"}`)
		r.read()
		r.hostW.Close()
		if res := r.wait(); res.ExitCode != 0 {
			t.Fatalf("exit %+v; stderr %q; %v", res, r.stderr.String(), r.records())
		}
		if !strings.Contains(r.stderr.String(), "fake: stdin closed") {
			t.Fatalf("stderr %q", r.stderr.String())
		}
	})
	t.Run("stubborn", func(t *testing.T) {
		r := startFake(t, "PROXY_FAKE_STUBBORN=1")
		r.send(`{"jsonrpc":"2.0","id":1,"method":"echo"}`)
		r.read()
		start := time.Now()
		r.hostW.Close()
		res := r.wait()
		if res.Signal == "" || res.ExitCode != 128+int(syscall.SIGKILL) {
			t.Fatalf("exit %+v", res)
		}
		t.Logf("ladder took %v (grace 300ms per step)", time.Since(start))
		var steps []string
		for _, rec := range r.records() {
			if rec.Meta.Event == transport.EvClosed || rec.Meta.Event == transport.EvExited {
				steps = append(steps, rec.Meta.Detail)
			}
		}
		if !strings.Contains(strings.Join(steps, "|"), "SIGKILL") {
			t.Fatalf("ladder steps: %v", steps)
		}
	})
}

// A signal the host sends is passed on to the server.
func TestStdioSignalPassedOn(t *testing.T) {
	r := startFake(t)
	r.send(`{"jsonrpc":"2.0","id":1,"method":"echo"}`)
	r.read()
	r.sigs <- syscall.SIGTERM
	res := r.wait()
	if res.ExitCode != 7 || !strings.Contains(r.stderr.String(), "fake: got terminated") {
		t.Fatalf("exit %+v, stderr %q", res, r.stderr.String())
	}
}

var _ = exec.Command
var _ = json.Valid

func writeFile(p string) error {
	if err := ensureDir(filepath.Dir(p)); err != nil {
		return err
	}
	return os.WriteFile(p, nil, 0o600)
}

func statFile(p string) (os.FileInfo, error) { return os.Stat(p) }

// SIGTERM from the host ends the proxy even while its journal takes
// nothing (a FIFO nobody reads) and a flood has filled the queue: the
// signal's note does not wait for room, and past the shutdown ladder the
// journal is given up. It used to wait for room for ever.
func TestStdioSignalEndsItWithAStuckJournal(t *testing.T) {
	dir := shortTemp(t)
	fifo := filepath.Join(dir, "journal.jsonl")
	nodetest.LoneFIFO(t, fifo)
	// A reader that never reads, so that the proxy's open does not wait.
	rd, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	cmd, args := fakeCmd(t)
	r := startProxy(t, StdioConfig{Command: cmd, Args: args, Journal: fifo, Grace: time.Second,
		Env: []string{"PROXY_FAKE=1", "PROXY_FAKE_STUBBORN=1", "GORACE=atexit_sleep_ms=0"}})
	r.send(`{"jsonrpc":"2.0","id":1,"method":"flood","params":{"n":2000000}}`)
	r.read()
	// The host reads on; the flood fills the journal's queue meanwhile.
	go io.Copy(io.Discard, r.hostR)
	r.sigs <- syscall.SIGTERM
	select {
	case <-r.done:
	case <-time.After(waitLong):
		t.Fatalf("the proxy did not end on SIGTERM with its journal stuck; stderr:\n%s", r.stderr)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
}
