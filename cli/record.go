package cli

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/connect"
	"mcpscope/internal/termsafe"
	"mcpscope/session"
)

// recordBatch bounds the frames record takes from the store at once.
const recordBatch = 4096

func newRecordCmd() *cobra.Command {
	var f connFlags
	cmd := &cobra.Command{
		Use:     "record [target]",
		Short:   "Print every frame as JSONL while the session runs, until the server ends or Ctrl-C",
		GroupID: groupHeadless,
		Example: "  mcpscope record -- node server.js > session.jsonl",
		Args:    headlessArgs(0, 0, ""),
		RunE: withSession(&f, 2*time.Second, nil, func(cmd *cobra.Command, _ []string, s *session.Session, _ connect.Spec) error {
			out := cmd.OutOrStdout()
			var last uint64
			var buf []byte
			st := s.Store()
			flush := func() {
				// In bounded batches: a reader that fell behind a flood reads
				// the rest back from the journal a batch at a time.
				for {
					items := st.Since(last, recordBatch)
					for _, it := range items {
						fr := it.Frame
						if it.Cut { // memory holds its head; the journal has it all
							if b, err := st.Bytes(it.Seq); err == nil {
								fr.Data = b
							}
						}
						buf = session.AppendRecord(buf[:0], it.Seq, fr)
						out.Write(buf)
						last = it.Seq
					}
					if len(items) < recordBatch {
						return
					}
				}
			}
			done := s.Transport().Done()
			for {
				flush()
				select {
				case <-s.Store().Changed():
				case <-done:
					flush()
					s.Close()
					flush()
					if in := s.Info(); in.CloseReason != "" {
						return errors.New(termsafe.Line(in.CloseReason))
					}
					return nil
				case <-cmd.Context().Done():
					s.Close()
					flush()
					return nil
				}
			}
		}),
	}
	f.add(cmd.Flags())
	return cmd
}
