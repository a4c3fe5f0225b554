package demo

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The 2026-07-28 Tasks extension (io.modelcontextprotocol/tasks, SEP-2663),
// served by the demo over HTTP. The Go SDK does not implement it, so the
// demo does, in front of the SDK's stateless handler: a tools/call of a long
// tool from a client that declares the extension in its request's
// capabilities is answered at once with a CreateTaskResult (resultType
// "task"), and the call itself runs on as a request of the demo's own to the
// SDK, whose progress becomes the task's statusMessage. tasks/get (the
// status, and the result or error once terminal), tasks/update (an ack:
// the demo's tasks never ask for input) and tasks/cancel are answered here.
// Task state lives in this process; any client that has the task id can poll
// it, from any connection, which is what lets another process rejoin it.
const (
	tasksExtension     = "io.modelcontextprotocol/tasks"
	metaClientCaps     = "io.modelcontextprotocol/clientCapabilities"
	metaProgressToken  = "progressToken"
	taskPollInterval   = 500 * time.Millisecond
	taskKeep           = 30 * time.Minute // a task is kept this long past its expected end
	maxTasks           = 1000             // tasks kept at once; past that, calls run plainly
	maxTaskBody        = 4 << 20          // a request body the demo reads itself
	maxTaskResult      = 64 << 20         // what a task's run may answer
	taskAutoAfter      = 30 * time.Second // slow runs as a task by itself from this long on
	taskModeAuto       = "auto"
	taskModeAlways     = "always"
	taskModeNever      = "never"
	codeInvalidParams  = -32602
	codeInternalError  = -32603
	cancelledByClient  = "cancelled by the client (tasks/cancel)"
	taskStatusWorking  = "working"
	taskStatusDone     = "completed"
	taskStatusFailed   = "failed"
	taskStatusCanceled = "cancelled"
)

// task is one task the demo runs.
type task struct {
	id      string
	created time.Time
	ttl     time.Duration
	cancel  context.CancelFunc

	mu      sync.Mutex // guards what follows
	status  string
	message string
	updated time.Time
	result  json.RawMessage // completed
	rpcErr  json.RawMessage // failed: the JSON-RPC error
}

// tasks serves the extension in front of the SDK's stateless handler.
type tasks struct {
	run      http.Handler // the SDK's stateless handler the tasks' calls go to
	shutdown context.Context

	mu    sync.Mutex
	byID  map[string]*task
	wg    sync.WaitGroup // running tasks
	close bool
}

func newTasks(run http.Handler, shutdown context.Context) *tasks {
	return &tasks{run: run, shutdown: shutdown, byID: map[string]*task{}}
}

// wait waits for the tasks still running to end (their calls are cancelled
// by the demo's Close), at most d.
func (ts *tasks) wait(d time.Duration) {
	ts.mu.Lock()
	ts.close = true
	ts.mu.Unlock()
	done := make(chan struct{})
	go func() { ts.wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// rpcMessage is what the demo reads of a request before deciding who
// answers it.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// serve answers a 2026-07-28 POST: the tasks methods and the tool calls that
// become tasks here, everything else by next (the SDK's stateless handler).
func (ts *tasks) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if r.Body == nil || rebound(r) || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		next.ServeHTTP(w, r) // the SDK refuses it as it does any such request
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxTaskBody+1))
	r.Body.Close()
	if err != nil {
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) > maxTaskBody {
		http.Error(w, fmt.Sprintf("request body exceeds %d bytes", maxTaskBody), http.StatusRequestEntityTooLarge)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg rpcMessage
	if json.Unmarshal(body, &msg) != nil || len(msg.ID) == 0 || string(msg.ID) == "null" {
		next.ServeHTTP(w, r)
		return
	}
	switch msg.Method {
	case "tasks/get", "tasks/update", "tasks/cancel":
		ts.answer(w, msg)
		return
	case "tools/call":
		if t := ts.start(r, msg, body); t != nil {
			writeResult(w, msg.ID, t.view("task", false))
			return
		}
	}
	next.ServeHTTP(w, r)
}

// rebound reports a request to a loopback listener that names another host
// (DNS rebinding), which the SDK's handler refuses: the demo refuses it too
// by leaving it to the SDK.
func rebound(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && la != nil && loopback(la.String()) && !loopback(r.Host)
}

func loopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// slowTask is what decides whether a slow call becomes a task.
type slowTask struct {
	Seconds *float64 `json:"seconds"`
	Task    string   `json:"task"`
}

// callParams are the parts of a tools/call the decision reads.
type callParams struct {
	Name           string          `json:"name"`
	Arguments      json.RawMessage `json:"arguments"`
	Meta           json.RawMessage `json:"_meta"`
	InputResponses json.RawMessage `json:"inputResponses"`
	RequestState   json.RawMessage `json:"requestState"`
}

// taskFor says whether a tools/call runs as a task and, if so, how long it
// is expected to take: the client must declare the extension in this
// request's capabilities (a task is never returned to one that did not),
// and the tool must be a long one that asks for it (slow: task "always", or
// "auto" and at least taskAutoAfter long).
func taskFor(params json.RawMessage) (time.Duration, bool) {
	var p callParams
	if json.Unmarshal(params, &p) != nil || p.Name != "slow" || len(p.InputResponses) > 0 || len(p.RequestState) > 0 {
		return 0, false
	}
	var meta struct {
		Caps struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"io.modelcontextprotocol/clientCapabilities"`
	}
	if json.Unmarshal(p.Meta, &meta) != nil {
		return 0, false
	}
	if ext, ok := meta.Caps.Extensions[tasksExtension]; !ok || string(ext) == "null" {
		return 0, false
	}
	var a slowTask
	if len(p.Arguments) > 0 && string(p.Arguments) != "null" && json.Unmarshal(p.Arguments, &a) != nil {
		return 0, false // the SDK says what is wrong with them
	}
	seconds := 10.0 // slow's default
	if a.Seconds != nil {
		seconds = *a.Seconds
	}
	if seconds < 0 || seconds > maxSeconds {
		return 0, false
	}
	d := time.Duration(seconds * float64(time.Second))
	switch a.Task {
	case taskModeAlways:
		return d, true
	case "", taskModeAuto:
		return d, d >= taskAutoAfter
	}
	return 0, false
}

// start makes a task of the tools/call msg when it should be one, and runs
// the call; nil when it should not (or the demo keeps too many tasks).
func (ts *tasks) start(r *http.Request, msg rpcMessage, body []byte) *task {
	expected, ok := taskFor(msg.Params)
	if !ok {
		return nil
	}
	now := time.Now()
	id := rand.Text()
	inner, err := withProgressToken(body, "task-"+id)
	if err != nil {
		return nil
	}
	ts.mu.Lock()
	ts.sweepLocked(now)
	if ts.close || len(ts.byID) >= maxTasks {
		ts.mu.Unlock()
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &task{id: id, created: now, updated: now, ttl: expected + taskKeep, cancel: cancel, status: taskStatusWorking,
		message: "started"}
	ts.byID[id] = t
	ts.wg.Add(1)
	ts.mu.Unlock()

	stop := context.AfterFunc(ts.shutdown, cancel)
	req := r.Clone(ctx)
	req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(inner)), int64(len(inner))
	req.Header.Del("Content-Length")
	go func() {
		defer ts.wg.Done()
		defer stop()
		defer cancel()
		ts.runTask(t, req)
	}()
	return t
}

// withProgressToken is the request body with a progress token in its
// params' _meta (the client's, when it sent one), so the call's progress
// reaches the task.
func withProgressToken(body []byte, token string) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	var params map[string]json.RawMessage
	if err := json.Unmarshal(m["params"], &params); err != nil {
		return nil, err
	}
	var meta map[string]json.RawMessage
	if raw, ok := params["_meta"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, err
		}
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	if _, ok := meta[metaProgressToken]; !ok {
		meta[metaProgressToken], _ = json.Marshal(token)
	}
	var err error
	if params["_meta"], err = json.Marshal(meta); err != nil {
		return nil, err
	}
	if m["params"], err = json.Marshal(params); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// runTask runs the task's call through the SDK and keeps its outcome.
func (ts *tasks) runTask(t *task, req *http.Request) {
	cw := &capture{header: http.Header{}, onMessage: t.progress}
	ts.run.ServeHTTP(cw, req)
	res, rpcErr, err := cw.outcome()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status != taskStatusWorking {
		return // cancelled meanwhile: it stays so
	}
	t.updated = time.Now()
	switch {
	case err != nil:
		t.status, t.message = taskStatusFailed, err.Error()
		t.rpcErr, _ = json.Marshal(map[string]any{"code": codeInternalError, "message": "demo server: " + err.Error()})
	case rpcErr != nil:
		t.status, t.message, t.rpcErr = taskStatusFailed, "the call failed", rpcErr
	default:
		t.status, t.message, t.result = taskStatusDone, "done", res
	}
}

// progress keeps a progress notification's message as the task's status
// message.
func (t *task) progress(msg []byte) {
	var n struct {
		Method string `json:"method"`
		Params struct {
			Progress float64 `json:"progress"`
			Total    float64 `json:"total"`
			Message  string  `json:"message"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &n) != nil || n.Method != "notifications/progress" {
		return
	}
	text := n.Params.Message
	if text == "" {
		text = fmt.Sprintf("%g/%g", n.Params.Progress, n.Params.Total)
	}
	t.mu.Lock()
	if t.status == taskStatusWorking {
		t.message, t.updated = text, time.Now()
	}
	t.mu.Unlock()
}

// view is the task as the extension shows it: resultType "task" for a
// CreateTaskResult, "complete" for tasks/get, which carries the result or
// the error of a task that ended (withOutcome).
func (t *task) view(resultType string, withOutcome bool) map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	v := map[string]any{
		"resultType":     resultType,
		"taskId":         t.id,
		"status":         t.status,
		"statusMessage":  t.message,
		"createdAt":      t.created.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt":  t.updated.UTC().Format(time.RFC3339Nano),
		"ttlMs":          t.ttl.Milliseconds(),
		"pollIntervalMs": taskPollInterval.Milliseconds(),
	}
	if withOutcome && t.result != nil {
		v["result"] = t.result
	}
	if withOutcome && t.rpcErr != nil {
		v["error"] = t.rpcErr
	}
	return v
}

// sweepLocked forgets the tasks past their ttl, cancelling any still
// running.
func (ts *tasks) sweepLocked(now time.Time) {
	for id, t := range ts.byID {
		if now.Sub(t.created) > t.ttl {
			t.cancel()
			delete(ts.byID, id)
		}
	}
}

// answer serves tasks/get, tasks/update and tasks/cancel.
func (ts *tasks) answer(w http.ResponseWriter, msg rpcMessage) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(msg.Params, &p)
	ts.mu.Lock()
	ts.sweepLocked(time.Now())
	t := ts.byID[p.TaskID]
	ts.mu.Unlock()
	if t == nil {
		writeError(w, msg.ID, codeInvalidParams, fmt.Sprintf("unknown task %q (the demo server keeps a task until its ttl has passed, and forgets all of them when it stops)", p.TaskID))
		return
	}
	switch msg.Method {
	case "tasks/get":
		writeResult(w, msg.ID, t.view("complete", true))
	case "tasks/cancel":
		t.mu.Lock()
		if t.status == taskStatusWorking {
			t.status, t.message, t.updated = taskStatusCanceled, cancelledByClient, time.Now()
		}
		t.mu.Unlock()
		t.cancel()
		writeResult(w, msg.ID, map[string]any{"resultType": "complete"})
	default: // tasks/update: the demo's tasks ask for nothing, so every answer is one to ignore
		writeResult(w, msg.ID, map[string]any{"resultType": "complete"})
	}
}

func writeResult(w http.ResponseWriter, id json.RawMessage, result any) {
	writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func writeError(w http.ResponseWriter, id json.RawMessage, code int, message string) {
	writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}})
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	_, _ = w.Write(b)
}

// capture is the response writer of a task's own call: it reads the SSE
// events (or the JSON body) the SDK writes, hands each message to onMessage
// as it comes, and keeps the last response.
type capture struct {
	header    http.Header
	status    int
	buf       []byte // SSE not yet split into events, or the JSON body
	total     int
	response  []byte
	tooBig    bool
	onMessage func([]byte)
}

func (c *capture) Header() http.Header { return c.header }
func (c *capture) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
}
func (c *capture) Flush() {}

func (c *capture) sse() bool {
	return strings.HasPrefix(c.header.Get("Content-Type"), "text/event-stream")
}

func (c *capture) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	c.total += len(b)
	if c.total > maxTaskResult {
		c.tooBig = true
		return 0, errors.New("the task's result is too large for the demo server to keep")
	}
	c.buf = append(c.buf, b...)
	if !c.sse() {
		return len(b), nil
	}
	for {
		i := bytes.Index(c.buf, []byte("\n\n"))
		if i < 0 {
			break
		}
		c.event(c.buf[:i])
		c.buf = c.buf[i+2:]
	}
	return len(b), nil
}

// event reads one SSE event's data.
func (c *capture) event(ev []byte) {
	var data []byte
	for _, line := range bytes.Split(ev, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(rest, []byte(" "))...)
		}
	}
	if len(data) > 0 {
		c.message(data)
	}
}

func (c *capture) message(m []byte) {
	var probe struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(m, &probe) != nil {
		return
	}
	if probe.Method == "" && len(probe.ID) > 0 {
		c.response = append([]byte(nil), m...)
		return
	}
	if c.onMessage != nil {
		c.onMessage(m)
	}
}

// outcome is the call's result, or its JSON-RPC error, or why there is
// neither.
func (c *capture) outcome() (result, rpcErr json.RawMessage, err error) {
	if c.tooBig {
		return nil, nil, fmt.Errorf("the call's answer exceeds %d bytes", maxTaskResult)
	}
	if !c.sse() && len(c.buf) > 0 {
		c.message(bytes.TrimSpace(c.buf))
	}
	if c.response == nil {
		if c.status >= 400 {
			return nil, nil, fmt.Errorf("the call got HTTP %d: %s", c.status, strings.TrimSpace(string(c.buf)))
		}
		return nil, nil, errors.New("the call ended without an answer")
	}
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(c.response, &r); err != nil {
		return nil, nil, fmt.Errorf("the call's answer is unreadable: %w", err)
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		return nil, r.Error, nil
	}
	return r.Result, nil, nil
}

// advertiseTasks adds the extension to server/discover's capabilities when
// the demo serves it (over HTTP; not over stdio).
func (d *Demo) advertiseTasks(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "server/discover" || err != nil || !d.servesTasks.Load() {
			return res, err
		}
		if dr, ok := res.(*mcp.DiscoverResult); ok && dr.Capabilities != nil {
			dr.Capabilities.AddExtension(tasksExtension, nil) // the SDK hands out a copy of its capabilities
		}
		return res, err
	}
}
