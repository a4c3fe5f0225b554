package cli

import (
	"bufio"
	"errors"
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
		f   connFlags
		ff  filterFlag
		flt *filter.Filter
	)
	parse := func(cmd *cobra.Command, _ []string) (err error) {
		flt, err = ff.parse(cmd)
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
			out := bufio.NewWriterSize(cmd.OutOrStdout(), recordOut)
			defer out.Flush()
			var last uint64
			var buf []byte
			st := s.Store()
			if flt == nil {
				// Nothing but the journal's lines is printed: the store need
				// keep no frames decoded (the journal has them), and ingest
				// then allocates nothing per frame.
				st.NoWindow()
			}
			subj := framefilter.NewSubjects()
			keep := func(it *framestore.Item) bool {
				if flt == nil {
					return true
				}
				var sn *session.CallSnapshot
				if c := s.Lookup(it.CallKey); it.CallKey != "" && c != nil {
					x := c.Snapshot()
					sn = &x
				}
				return flt.Match(subj.FillItem(it, sn, time.Now()))
			}
			// Each frame goes out as its journal line, read back from the
			// journal (its queue or the file) a batch at a time: the
			// journal's writer has encoded it already, and encoding it again
			// was a quarter of record's CPU. Frames without such a line (no
			// journal, or one that failed) are encoded here.
			var ends []int
			emit := func(items []*framestore.Item) {
				lines, ok := buf[:0], false
				if len(items) > 0 {
					lines, ends, ok = st.JournalLines(buf[:0], ends[:0], items[0].Seq, items[len(items)-1].Seq, recordLines)
				}
				if ok && len(ends) == len(items) {
					buf = lines
					start := 0
					for i, it := range items {
						if keep(it) {
							out.Write(lines[start:ends[i]])
						}
						start = ends[i]
					}
					return
				}
				for _, it := range items {
					if it.Cut { // memory holds its head; the journal has it all
						if b, err := st.Bytes(it.Seq); err == nil {
							whole := *it
							whole.Frame.Data = b
							it = &whole
						}
					}
					if !keep(it) {
						continue
					}
					buf = journal.AppendRecord(buf[:0], it.Seq, it.Frame)
					out.Write(buf)
				}
			}
			// lines prints the frames after last, up to top and to
			// recordBatch of them, as their journal lines, without taking
			// them from the store (without --filter nothing else of them is
			// needed). It reports false when it cannot (see JournalLines):
			// then emit prints them.
			lines := func(top uint64) bool {
				if flt != nil {
					return false
				}
				to := min(top, last+recordBatch)
				b, e, ok := st.JournalLines(buf[:0], ends[:0], last+1, to, recordLines)
				if !ok {
					return false
				}
				buf, ends, last = b, e, to
				out.Write(b)
				return true
			}
			// flush prints the frames the store has now, in bounded
			// batches: a reader that fell behind a flood reads the rest back
			// from the journal a batch at a time.
			flush := func() {
				defer out.Flush()
				for top := st.Last(); last < top; {
					if cap(buf) > 2*recordLines {
						buf = nil // a huge frame grew it
					}
					if lines(top) {
						continue
					}
					items := st.Since(last, recordBatch)
					if len(items) == 0 {
						return // the rest are numbers the journal skipped
					}
					last = items[len(items)-1].Seq
					emit(items)
				}
			}
			done := s.Transport().Done()
			ended := func() error {
				flush()
				s.Close()
				flush()
				if in := s.Info(); in.CloseReason != "" {
					return errors.New(termsafe.Line(in.CloseReason))
				}
				return nil
			}
			stopped := func() error {
				flush() // while the journal and its index are open
				s.Close()
				flush()
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
				flush()
				select {
				case <-s.Store().Changed():
				case <-done:
					return ended()
				case <-cmd.Context().Done():
					return stopped()
				}
				if wait := time.Until(began.Add(recordPace)); wait > 0 {
					pace.Reset(wait)
					select {
					case <-pace.C:
					case <-done:
						return ended()
					case <-cmd.Context().Done():
						return stopped()
					}
				}
			}
		}),
	}
	f.add(cmd.Flags())
	f.otlp.add(cmd.Flags())
	ff.add(cmd.Flags(), "frames")
	return cmd
}
