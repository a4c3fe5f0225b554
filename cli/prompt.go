package cli

import (
	"encoding/json"
	"strings"

	"github.com/spf13/cobra"

	"mcpscope/connect"
	"mcpscope/internal/render"
	"mcpscope/session"
)

func newPromptCmd() *cobra.Command {
	f := connFlags{noListen: true}
	var asJSON bool
	var argsJSON string
	cmd := &cobra.Command{
		Use:     "prompt NAME [key=value...] [target]",
		Short:   "Get a prompt",
		GroupID: groupHeadless,
		Example: "  mcpscope prompt greeting name=Ada\n  mcpscope prompt review --args '{\"code\":\"x := 1\"}' http://127.0.0.1:3001/mcp",
		Args:    headlessArgs(1, -1, "a prompt name"),
		RunE: withSession(&f, oneShotGrace, func(cmd *cobra.Command, own []string) error {
			_, err := promptArgs(cmd, own[1:], argsJSON)
			return err
		}, func(cmd *cobra.Command, own []string, s *session.Session, _ connect.Spec) error {
			args, _ := promptArgs(cmd, own[1:], argsJSON)
			res, err := s.Call("prompts/get", map[string]any{"name": own[0], "arguments": args}).Await(cmd.Context())
			if err != nil {
				return err
			}
			printResult(cmd.OutOrStdout(), asJSON, res, render.Prompt, nil)
			return nil
		}),
	}
	f.add(cmd.Flags())
	f.otlp.add(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for programs")
	cmd.Flags().StringVar(&argsJSON, "args", "", "the prompt's arguments as a JSON object of strings")
	return cmd
}

// promptArgs reads a prompt's key=value arguments and --args.
func promptArgs(cmd *cobra.Command, kvs []string, argsJSON string) (map[string]string, error) {
	args := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, usagef(cmd.CommandPath(), "prompt arguments are key=value, got %q", kv)
		}
		args[k] = v
	}
	if argsJSON != "" {
		if err := json.Unmarshal([]byte(argsJSON), &args); err != nil {
			return nil, usagef(cmd.CommandPath(), "--args must be a JSON object of strings for a prompt: %v", err)
		}
	}
	return args, nil
}
