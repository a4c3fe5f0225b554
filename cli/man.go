package cli

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

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
			page.WithLongDescription(manParagraphs(cmd.Root().Long))
			for _, s := range manSections {
				page.WithSection(s.name, manParagraphs(s.text))
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), page.Build(roff.NewDocument()))
			return err
		},
	}
}

// blankLines are the breaks between paragraphs of help text.
var blankLines = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\n\s*\n`) })

// manParagraphs makes help text (paragraphs apart by a blank line) what
// roff.Text wants: one line per paragraph, since it starts a paragraph at
// every newline.
func manParagraphs(s string) string {
	paras := blankLines().Split(strings.TrimSpace(s), -1)
	for i, p := range paras {
		paras[i] = strings.Join(strings.Fields(p), " ")
	}
	return strings.Join(paras, "\n")
}

// manSections are the man page's sections after the commands.
var manSections = []struct{ name, text string }{
	{"Exit Status", `0: success.

1: the server said no: it answered with a JSON-RPC error, a tool result with isError, or a request for input nobody gave; also a journal with lines that are not records.

2: usage: the command line is wrong (an unknown command or flag, a bad value, a file that is not a journal); nothing was started.

3: connection or transport: the server could not be reached or started, or the transport failed on the way.

4: timeout: a call or the handshake went past --timeout or --max-timeout.

130: interrupted (Ctrl-C).`},
	{"Files", `$XDG_STATE_HOME/mcpscope/journal/ (default ~/.local/state/mcpscope/journal/): the journals, one JSONL file per session, every frame byte for byte (mcpscope journals lists them).

$XDG_STATE_HOME/mcpscope/calls/: the state of calls left running (detached, or whose mcpscope died), one file per call, mode 0600, and their leases; what mcpscope rejoin reads. With --state redis://… (or MCPSCOPE_STATE) they are kept in Redis instead.

$XDG_STATE_HOME/mcpscope/oauth/: OAuth tokens and client registrations, one file per server, mode 0600.

$XDG_STATE_HOME/mcpscope/wrapped.json: the host entries mcpscope wrap changed, for mcpscope unwrap.

$XDG_RUNTIME_DIR/mcpscope/proxies/ (else $XDG_STATE_HOME/mcpscope/proxies/): the sockets of running mcpscope proxy processes, mode 0600.

$XDG_CONFIG_HOME/mcpscope/servers.json (default ~/.config/mcpscope/servers.json): servers of mcpscope's own, {"mcpServers": {...}} as in Claude Desktop's file; mcpscope servers also reads the hosts' files.

$XDG_CONFIG_HOME/mcpscope/settings.json: settings, such as the theme.

$XDG_CACHE_HOME/mcpscope/journals.json: the call counts of journals, kept so mcpscope journals reads each journal once.

$XDG_CACHE_HOME/mcpscope/completion/: the tool names shell completion got from a server for call TOOL, one file per target (named by a hash of it), kept 30 seconds.`},
	{"Environment", `MCPSCOPE_STATE: where detached calls are kept, as --state takes it (redis://[user@]host:port/db, rediss:// for TLS); --state wins.

REDISCLI_AUTH: the Redis password, when the --state URL has none.

MCPSCOPE_BEARER: a bearer token for HTTP servers, in place of --bearer (kept out of the process list and the journal).

MCPSCOPE_CLIENT_SECRET: the OAuth client secret, in place of --client-secret.

MCPSCOPE_THEME: the inspector's theme, over settings.json.

XDG_STATE_HOME, XDG_CONFIG_HOME, XDG_CACHE_HOME, XDG_RUNTIME_DIR: where the files above go (see FILES).

NO_COLOR: when set, no colour in output that would otherwise have it.

VISUAL, EDITOR: the editor the inspector opens for long values (default vi).

BROWSER: the browser OAuth's authorization page opens in (--no-browser prints the URL instead).`},
}
