package cli

import (
	"github.com/spf13/cobra"

	"mcpscope/connect"
	"mcpscope/internal/render"
	"mcpscope/session"
)

func newReadCmd() *cobra.Command {
	f := connFlags{noListen: true}
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "read URI [target]",
		Short:   "Read a resource",
		GroupID: groupHeadless,
		Example: "  mcpscope read demo://readme\n  mcpscope read file:///tmp/notes.txt -- npx -y @modelcontextprotocol/server-filesystem /tmp",
		Args:    headlessArgs(1, 1, "a resource URI"),
		RunE: withSession(&f, oneShotGrace, nil, func(cmd *cobra.Command, own []string, s *session.Session, _ connect.Spec) error {
			res, err := s.Call("resources/read", map[string]any{"uri": own[0]}).Await(cmd.Context())
			if err != nil {
				return err
			}
			printResult(cmd.OutOrStdout(), asJSON, res, render.Contents, nil)
			return nil
		}),
	}
	f.add(cmd.Flags())
	f.otlp.add(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for programs")
	return cmd
}
