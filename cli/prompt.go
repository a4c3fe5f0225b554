package cli

import (
	"encoding/json"
	"strings"

	"github.com/spf13/cobra"

	"mcpscope/internal/render"
)

func newPromptCmd() *cobra.Command {
	var f connFlags
	var asJSON bool
	var argsJSON string
	cmd := &cobra.Command{
		Use:     "prompt NAME [key=value...] [target]",
		Short:   "Get a prompt",
		GroupID: groupHeadless,
		Example: "  mcpscope prompt greeting name=Ada\n  mcpscope prompt review --args '{\"code\":\"x := 1\"}' http://127.0.0.1:3001/mcp",
		Args:    headlessArgs(1, -1, "a prompt name"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			own, url, command := split(cmd, argv)
			args := map[string]string{}
			for _, kv := range own[1:] {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return usagef(cmd.CommandPath(), "prompt arguments are key=value, got %q", kv)
				}
				args[k] = v
			}
			if argsJSON != "" {
				if err := json.Unmarshal([]byte(argsJSON), &args); err != nil {
					return usagef(cmd.CommandPath(), "--args must be a JSON object of strings for a prompt: %v", err)
				}
			}
			s, _, err := dial(cmd, &f, url, command, oneShotGrace)
			if err != nil {
				return err
			}
			defer s.Close()
			res, err := s.Call("prompts/get", map[string]any{"name": own[0], "arguments": args}).Await(cmd.Context())
			if err != nil {
				return err
			}
			render.Result(cmd.OutOrStdout(), asJSON, res, render.Prompt)
			return nil
		},
	}
	f.add(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for programs")
	cmd.Flags().StringVar(&argsJSON, "args", "", "the prompt's arguments as a JSON object of strings")
	return cmd
}
