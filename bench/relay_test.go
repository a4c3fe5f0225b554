package bench

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"mcpscope/internal/loopback"
	"mcpscope/journal"
	"mcpscope/transport"
)

// noise is n bytes of every value, newlines and NULs included.
func noise(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

// TestRelayTCPPassesBytesExactly sends 1 MiB of every byte value through
// the relay to an echo server, in both directions at once, and reads back
// exactly what went out; then the client's half-close reaches the server
// and the server's close ends the client's read.
func TestRelayTCPPassesBytesExactly(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		c, err := echo.Accept()
		if err != nil {
			return
		}
		io.Copy(c, c) // until the relay passes the client's half-close on
		c.Close()
	}()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- RelayTCP(ln, echo.Addr().String()) }()

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := noise(1 << 20)
	go func() {
		c.Write(want)
		c.(*net.TCPConn).CloseWrite()
	}()
	got, err := io.ReadAll(c) // ends only when the echo server's close came through
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes, not the %d sent (or not the same bytes)", len(got), len(want))
	}
	ln.Close()
	if err := <-served; err != nil {
		t.Fatalf("RelayTCP after its listener closed: %v", err)
	}
}

// TestRelayStdioPassesBytesExactly relays 1 MiB of every byte value
// through cat: what comes out is what went in, the child's stderr goes to
// errw, and the child's failure is returned.
func TestRelayStdioPassesBytesExactly(t *testing.T) {
	if _, err := exec.LookPath("cat"); err != nil {
		t.Fatal("cat is not on PATH")
	}
	want := noise(1 << 20)
	var out bytes.Buffer
	if err := RelayStdio([]string{"cat"}, bytes.NewReader(want), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("relayed %d bytes, not the %d sent (or not the same bytes)", out.Len(), len(want))
	}
	var errb strings.Builder
	err := RelayStdio([]string{"sh", "-c", "echo oops >&2; exit 7"}, strings.NewReader(""), io.Discard, &errb)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
		t.Fatalf("err %v, want the child's exit status 7", err)
	}
	if errb.String() != "oops\n" {
		t.Fatalf("stderr %q, want the child's", errb.String())
	}
}

// TestListeningSaysWhyNothingListens: a child that never listens on its
// address is stopped when the wait is over, and the error names it, the
// address and the end of what it wrote to stderr.
func TestListeningSaysWhyNothingListens(t *testing.T) {
	addr, err := loopback.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", "echo cannot bind >&2; exec sleep 60")
	_, err = listening(cmd, addr, 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "sh -c did not listen on "+addr) || !strings.Contains(err.Error(), "cannot bind") {
		t.Fatalf("err %v, want the child named, its address and its stderr", err)
	}
	if cmd.ProcessState == nil {
		t.Fatal("the child was not stopped and reaped")
	}
}

// TestHTTPRelayForwards sends a request through the HTTP relay to a
// server that answers with what it got: the body, path and a header arrive
// as sent, and the answer's status, header and body come back as written.
func TestHTTPRelayForwards(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Mcp-Session-Id", r.Header.Get("X-Probe")+" "+r.URL.Path)
		w.WriteHeader(http.StatusAccepted)
		w.Write(b)
	}))
	defer up.Close()
	relay := httptest.NewServer(HTTPRelay(up.URL, nil))
	defer relay.Close()
	body := noise(100 << 10)
	req, _ := http.NewRequest("POST", relay.URL+"/mcp", bytes.NewReader(body))
	req.Header.Set("X-Probe", "p")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted || resp.Header.Get("Mcp-Session-Id") != "p /mcp" || !bytes.Equal(got, body) {
		t.Fatalf("through the relay: HTTP %d, Mcp-Session-Id %q, %d bytes back (sent %d, equal %v)",
			resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), len(got), len(body), bytes.Equal(got, body))
	}
}

// TestRelayStdioJournalRecordsEveryLine relays lines through cat, fed a
// few bytes at a time so lines break across reads, with a byte the
// journal must escape: the relayed bytes are the bytes sent, and the
// journal holds one record a line each way, numbered in one sequence,
// each with its line's exact bytes.
func TestRelayStdioJournalRecordsEveryLine(t *testing.T) {
	var sent bytes.Buffer
	for i := range 500 {
		fmt.Fprintf(&sent, "{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{\"i\":%d,\"s\":\"\x1b\\u00e9\"}}\n", i)
	}
	var out, j bytes.Buffer
	if err := RelayStdioJournal([]string{"cat"}, iotest.OneByteReader(bytes.NewReader(sent.Bytes())), &out, io.Discard, &j); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), sent.Bytes()) {
		t.Fatalf("relayed %d bytes, not the %d sent (or not the same bytes)", out.Len(), sent.Len())
	}
	lines := bytes.SplitAfter(sent.Bytes(), []byte("\n"))
	lines = lines[:len(lines)-1]
	got := map[transport.Dir][][]byte{}
	for _, f := range records(t, j.Bytes()) {
		got[f.Dir] = append(got[f.Dir], f.Data)
	}
	for _, d := range []transport.Dir{transport.Out, transport.In} {
		if len(got[d]) != len(lines) {
			t.Fatalf("%d %s records, want %d", len(got[d]), d, len(lines))
		}
		for i, l := range lines {
			if !bytes.Equal(got[d][i], l[:len(l)-1]) {
				t.Fatalf("%s record %d holds %q, want %q", d, i, got[d][i], l)
			}
		}
	}
}

// TestHTTPRelayJournalsEachExchange: with a journal the HTTP relay writes
// each request and its answer as records, numbered in one sequence, each
// with its body, method, path and (for the answer) status, and the
// credential the request carried redacted.
func TestHTTPRelayJournalsEachExchange(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(append([]byte(`{"echo":`), append(b, '}')...))
	}))
	defer up.Close()
	var j bytes.Buffer
	h := HTTPRelay(up.URL, &j)
	relay := httptest.NewServer(h)
	defer relay.Close()
	const secret = "Bearer s3cret-token"
	for i := range 3 {
		req, _ := http.NewRequest("POST", relay.URL+"/mcp", strings.NewReader(fmt.Sprintf(`{"i":%d}`, i)))
		req.Header.Set("Authorization", secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if j.Len() != 0 {
		t.Fatalf("the journal was written before Close: %d bytes (it writes only when its buffer fills)", j.Len())
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(j.Bytes(), []byte("s3cret")) {
		t.Fatalf("the journal holds the credential:\n%s", j.Bytes())
	}
	fs := records(t, j.Bytes())
	for n, f := range fs {
		seq := n + 1
		i := n / 2
		want, dir, status := fmt.Sprintf(`{"i":%d}`, i), transport.Out, 0
		if n%2 == 1 {
			want, dir, status = `{"echo":`+want+`}`, transport.In, http.StatusOK
		}
		if f.Dir != dir || string(f.Data) != want || f.Meta.HTTPMethod != "POST" || f.Meta.URL != "/mcp" || f.Meta.Status != status {
			t.Fatalf("record %d: %s %q %s %s %d, want %s %q POST /mcp %d", seq, f.Dir, f.Data, f.Meta.HTTPMethod, f.Meta.URL, f.Meta.Status, dir, want, status)
		}
		if n%2 == 0 && f.Meta.Headers["Authorization"] == "" {
			t.Fatalf("record %d keeps no Authorization header at all: %v", seq, f.Meta.Headers)
		}
	}
	if len(fs) != 6 {
		t.Fatalf("%d records, want 6 (3 requests, 3 answers)", len(fs))
	}
}

// records reads a relay's journal back, its records numbered from 1 on
// without a gap.
func records(t *testing.T, j []byte) []transport.Frame {
	t.Helper()
	var out []transport.Frame
	for _, rec := range bytes.SplitAfter(j, []byte("\n")) {
		if len(rec) == 0 {
			continue
		}
		seq, f, err := journal.ParseRecord(rec)
		if err != nil || seq != uint64(len(out)+1) {
			t.Fatalf("record %q: seq %d after %d, %v", rec, seq, len(out), err)
		}
		out = append(out, f)
	}
	return out
}
