package mock

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"

	"mcpscope/internal/httpserve"
	"mcpscope/protocol"
)

// queueLen bounds what waits for a session's standalone GET stream.
const queueLen = 1024

// Handler serves Streamable HTTP, at any path. A recording of the
// initialize era is served with sessions (Mcp-Session-Id from initialize
// on, a standalone GET stream carrying what the server sent outside calls,
// DELETE to end); one of the 2026-07-28 protocol statelessly (no sessions;
// GET is 405). Answers are SSE streams when the recorded ones were (or the
// exchange holds more than its response) and the client accepts them,
// JSON otherwise.
func (s *Server) Handler() *HTTP {
	return &HTTP{s: s, sessions: map[string]*httpSession{}, stateless: newPeer(func([]byte) error { return nil })}
}

// HTTP is the Streamable HTTP face of a Server.
type HTTP struct {
	s         *Server
	mu        sync.Mutex
	sessions  map[string]*httpSession
	stateless *peer
}

type httpSession struct {
	id     string
	p      *peer
	queue  chan []byte
	ctx    context.Context
	cancel context.CancelFunc
}

func (h *HTTP) legacy() bool { return h.s.rec.Era != protocol.EraModern }

func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (h *HTTP) session(r *http.Request) (*httpSession, bool) {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		return nil, true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	sess, ok := h.sessions[id]
	return sess, ok
}

func (h *HTTP) newSession() *httpSession {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	ctx, cancel := context.WithCancel(context.Background())
	sess := &httpSession{id: hex.EncodeToString(b), queue: make(chan []byte, queueLen), ctx: ctx, cancel: cancel}
	sess.p = newPeer(func(m []byte) error {
		select {
		case sess.queue <- m:
		default: // nobody reads the standalone stream: the oldest goes
			select {
			case <-sess.queue:
			default:
			}
			select {
			case sess.queue <- m:
			default:
			}
		}
		return nil
	})
	h.mu.Lock()
	h.sessions[sess.id] = sess
	h.mu.Unlock()
	return sess
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

func (h *HTTP) post(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxLine+1))
	if err != nil || len(body) > maxLine {
		writeJSON(w, http.StatusRequestEntityTooLarge, rpcError(nil, -32600, "the message is too large or could not be read", nil))
		return
	}
	var req envelope
	if err := json.Unmarshal(body, &req); err != nil {
		msg := "Parse error"
		if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '[' {
			msg = "batches are not supported by mcpscope serve"
		}
		writeJSON(w, http.StatusBadRequest, rpcError(nil, -32700, msg, nil))
		return
	}
	sess, known := h.session(r)
	if h.legacy() && !known {
		writeJSON(w, http.StatusNotFound, rpcError(req.ID, -32001, "Session not found", nil))
		return
	}
	p := h.stateless
	if sess != nil {
		p = sess.p
	}
	switch {
	case req.Method == "" && req.key() != "":
		p.answered(req.key())
		w.WriteHeader(http.StatusAccepted)
		return
	case req.Method == "notifications/cancelled":
		p.cancelled(req.Params)
		w.WriteHeader(http.StatusAccepted)
		return
	case !req.isRequest():
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if h.legacy() {
		switch {
		case req.Method == "initialize":
			sess = h.newSession()
			p = sess.p
			w.Header().Set("Mcp-Session-Id", sess.id)
			p.ambient.Do(func() { go h.s.ambient(sess.ctx, p.send) })
		case sess != nil, req.Method == "server/discover", req.Method == "ping":
		default:
			writeJSON(w, http.StatusBadRequest, rpcError(req.ID, -32000,
				"Bad Request: no Mcp-Session-Id (the recorded server keeps sessions: send initialize first)", nil))
			return
		}
	}
	a := h.s.resolve(&req)
	if a.ex != nil && a.ex.status >= 300 {
		// The recorded server answered with an HTTP error: so does this.
		h.s.logf("%s → %s: HTTP %d as recorded", req.Method, a.how, a.ex.status)
		for _, st := range a.ex.steps {
			if st.final {
				writeJSON(w, a.ex.status, withID(st.data, a.ex.ID, req.ID))
				return
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(a.ex.status)
		io.WriteString(w, a.ex.body)
		return
	}
	ctx, stop := context.WithCancel(r.Context())
	defer stop()
	if sess != nil {
		ctx, stop = context.WithCancel(ctx)
		defer stop()
		go func() {
			select {
			case <-sess.ctx.Done():
				stop()
			case <-ctx.Done():
			}
		}()
	}
	key := req.key()
	p.mu.Lock()
	p.running[key] = stop
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.running, key)
		p.mu.Unlock()
	}()
	sse := a.ex != nil && (a.ex.sse || len(a.ex.steps) > 1) && strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	if !sse {
		// One JSON answer: the response; anything else the exchange holds
		// goes to the standalone stream.
		var resp []byte
		_ = h.s.request(ctx, p, &req, a, func(m []byte) error {
			if isResponse(m) {
				resp = m
				return nil
			}
			return p.send(m)
		})
		if resp == nil {
			w.WriteHeader(http.StatusAccepted) // cancelled: nothing to say
			return
		}
		writeJSON(w, http.StatusOK, resp)
		return
	}
	fl := openStream(w)
	_ = h.s.request(ctx, p, &req, a, func(m []byte) error {
		if err := writeEvent(w, m); err != nil {
			return err
		}
		if fl != nil {
			fl.Flush()
		}
		return nil
	})
}

func writeEvent(w io.Writer, m []byte) error {
	var b bytes.Buffer
	b.WriteString("event: message\n")
	for _, line := range bytes.Split(bytes.TrimRight(m, "\r\n"), []byte("\n")) {
		b.WriteString("data: ")
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

func isResponse(m []byte) bool {
	var e envelope
	return json.Unmarshal(m, &e) == nil && e.Method == ""
}

// sessionFor is the session a GET or DELETE names, or nil once the answer
// saying why there is none is written (stateless says what it lacks).
func (h *HTTP) sessionFor(w http.ResponseWriter, r *http.Request, stateless string) *httpSession {
	sess, known := h.session(r)
	switch {
	case !h.legacy():
		w.Header().Set("Allow", "POST")
		http.Error(w, "the recorded server is stateless (2026-07-28): "+stateless, http.StatusMethodNotAllowed)
		return nil
	case !known:
		writeJSON(w, http.StatusNotFound, rpcError(nil, -32001, "Session not found", nil))
		return nil
	case sess == nil:
		writeJSON(w, http.StatusBadRequest, rpcError(nil, -32000, "Bad Request: no Mcp-Session-Id", nil))
		return nil
	}
	return sess
}

// get opens a session's standalone stream.
func (h *HTTP) get(w http.ResponseWriter, r *http.Request) {
	sess := h.sessionFor(w, r, "no standalone stream")
	if sess == nil {
		return
	}
	fl := openStream(w)
	for {
		select {
		case m := <-sess.queue:
			if writeEvent(w, m) != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
		case <-r.Context().Done():
			return
		case <-sess.ctx.Done():
			return
		}
	}
}

func (h *HTTP) delete(w http.ResponseWriter, r *http.Request) {
	sess := h.sessionFor(w, r, "no session to end")
	if sess == nil {
		return
	}
	h.mu.Lock()
	delete(h.sessions, sess.id)
	h.mu.Unlock()
	sess.cancel()
	w.WriteHeader(http.StatusNoContent)
}

// Close ends every session (their streams and replays).
func (h *HTTP) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, sess := range h.sessions {
		sess.cancel()
		delete(h.sessions, id)
	}
}

// ServeHTTP listens on addr (127.0.0.1:0 when empty), serves the recording
// at every path (the endpoint shown is /mcp), calls ready with the
// endpoint's URL once it accepts connections, and stops when ctx ends.
func (s *Server) ServeHTTP(ctx context.Context, addr string, ready func(url string)) error {
	h := s.Handler()
	return httpserve.Serve(ctx, addr, "/mcp", h, ready, h.Close) // Close ends the standalone streams and replays
}

// openStream answers with an SSE stream, sent at once so the client knows
// it is open; the flusher is nil where w cannot flush.
func openStream(w http.ResponseWriter) http.Flusher {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	return fl
}
