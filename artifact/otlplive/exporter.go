package otlplive

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"mcpscope/artifact/export"
	"mcpscope/artifact/scan"
	"mcpscope/journal"
	"mcpscope/transport"
)

// Bounds of the exporter: what waits for the builder and for the
// collector. Past them frames and spans are dropped and counted; the
// session never waits.
const (
	// MaxQueuedFrames and MaxQueuedBytes bound the frames waiting to be
	// read into spans (the builder is behind only when the machine is).
	MaxQueuedFrames = 8192
	MaxQueuedBytes  = 32 << 20
	// MaxQueuedSpans bounds the spans waiting for the collector.
	MaxQueuedSpans = 2048
	// batchSpans is the most spans one upload carries.
	batchSpans = 512
	// retryPause is how long a failed upload keeps the next one waiting:
	// a collector that is down is not hammered (spans queue, then drop).
	retryPause = time.Second
	// tick is how often ended spans whose wait for late frames is over
	// are sent when the session is quiet.
	tick = 500 * time.Millisecond
)

// Options are what the exporter needs besides the endpoint.
type Options struct {
	// Version is mcpscope's, for the resource and scope.
	Version string
	// Journal is the session's journal ("" without one): its header names
	// the trace, so the trace is the one the export of the journal
	// writes. Without one, Target and the first frame's time do.
	Journal string
	Target  string
	// Poster replaces the OTLP/HTTP poster (tests); nil: the endpoint's.
	Poster Poster
}

// Stats count what the exporter did.
type Stats struct {
	Endpoint string // redacted
	Sent     int64  // spans the collector took
	Dropped  int64  // spans lost: the queue was full, the upload failed, or the collector rejected them
	// FramesDropped are frames the builder never read (its queue was
	// full): their calls' spans are missing or incomplete.
	FramesDropped int64
	LastError     string // the last upload's failure, redacted
}

// Exporter sends a session's spans as they end. Its methods are safe for
// concurrent use, and Frame and Record never wait.
type Exporter struct {
	ep     Endpoint
	o      Options
	poster Poster
	own    *httpPoster // the poster when it is the endpoint's

	mu      sync.Mutex
	frames  []queued
	fbytes  int
	closed  bool
	wake    chan struct{} // the builder has frames, or must stop
	spans   [][]byte      // ended spans, each an encoded Span message
	swake   chan struct{} // the uploader has spans
	built   bool          // the builder is done: no more spans come
	lastErr string

	sent, dropped, framesDropped atomic.Int64

	spansOut *export.Spans // the builder's alone
	stream   *scan.Stream  // the builder's alone
	res      []byte        // the encoded Resource, set by the builder before its first span
	scope    []byte        // the encoded InstrumentationScope, likewise

	stopUpload context.CancelFunc
	uploadCtx  context.Context
	builderDone,
	uploaderDone chan struct{}
}

type queued struct {
	seq  uint64
	f    transport.Frame
	line []byte // a journal record (the proxy's), parsed by the builder
}

// Start starts an exporter to ep. It sends nothing until spans end.
func Start(ep Endpoint, o Options) (*Exporter, error) {
	e := &Exporter{ep: ep, o: o, poster: o.Poster, wake: make(chan struct{}, 1), swake: make(chan struct{}, 1),
		builderDone: make(chan struct{}), uploaderDone: make(chan struct{})}
	if e.poster == nil {
		e.own = newPoster(ep, o.Version)
		e.poster = e.own
	}
	e.uploadCtx, e.stopUpload = context.WithCancel(context.Background())
	go e.builder()
	go e.uploader()
	return e, nil
}

// Frame hands over one frame the session journaled (session.Options.Observe).
func (e *Exporter) Frame(seq uint64, f transport.Frame) {
	e.enqueue(queued{seq: seq, f: f}, len(f.Data))
}

// Record hands over one journal record as written (the proxy's), line
// without its newline or with it. It is copied.
func (e *Exporter) Record(line []byte) {
	e.enqueue(queued{line: append([]byte(nil), line...)}, len(line))
}

func (e *Exporter) enqueue(q queued, n int) {
	e.mu.Lock()
	if e.closed || len(e.frames) >= MaxQueuedFrames || e.fbytes+n > MaxQueuedBytes {
		if !e.closed {
			e.framesDropped.Add(1)
		}
		e.mu.Unlock()
		return
	}
	e.frames = append(e.frames, q)
	e.fbytes += n
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// builder reads the frames into spans, and sends the ended spans whose
// wait for late frames is over when the session is quiet.
func (e *Exporter) builder() {
	defer close(e.builderDone)
	t := time.NewTicker(tick)
	defer t.Stop()
	var batch []queued
	for {
		e.mu.Lock()
		batch, e.frames = e.frames, batch[:0]
		e.fbytes = 0
		closed := e.closed
		e.mu.Unlock()
		for i := range batch {
			e.step(&batch[i])
		}
		clear(batch)
		if closed {
			if e.spansOut != nil {
				e.spansOut.Finish()
			}
			e.mu.Lock()
			e.built = true
			e.mu.Unlock()
			e.poke()
			return
		}
		select {
		case <-e.wake:
		case now := <-t.C:
			if e.spansOut != nil {
				// A frame stamped before now may still be queued behind
				// the tick: give it a moment more than the late window.
				e.spansOut.Flush(now.Add(-tick))
			}
		}
	}
}

// step reads one frame into the spans.
func (e *Exporter) step(q *queued) {
	seq, f := q.seq, q.f
	if q.line != nil {
		var err error
		if seq, f, err = journal.ParseRecord(q.line); err != nil {
			return // not a frame record (a journal's damage): the export skips it too
		}
	}
	if e.spansOut == nil {
		h := e.header(f.Time)
		e.stream = scan.NewStream()
		e.spansOut = export.NewSpans(h, e.o.Version, e.span)
		e.res, e.scope = e.spansOut.Resource(), e.spansOut.Scope()
	}
	e.spansOut.Frame(e.stream.Step(seq, f))
}

// header is the journal's header, which names the trace; a session
// without a journal (or one that is not a file) makes one up.
func (e *Exporter) header(first time.Time) journal.Header {
	if e.o.Journal != "" {
		if st, err := os.Stat(e.o.Journal); err == nil && st.Mode().IsRegular() {
			if h, err := scan.Header(e.o.Journal); err == nil {
				return h
			}
		}
	}
	return journal.Header{Format: journal.Format, Started: first, Target: e.o.Target, PID: os.Getpid()}
}

// span queues one ended span for the uploader (dropped when the queue is
// full: the collector is behind).
func (e *Exporter) span(s []byte) {
	e.mu.Lock()
	if len(e.spans) >= MaxQueuedSpans || e.uploadCtx.Err() != nil {
		e.mu.Unlock()
		e.dropped.Add(1)
		return
	}
	e.spans = append(e.spans, s)
	e.mu.Unlock()
	e.poke()
}

func (e *Exporter) poke() {
	select {
	case e.swake <- struct{}{}:
	default:
	}
}

// uploader sends the queued spans, a batch at a time, each upload bounded
// by the endpoint's timeout.
func (e *Exporter) uploader() {
	defer close(e.uploaderDone)
	for {
		e.mu.Lock()
		n := min(len(e.spans), batchSpans)
		batch := append([][]byte(nil), e.spans[:n]...)
		e.spans = e.spans[n:]
		if len(e.spans) == 0 {
			e.spans = nil
		}
		done := e.built && n == 0
		e.mu.Unlock()
		if done {
			return
		}
		if n == 0 {
			select {
			case <-e.swake:
			case <-e.uploadCtx.Done():
				e.dropRest()
				return
			}
			continue
		}
		err := e.upload(batch)
		var partial *PartialSuccess
		if errors.As(err, &partial) {
			// The collector took the batch but rejected some spans (or
			// only warned): no pause, the collector is up.
			rejected := min(max(partial.Rejected, 0), int64(n))
			e.sent.Add(int64(n) - rejected)
			e.dropped.Add(rejected)
			e.mu.Lock()
			e.lastErr = e.redact(partial.Error())
			e.mu.Unlock()
			continue
		}
		if err != nil {
			e.dropped.Add(int64(n))
			e.mu.Lock()
			e.lastErr = e.redact(err.Error())
			e.mu.Unlock()
			select {
			case <-time.After(retryPause):
			case <-e.uploadCtx.Done():
				e.dropRest()
				return
			}
			continue
		}
		e.sent.Add(int64(n))
	}
}

func (e *Exporter) upload(batch [][]byte) error {
	ctx, cancel := context.WithTimeout(e.uploadCtx, e.ep.Timeout)
	defer cancel()
	err := e.poster.Post(ctx, EncodeRequest(e.res, e.scope, batch))
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("the collector took longer than %s (OTEL_EXPORTER_OTLP_TIMEOUT)", e.ep.Timeout)
	}
	return err
}

// dropRest counts the spans still queued as dropped.
func (e *Exporter) dropRest() {
	e.mu.Lock()
	e.dropped.Add(int64(len(e.spans)))
	e.spans = nil
	e.mu.Unlock()
}

// redact takes the endpoint's URL and header values out of an error
// (the endpoint's poster does already; a test's may not).
func (e *Exporter) redact(s string) string { return e.ep.redact(s) }

// Stats are the counts so far.
func (e *Exporter) Stats() Stats {
	e.mu.Lock()
	last := e.lastErr
	e.mu.Unlock()
	return Stats{Endpoint: e.ep.String(), Sent: e.sent.Load(), Dropped: e.dropped.Load(),
		FramesDropped: e.framesDropped.Load(), LastError: last}
}

// Status is the exporter in one line, for the info view.
func (e *Exporter) Status() string { return e.Stats().String() }

func (st Stats) String() string {
	s := fmt.Sprintf("→ %s · %d spans sent · %d dropped", st.Endpoint, st.Sent, st.Dropped)
	if st.FramesDropped > 0 {
		s += fmt.Sprintf(" · %d frames not traced", st.FramesDropped)
	}
	if st.LastError != "" && st.Dropped > 0 {
		s += " · last error: " + st.LastError
	}
	return s
}

// Close ends the spans (a call still unanswered ends with the last
// frame), sends what is queued within wait, counts the rest as dropped,
// and returns the counts. It waits at most about wait.
func (e *Exporter) Close(wait time.Duration) Stats {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-e.uploaderDone:
	case <-t.C:
		e.stopUpload()
		<-e.uploaderDone
	}
	e.stopUpload()
	<-e.builderDone // reads what was queued (no network): its last spans are counted
	if e.own != nil {
		e.own.close()
	}
	return e.Stats()
}
