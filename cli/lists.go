package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"mcpscope/connect"
	"mcpscope/internal/render"
	"mcpscope/internal/termsafe"
	"mcpscope/session"
)

// newListCmd makes tools, resources, templates and prompts: one list each,
// every page of it. A server that does not declare the capability the list
// belongs to is not asked (it may answer -32601): the list is empty.
func newListCmd(name, method, field, capability, short string) *cobra.Command {
	f := connFlags{noListen: true}
	var asJSON bool
	cmd := &cobra.Command{
		Use:     name + " [target]",
		Short:   short,
		GroupID: groupHeadless,
		Example: fmt.Sprintf("  mcpscope %s -- npx -y @modelcontextprotocol/server-everything\n  mcpscope %s --json http://127.0.0.1:3001/mcp", name, name),
		Args:    headlessArgs(0, 0, ""),
		RunE: withSession(&f, oneShotGrace, nil, func(cmd *cobra.Command, _ []string, s *session.Session, _ connect.Spec) error {
			out := cmd.OutOrStdout()
			if len(s.Info().Capabilities) > 0 && !s.HasCapability(capability) {
				if asJSON {
					return render.Line(out, map[string]any{field: []any{}})
				}
				fmt.Fprintf(out, "(the server declares no %s capability, so it has no %s)\n", capability, field)
				return nil
			}
			all, err := s.ListAll(cmd.Context(), method, field)
			if err != nil {
				return err
			}
			if asJSON {
				return render.Line(out, map[string]any{field: all})
			}
			if len(all) == 0 {
				fmt.Fprintf(out, "(no %s)\n", field)
				return nil
			}
			whole := !isTerminal(out) // a pipe takes whole lines
			for _, it := range all {
				head, desc := listLine(it, whole)
				fmt.Fprintf(out, "%-32s %s\n", termsafe.Line(head), termsafe.Line(desc))
			}
			return nil
		}),
	}
	f.add(cmd.Flags())
	f.otlp.add(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for programs")
	return cmd
}

// listLine is what one line of a list shows: the name (or URI, or URI
// template) and the description. On a terminal (whole false) that is the
// description's first line, cut at 100 characters; for a pipe it is all of
// it, its line breaks and runs of blanks made single spaces so each item
// stays one line (--json has the exact text).
func listLine(item []byte, whole bool) (head, desc string) {
	var v struct {
		Name        string `json:"name"`
		URI         string `json:"uri"`
		URITemplate string `json:"uriTemplate"`
		Description string `json:"description"`
	}
	_ = json.Unmarshal(item, &v)
	head = v.Name
	if v.URI != "" {
		head = v.URI
	} else if v.URITemplate != "" {
		head = v.URITemplate
	}
	if whole {
		return head, strings.Join(strings.Fields(v.Description), " ")
	}
	return head, shorten(strings.TrimSpace(strings.SplitN(v.Description, "\n", 2)[0]), 100) // by runes: a byte cut could split one
}
