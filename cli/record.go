package cli

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/connect"
	"mcpscope/internal/termsafe"
	"mcpscope/session"
)

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
			flush := func() {
				for _, it := range s.Store().Since(last, 0) {
					buf = session.AppendRecord(buf[:0], it.Seq, it.Frame)
					out.Write(buf)
					last = it.Seq
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
