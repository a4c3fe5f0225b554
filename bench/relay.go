package bench

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"os/exec"
	"sync"
	"time"

	"mcpscope/journal"
	"mcpscope/transport"
)

// The relays are the proxy rows' yardsticks: they pass bytes between a
// client and its server through their own memory, as any proxy that
// sees the traffic must, and do nothing else (no HTTP, no JSON, no
// journal). What a request or a flood costs through one, measured in the
// same rounds as the proxy, is the price of the extra hop itself on the
// machine the bench runs on, which the proxy cannot go below.

// relayBuf is the most a relay moves at once: the proxy's read size.
const relayBuf = 64 << 10

// RelayTCP accepts on ln until it is closed and joins each connection to
// a connection of its own to upstream (host:port).
func RelayTCP(ln net.Listener, upstream string) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go relayConn(c, upstream)
	}
}

func relayConn(c net.Conn, upstream string) {
	defer c.Close()
	u, err := net.DialTimeout("tcp", upstream, 10*time.Second)
	if err != nil {
		return
	}
	defer u.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		copyThrough(u, c)
		if t, ok := u.(*net.TCPConn); ok {
			t.CloseWrite() // the client is done sending: so is the relay
		}
	}()
	copyThrough(c, u)
	c.Close() // the upstream is done: unblock the other direction's read
	<-done
}

// HTTPRelay is the floor of an HTTP-aware proxy written in Go: net/http
// reads each request (its body whole, as the proxy does to journal it),
// sends it upstream on a kept-alive connection and writes the answer back
// in one write. No journal, no JSON, no viewers: what any Go proxy that
// understands HTTP pays for the second exchange, which the bare TCP relay
// does not.
//
// With j non-nil it also writes the request and the answer to j as the
// journal's records (journal.AppendRecord): numbered, timed, the method,
// URL, status and headers (credentials redacted, as the format requires)
// beside the body, through one buffered writer that writes only when full
// or at Close, so never once a request as the proxy's journal does (it
// stays within a few ms of the wire). That is the least an HTTP proxy
// journaling in mcpscope's format does; it parses no JSON and serves no
// viewers.
func HTTPRelay(upstream string, j io.Writer) *HTTPRelayHandler {
	h := &HTTPRelayHandler{upstream: upstream, tr: &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}}
	if j != nil {
		h.j = newJournalLines(j)
	}
	return h
}

// HTTPRelayHandler is HTTPRelay's handler; Close writes what its journal
// still buffers.
type HTTPRelayHandler struct {
	upstream string
	tr       *http.Transport
	j        *journalLines // nil: no journal
}

func (h *HTTPRelayHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.record(transport.Out, body, transport.Meta{HTTPMethod: r.Method, URL: r.URL.Path, Headers: transport.RecordHeaders(r.Header)})
	out, err := http.NewRequestWithContext(r.Context(), r.Method, h.upstream+r.URL.Path, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = r.Header.Clone()
	resp, err := h.tr.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(answer)
	h.record(transport.In, answer, transport.Meta{HTTPMethod: r.Method, URL: r.URL.Path, Status: resp.StatusCode, Headers: transport.RecordHeaders(resp.Header)})
}

// record writes one body as a journal record, when h journals.
func (h *HTTPRelayHandler) record(d transport.Dir, data []byte, m transport.Meta) {
	if h.j == nil || len(data) == 0 {
		return
	}
	h.j.mu.Lock()
	defer h.j.mu.Unlock()
	h.j.appendLocked(transport.Frame{Time: time.Now(), Dir: d, Kind: transport.Message, Data: data, Meta: m})
}

// Close writes what the journal still buffers.
func (h *HTTPRelayHandler) Close() error {
	if h.j == nil {
		return nil
	}
	return h.j.flush()
}

// RelayStdio spawns argv and copies in to its stdin (closed at in's end)
// and its stdout to out; its stderr goes to errw. It returns when the
// child's stdout ends, with the child's exit error.
func RelayStdio(argv []string, in io.Reader, out, errw io.Writer) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = errw
	w, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() {
		copyThrough(w, in)
		w.Close()
	}()
	copyThrough(out, r)
	return cmd.Wait()
}

// copyThrough copies src to dst through a buffer of its own until either
// fails or src ends: never io.Copy, whose splice would keep the bytes out
// of the relay's memory, where a proxy needs them.
func copyThrough(dst io.Writer, src io.Reader) {
	buf := make([]byte, relayBuf)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// RelayStdioJournal is RelayStdio writing a journal of what it passes to
// j as well: every whole line, each way, as the record journal.AppendRecord
// makes of it (numbered, timed, its direction, its bytes escaped), one
// buffered writer, flushed at the end. That is the least a proxy that
// journals in mcpscope's format does beyond the hop: no JSON parsing, no
// viewers, no second goroutine between the pipes and the file.
func RelayStdioJournal(argv []string, in io.Reader, out, errw io.Writer, j io.Writer) error {
	jw := newJournalLines(j)
	err := RelayStdio(argv, io.TeeReader(in, jw.dir(transport.Out)), io.MultiWriter(out, jw.dir(transport.In)), errw)
	if ferr := jw.flush(); err == nil {
		err = ferr
	}
	return err
}

// journalLines is a relay's journal: the records of both directions
// numbered in one sequence, through one buffer of 128 KiB written when
// full and at flush.
type journalLines struct {
	mu  sync.Mutex
	w   *bufio.Writer
	seq uint64
	rec []byte
}

func newJournalLines(j io.Writer) *journalLines {
	return &journalLines{w: bufio.NewWriterSize(j, 128<<10)}
}

// appendLocked writes f as the next record; j.mu is held.
func (j *journalLines) appendLocked(f transport.Frame) error {
	j.seq++
	j.rec = journal.AppendRecord(j.rec[:0], j.seq, f)
	_, err := j.w.Write(j.rec)
	return err
}

// flush writes what the buffer still holds.
func (j *journalLines) flush() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.w.Flush()
}

func (j *journalLines) dir(d transport.Dir) io.Writer { return &lineSplitter{j: j, d: d} }

// lineSplitter cuts one direction's bytes into lines for its journal; a
// line split across writes waits for its end in part.
type lineSplitter struct {
	j    *journalLines
	d    transport.Dir
	part []byte
}

func (s *lineSplitter) Write(p []byte) (int, error) {
	j := s.j
	j.mu.Lock()
	defer j.mu.Unlock()
	f := transport.Frame{Time: time.Now(), Dir: s.d, Kind: transport.Message}
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			s.part = append(s.part, rest...)
			break
		}
		line := rest[:i]
		if len(s.part) > 0 {
			s.part = append(s.part, line...)
			line = s.part
		}
		f.Data = line
		if err := j.appendLocked(f); err != nil {
			return 0, err
		}
		s.part, rest = s.part[:0], rest[i+1:]
	}
	return len(p), nil
}
