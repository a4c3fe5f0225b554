package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"mcpscope/internal/demo"
	"mcpscope/internal/shell"
)

func newDemoCmd() *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:     "demo",
		Short:   "Run the embedded demo server (stdio, or Streamable HTTP on ADDR; both eras)",
		GroupID: groupServers,
		Example: "  mcpscope demo --http 127.0.0.1:8080\n  mcpscope http://127.0.0.1:8080/mcp   # in another terminal",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if addr == "" {
				return demo.ServeStdio(cmd.Context(), demo.Options{})
			}
			return demo.ServeHTTP(cmd.Context(), addr, demo.Options{}, func(url string) {
				fmt.Fprintf(cmd.OutOrStdout(), "mcpscope demo server listening on %s\n", url)
				fmt.Fprintf(cmd.ErrOrStderr(), "inspect it with: %s\n", shell.Join([]string{"mcpscope", url}))
			})
		},
	}
	cmd.Flags().StringVar(&addr, "http", "", "serve Streamable HTTP on this host:port instead of stdio")
	return cmd
}

// noArgs rejects positional arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef(cmd.CommandPath(), "%s takes no arguments, got %q", cmd.Name(), args[0])
	}
	return nil
}
