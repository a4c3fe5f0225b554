package cli

import (
	"github.com/spf13/cobra"

	"mcpscope/internal/render"
)

func newReadCmd() *cobra.Command {
	var f connFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "read URI [target]",
		Short:   "Read a resource",
		GroupID: groupHeadless,
		Example: "  mcpscope read demo://readme\n  mcpscope read file:///tmp/notes.txt -- npx -y @modelcontextprotocol/server-filesystem /tmp",
		Args:    headlessArgs(1, 1, "a resource URI"),
		RunE: func(cmd *cobra.Command, args []string) error {
			own, url, command := split(cmd, args)
			s, _, err := dial(cmd, &f, url, command, oneShotGrace)
			if err != nil {
				return err
			}
			defer s.Close()
			res, err := s.Call("resources/read", map[string]any{"uri": own[0]}).Await(cmd.Context())
			if err != nil {
				return err
			}
			render.Result(cmd.OutOrStdout(), asJSON, res, render.Contents)
			return nil
		},
	}
	f.add(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for programs")
	return cmd
}
