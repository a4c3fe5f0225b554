package cli

import (
	"bufio"
	"context"
	"errors"
	"io"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/bench"
	"mcpscope/connect"
	"mcpscope/filter"
	"mcpscope/framefilter"
	"mcpscope/framestore"
	"mcpscope/internal/termsafe"
	"mcpscope/journal"
	"mcpscope/session"
)

// recordBatch bounds the frames record takes from the store at once.
const recordBatch = 4096

// recordOut is the most record holds back from stdout at a time.
const recordOut = 256 << 10

// recordPace is the most often record takes frames from the store: what
// it prints lags the wire by at most this (and a batch's printing).
const recordPace = time.Millisecond

// recordLines bounds the journal lines record reads back at once.
const recordLines = 4 << 20

func newRecordCmd() *cobra.Command {
	var (
		f  connFlags
		ff filterFlag
		o  recordOptions
	)
	parse := func(cmd *cobra.Command, _ []string) (err error) {
		o.filter, err = ff.parse(cmd)
		return err
	}
	cmd := &cobra.Command{
		Use:   "record [target]",
		Short: "Print every frame as JSONL while the session runs, until the server ends or Ctrl-C",
		Long: "Print every frame as JSONL while the session runs, until the server ends or Ctrl-C.\n\n" +
			"With --filter only the frames it matches are printed; ~s, ~e and ~dur see a call as it is when each frame " +
			"arrives (a request is pending then: '~e' keeps the error response, not its request). The journal keeps everything.",
		GroupID: groupHeadless,
		Example: "  mcpscope record -- node server.js > session.jsonl\n" +
			"  mcpscope record --filter '~m tools/call' http://127.0.0.1:3001/mcp",
		Args: headlessArgs(0, 0, ""),
		RunE: withSession(&f, 2*time.Second, parse, func(cmd *cobra.Command, _ []string, s *session.Session, _ connect.Spec) error {
			return runRecord(cmd.Context(), s, &o, cmd.OutOrStdout())
		}),
	}
	f.add(cmd.Flags())
	f.otlp.add(cmd.Flags())
	ff.add(cmd.Flags(), "frames")
	return cmd
}

// recordOptions is what a record was asked besides its target (which
// withSession connects to).
type recordOptions struct {
	filter *filter.Filter // nil: every frame
}

// runRecord prints s's frames to w as JSONL while the session runs: until
// the server ends (its close reason is the error) or ctx is done.
func runRecord(ctx context.Context, s *session.Session, o *recordOptions, w io.Writer) error {
	stopProfile, err := bench.StartCPUProfile()
	if err != nil {
		return err
	}
	defer stopProfile()
	// One P, as in the proxy: ingest hands frames to the journal's
	// writer and to this printer, and with a second P each
	// hand-over woke a second thread that spun for work, on the
	// core the server needs for its side of the flood.
	defer oneP()()
	// Frames go out through a buffer flushed when record has caught
	// up with the store (and by bufio when it fills): a write(2) per
	// frame was a quarter of record's CPU under a flood.
	r := &recordPrinter{s: s, st: s.Store(), flt: o.filter, subj: framefilter.NewSubjects(), out: bufio.NewWriterSize(w, recordOut)}
	defer r.out.Flush()
	if r.flt == nil {
		// Nothing but the journal's lines is printed: the store need
		// keep no frames decoded (the journal has them), and ingest
		// then allocates nothing per frame.
		r.st.NoWindow()
	}
	done := s.Transport().Done()
	// stopped: asked to stop; ended: the transport ended, and why is the
	// error.
	stopped := func() error {
		r.flush() // while the journal and its index are open
		s.Close()
		r.flush()
		return nil
	}
	ended := func() error {
		stopped()
		if in := s.Info(); in.CloseReason != "" {
			return errors.New(termsafe.Line(in.CloseReason))
		}
		return nil
	}
	// Frames are taken from the store at most once per recordPace:
	// woken for every frame, record took a frame or two at a time
	// under a flood, and the wake-ups (a goroutine hand-off each)
	// cost more than printing.
	pace := time.NewTimer(0)
	defer pace.Stop()
	for {
		began := time.Now()
		r.flush()
		select {
		case <-r.st.Changed():
		case <-done:
			return ended()
		case <-ctx.Done():
			return stopped()
		}
		if wait := time.Until(began.Add(recordPace)); wait > 0 {
			pace.Reset(wait)
			select {
			case <-pace.C:
			case <-done:
				return ended()
			case <-ctx.Done():
				return stopped()
			}
		}
	}
}

// recordPrinter prints a session's frames as their journal lines, the frames
// after last, in batches.
type recordPrinter struct {
	s    *session.Session
	st   *framestore.Store
	flt  *filter.Filter
	subj *framefilter.Subjects
	out  *bufio.Writer
	last uint64 // the last frame printed (or filtered out)
	buf  []byte
	ends []int
}

// keep reports whether the filter keeps it.
func (r *recordPrinter) keep(it *framestore.Item) bool {
	if r.flt == nil {
		return true
	}
	var sn *session.CallSnapshot
	if c := r.s.Lookup(it.CallKey); it.CallKey != "" && c != nil {
		x := c.Snapshot()
		sn = &x
	}
	return r.flt.Match(r.subj.FillItem(it, sn, time.Now()))
}

// emit prints items, each as its journal line, read back from the
// journal (its queue or the file) a batch at a time: the journal's writer
// has encoded it already, and encoding it again was a quarter of record's
// CPU. Frames without such a line (no journal, or one that failed) are
// encoded here.
func (r *recordPrinter) emit(items []*framestore.Item) {
	lines, ok := r.buf[:0], false
	if len(items) > 0 {
		lines, r.ends, ok = r.st.JournalLines(r.buf[:0], r.ends[:0], items[0].Seq, items[len(items)-1].Seq, recordLines)
	}
	if ok && len(r.ends) == len(items) {
		r.buf = lines
		start := 0
		for i, it := range items {
			if r.keep(it) {
				r.out.Write(lines[start:r.ends[i]])
			}
			start = r.ends[i]
		}
		return
	}
	for _, it := range items {
		if it.Cut { // memory holds its head; the journal has it all
			if b, err := r.st.Bytes(it.Seq); err == nil {
				whole := *it
				whole.Frame.Data = b
				it = &whole
			}
		}
		if !r.keep(it) {
			continue
		}
		r.buf = journal.AppendRecord(r.buf[:0], it.Seq, it.Frame)
		r.out.Write(r.buf)
	}
}

// lines prints the frames after last, up to top and to recordBatch of
// them, as their journal lines, without taking them from the store
// (without --filter nothing else of them is needed). It reports false
// when it cannot (see JournalLines): then emit prints them.
func (r *recordPrinter) lines(top uint64) bool {
	if r.flt != nil {
		return false
	}
	to := min(top, r.last+recordBatch)
	b, e, ok := r.st.JournalLines(r.buf[:0], r.ends[:0], r.last+1, to, recordLines)
	if !ok {
		return false
	}
	r.buf, r.ends, r.last = b, e, to
	r.out.Write(b)
	return true
}

// flush prints the frames the store has now, in bounded batches: a reader
// that fell behind a flood reads the rest back from the journal a batch at
// a time.
func (r *recordPrinter) flush() {
	defer r.out.Flush()
	for top := r.st.Last(); r.last < top; {
		if cap(r.buf) > 2*recordLines {
			r.buf = nil // a huge frame grew it
		}
		if r.lines(top) {
			continue
		}
		items := r.st.Since(r.last, recordBatch)
		if len(items) == 0 {
			return // the rest are numbers the journal skipped
		}
		r.last = items[len(items)-1].Seq
		r.emit(items)
	}
}
