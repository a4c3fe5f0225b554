package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"mcpscope/hosts"
	"mcpscope/internal/render"
	"mcpscope/internal/termsafe"
)

func newServersCmd() *cobra.Command {
	var host string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "servers",
		Short: "List the MCP servers configured in your AI hosts and in mcpscope",
		Long: `servers lists the MCP servers your AI hosts already have, read from their own files: Claude Desktop (claude_desktop_config.json), Claude Code (~/.claude.json, and .mcp.json here), VS Code (mcp.json and settings.json of the user, .vscode/mcp.json here), Cursor (~/.cursor/mcp.json, and .cursor/mcp.json here), Windsurf (~/.codeium/windsurf/mcp_config.json), Gemini CLI (~/.gemini/settings.json, and .gemini/settings.json here: httpUrl is Streamable HTTP, url is SSE), Kiro (~/.kiro/settings/mcp.json, and .kiro/settings/mcp.json here), Amazon Q Developer CLI (~/.aws/amazonq/mcp.json, and .amazonq/mcp.json here), Zed (context_servers in ~/.config/zed/settings.json, and .zed/settings.json here), Codex CLI ([mcp_servers.NAME] in $CODEX_HOME/config.toml, default ~/.codex, and .codex/config.toml here) and mcpscope's own $XDG_CONFIG_HOME/mcpscope/servers.json ({"mcpServers": {...}} as in Claude Desktop's file). Project files are read from the current directory.

The first column is what to type to pick a server: its name, or HOST/NAME when several hosts have that name. Secrets show as [redacted]; variables such as ${input:token} show as written.`,
		GroupID: groupServers,
		Example: "  mcpscope servers\n  mcpscope servers --host cursor\n  mcpscope servers --json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			all, shown, err := loadHosts(cmd, host)
			if err != nil {
				return err
			}
			warnProblems(cmd.ErrOrStderr(), shown.Problems)
			if asJSON {
				return render.Line(cmd.OutOrStdout(), serversJSON(all, shown))
			}
			printServers(cmd.OutOrStdout(), all, shown)
			return nil
		},
	}
	cmd.Flags().StringVar(&host, "host", "", "only this host's servers: "+strings.Join(hosts.Names, ", "))
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for programs")
	return cmd
}

// loadHosts reads every host's servers: all of them (to name them), and
// those of host when it is set (to show them).
func loadHosts(cmd *cobra.Command, host string) (all, shown *hosts.Catalog, err error) {
	if host != "" && !hosts.IsHost(host) {
		return nil, nil, usagef(cmd.CommandPath(), "--host takes one of %s, got %q", strings.Join(hosts.Names, ", "), host)
	}
	all = hosts.Load(hosts.Options{})
	shown = all
	if host != "" {
		shown = all.Only(host)
	}
	return all, shown, nil
}

// findServer picks the configured server name (NAME or HOST/NAME, within
// host when it is set). A name that is unknown or ambiguous is a usage
// error that lists what there is.
func findServer(cmd *cobra.Command, name, host string) (*hosts.Catalog, hosts.Server, error) {
	all, _, err := loadHosts(cmd, host)
	if err != nil {
		return nil, hosts.Server{}, err
	}
	if host != "" && !strings.HasPrefix(name, host+"/") {
		name = host + "/" + name
	}
	s, err := all.Find(name)
	var nf *hosts.NotFoundError
	var amb *hosts.AmbiguousError
	if errors.As(err, &nf) {
		warnProblems(cmd.ErrOrStderr(), all.Problems) // the name may be in a file that cannot be read
	}
	if errors.As(err, &nf) || errors.As(err, &amb) {
		return all, s, usagef(cmd.CommandPath(), "%v", err)
	}
	return all, s, err
}

// warnProblems tells about files and entries that could not be read.
func warnProblems(w io.Writer, ps []hosts.Problem) {
	for _, p := range ps {
		fmt.Fprintf(w, "mcpscope: warning: %s\n", termsafe.Line(p.Error()))
	}
}

// printServers lists shown by file: a heading per file (and per project
// of ~/.claude.json), then one line per server and its notes.
func printServers(w io.Writer, all, shown *hosts.Catalog) {
	if len(shown.Servers) == 0 {
		fmt.Fprintln(w, "no MCP servers configured; mcpscope looked in:")
		for _, p := range shown.Places {
			fmt.Fprintf(w, "  %-14s %s\n", p.Host, termsafe.Line(tilde(p.File)))
		}
		return
	}
	sels := make([]string, len(shown.Servers))
	width := 0
	for i, s := range shown.Servers {
		sels[i] = all.Selector(s)
		width = max(width, min(len(sels[i]), 28))
	}
	group := ""
	for i, s := range shown.Servers {
		if g := s.File + "\x00" + s.Project; g != group {
			if group != "" {
				fmt.Fprintln(w)
			}
			group = g
			fmt.Fprintln(w, termsafe.Line(heading(s)))
		}
		fmt.Fprintf(w, "  %-*s  %-5s  %s\n", width, termsafe.Line(sels[i]), s.Kind, termsafe.Line(s.CommandLine()))
		for _, n := range notes(all, s) {
			fmt.Fprintf(w, "  %-*s  %-5s  %s\n", width, "", "", termsafe.Line(n))
		}
	}
}

// heading names a file and whose it is: "~/.cursor/mcp.json (Cursor, user)".
func heading(s hosts.Server) string {
	whose := hosts.Title(s.Host) + ", " + s.Scope
	if s.Scope == "project" && s.Project != "" {
		whose += " " + tilde(s.Project)
	}
	return tilde(s.File) + " (" + whose + ")"
}

// notes are what the listing says under s: its own notes, and whether
// its name picks another entry.
func notes(all *hosts.Catalog, s hosts.Server) []string {
	ns := s.Notes()
	if f, ok := all.Shadowed(s); ok {
		ns = append(ns, fmt.Sprintf("not picked by its name: %s/%s picks the entry in %s: the nearer one wins, as in %s",
			s.Host, s.Name, heading(f), hosts.Title(s.Host)))
	}
	return ns
}

// tilde shortens a path under the home directory to ~/….
func tilde(p string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return p
	}
	if rel, ok := strings.CutPrefix(p, home+string(filepath.Separator)); ok {
		return "~" + string(filepath.Separator) + rel
	}
	return p
}

// serverJSON is one server for programs: redacted, with what to type to
// pick it and what a listing says about it.
type serverJSON struct {
	Selector string `json:"selector"`
	hosts.Server
	CommandLine string   `json:"commandLine"`
	Variables   []string `json:"variables,omitempty"`
	Notes       []string `json:"notes,omitempty"`
}

func serversJSON(all, shown *hosts.Catalog) map[string]any {
	servers := make([]serverJSON, 0, len(shown.Servers))
	for _, s := range shown.Servers {
		servers = append(servers, serverJSON{Selector: all.Selector(s), Server: s.Redacted(), CommandLine: s.CommandLine(),
			Variables: s.Variables(), Notes: notes(all, s)})
	}
	problems := shown.Problems
	if problems == nil {
		problems = []hosts.Problem{}
	}
	return map[string]any{"servers": servers, "problems": problems, "places": shown.Places}
}
