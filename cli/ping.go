package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/connect"
	"mcpscope/internal/termsafe"
	"mcpscope/protocol"
	"mcpscope/session"
)

func newPingCmd() *cobra.Command {
	f := connFlags{noListen: true}
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "ping [target]",
		Short:   "Check the server answers (ping; server/discover in the 2026-07-28 era)",
		GroupID: groupHeadless,
		Args:    headlessArgs(0, 0, ""),
		RunE: withSession(&f, oneShotGrace, nil, func(cmd *cobra.Command, _ []string, s *session.Session, _ connect.Spec) error {
			start := time.Now()
			method := "ping"
			if s.Era() == protocol.EraModern {
				method = "server/discover" // the stateless protocol has no ping
			}
			if _, err := s.Call(method, nil).Await(cmd.Context()); err != nil {
				return err
			}
			took := time.Since(start)
			if asJSON {
				fmt.Fprintf(cmd.OutOrStdout(), "{\"ok\":true,\"ms\":%.3f}\n", float64(took.Microseconds())/1000)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "pong from %s in %s\n", termsafe.Line(s.Info().ServerInfo.Name), took.Round(time.Microsecond))
			}
			return nil
		}),
	}
	f.add(cmd.Flags())
	f.otlp.add(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for programs")
	return cmd
}
