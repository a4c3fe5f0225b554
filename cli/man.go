package cli

import (
	"fmt"

	mango "github.com/muesli/mango-cobra"
	"github.com/muesli/roff"
	"github.com/spf13/cobra"
)

// newManCmd writes the man page, made from the same definitions as --help.
func newManCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "man",
		Short:   "Print mcpscope's man page (roff): mcpscope man > mcpscope.1",
		GroupID: groupServers,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			page, err := mango.NewManPage(1, cmd.Root())
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), page.Build(roff.NewDocument()))
			return err
		},
	}
}
