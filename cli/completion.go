package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"mcpscope/hosts"
	"mcpscope/internal/termsafe"
	"mcpscope/proxy"
)

// newCompletionCmd replaces cobra's own completion command: its bash
// script needs the bash-completion package for one function, and this one
// carries a stand-in for it.
func newCompletionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print the shell completion script: source <(mcpscope completion bash)",
		Long: "Print the script that makes the shell complete mcpscope's commands, flags, and the values they take: " +
			"--format, --era, --transport, --grant, --log-level and --host from their choices, --server from the servers " +
			"your hosts have (mcpscope servers), --state from its schemes, attach NAME from the running proxies and " +
			"rejoin HANDLE from the calls left running, and call TOOL from the tools of the server --server NAME or --url URL " +
			"names before it (asked within 5 seconds, without a journal or a login; the answer, or the failure, is kept " +
			"for 30 seconds under $XDG_CACHE_HOME/mcpscope/completion).\n\n" +
			"bash: source <(mcpscope completion bash), or save it as ~/.local/share/bash-completion/completions/mcpscope. " +
			"The bash-completion package is not needed: without it the script brings the one function of it it uses.\n\n" +
			"zsh: mcpscope completion zsh > \"${fpath[1]}/_mcpscope\" (with compinit enabled).\n\n" +
			"fish: mcpscope completion fish > ~/.config/fish/completions/mcpscope.fish.",
		GroupID:   groupServers,
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef(cmd.CommandPath(), "completion needs a shell: bash, zsh, fish or powershell")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			out, root := cmd.OutOrStdout(), cmd.Root()
			switch args[0] {
			case "bash":
				io.WriteString(out, bashStandIn)
				return root.GenBashCompletionV2(out, true)
			case "zsh":
				return root.GenZshCompletion(out)
			case "fish":
				return root.GenFishCompletion(out, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(out)
			}
			return usagef(cmd.CommandPath(), "completion takes bash, zsh, fish or powershell, got %q", args[0])
		},
	}
	return cmd
}

// bashStandIn is what cobra's bash script needs of the bash-completion
// package, for shells without it: the words of the line up to the cursor,
// split at blanks only (so --flag=value and redis://host stay whole; quotes
// are not understood, as they are not by most completions).
const bashStandIn = `# mcpscope: without the bash-completion package, a stand-in for the one
# function of it this script uses.
if ! declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
_get_comp_words_by_ref() {
    local line="${COMP_LINE:0:COMP_POINT}"
    read -r -a words <<<"$line"
    if [[ ${#words[@]} -eq 0 || $line == *[[:space:]] ]]; then
        words+=("")
    fi
    cword=$((${#words[@]} - 1))
    cur="${words[cword]}"
    prev=""
    if ((cword > 0)); then
        prev="${words[cword-1]}"
    fi
}
fi

`

// flagValues are the values a flag takes, by flag name, with what each
// means: completion offers them instead of file names.
var flagValues = map[string][]string{
	"format":    {"jsonl\tone JSON object per frame", "har\tthe HTTP exchanges as a HAR 1.2 log", "otlp\tOpenTelemetry traces (OTLP/JSON)"},
	"era":       {"auto\task with server/discover", "legacy\tinitialize (2025-11-25 and before)", "modern\t2026-07-28"},
	"transport": {"http\tStreamable HTTP only", "sse\tHTTP+SSE (2024-11-05)"},
	"grant":     {"client_credentials\tmachine to machine", "authorization_code\ta person in a browser"},
	"log-level": {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"},
	"state":     {"file\tfiles under $XDG_STATE_HOME/mcpscope/calls", "redis://\tredis://[user@]host:port/db", "rediss://\tRedis over TLS"},
}

// registerCompletions makes every command's value flags complete from
// their real values: the fixed choices above, the configured servers for
// --server, the hosts for --host.
func registerCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, values := range flagValues {
			if c.Flags().Lookup(name) == nil {
				continue
			}
			directive := cobra.ShellCompDirectiveNoFileComp
			if name == "state" {
				directive |= cobra.ShellCompDirectiveNoSpace // a redis:// URL goes on
			}
			_ = c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, directive))
		}
		if c.Flags().Lookup("server") != nil {
			_ = c.RegisterFlagCompletionFunc("server", completeServers)
		}
		if c.Flags().Lookup("host") != nil {
			_ = c.RegisterFlagCompletionFunc("host", cobra.FixedCompletions(hosts.Names, cobra.ShellCompDirectiveNoFileComp))
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// completeServers offers the servers the hosts have, as mcpscope servers
// names them (NAME, or HOST/NAME when several hosts have it).
func completeServers(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	all := hosts.Load(hosts.Options{})
	out := make([]string, 0, len(all.Servers))
	for _, s := range all.Servers {
		out = append(out, completion(all.Selector(s), hosts.Title(s.Host)))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeProxies offers the names of the running proxies, for attach.
func completeProxies(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	all, _ := proxy.List(cmd.Context(), attachDial)
	out := make([]string, 0, len(all))
	for _, r := range all {
		if r.Err == nil {
			out = append(out, completion(r.Hello.Name, fmt.Sprintf("pid %d: %s", r.Hello.PID, r.Hello.Target)))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completion is one completion value with its description, both made safe
// for the terminal and free of the tab and newline that separate them.
func completion(value, desc string) string {
	value = strings.Join(strings.Fields(termsafe.Line(value)), "")
	if desc == "" {
		return value
	}
	return value + "\t" + strings.Join(strings.Fields(termsafe.Line(desc)), " ")
}
