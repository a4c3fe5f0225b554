package mock

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
)

// maxLine bounds one incoming message on stdio.
const maxLine = 64 << 20

// ServeStdio answers the client on in and out (newline-delimited JSON-RPC)
// until in ends or ctx does. Requests are answered concurrently, each with
// its recorded timing; writes never interleave.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wmu sync.Mutex
	send := func(b []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		if _, err := out.Write(append(bytes.TrimRight(b, "\r\n"), '\n')); err != nil {
			cancel()
			return err
		}
		return nil
	}
	p := newPeer(send)
	// At the end of input the requests under way are answered (a shell's
	// "echo request | mcpscope serve" gets its answer); the replay of what
	// the server sent outside calls stops.
	actx, stopAmbient := context.WithCancel(ctx)
	var requests, ambient sync.WaitGroup
	defer func() {
		requests.Wait()
		stopAmbient()
		ambient.Wait()
	}()
	br := bufio.NewReaderSize(in, 1<<16)
	for {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			s.stdioMessage(ctx, actx, p, line, &requests, &ambient)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			// Drop the rest of a line over the limit.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			return nil, err
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

func (s *Server) stdioMessage(ctx, actx context.Context, p *peer, line []byte, wg, awg *sync.WaitGroup) {
	var req envelope
	if json.Unmarshal(line, &req) != nil {
		p.send(rpcError(nil, -32700, "Parse error", nil))
		return
	}
	switch {
	case req.Method == "" && req.key() != "":
		p.answered(req.key()) // the client answers a replayed server request
		return
	case req.Method == "notifications/cancelled":
		p.cancelled(req.Params)
		return
	case !req.isRequest():
		return // other notifications need no answer
	}
	if req.Method == "initialize" || s.rec.Era == "modern" {
		// The recorded server's own notifications start with the session.
		p.ambient.Do(func() { awg.Add(1); go func() { defer awg.Done(); s.ambient(actx, p.send) }() })
	}
	a := s.resolve(&req)
	rctx, stop := context.WithCancel(ctx)
	key := req.key()
	p.mu.Lock()
	p.running[key] = stop
	p.mu.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() {
			p.mu.Lock()
			delete(p.running, key)
			p.mu.Unlock()
			stop()
		}()
		_ = s.request(rctx, p, &req, a, p.send)
	}()
}
