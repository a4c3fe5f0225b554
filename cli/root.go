// Package cli is mcpscope's command line. Each command is one file that
// declares its own flags next to the function that runs it; newRoot is the
// one place where commands are registered. Commands write only to the
// streams cobra gives them (cmd.OutOrStdout, cmd.ErrOrStderr).
package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"charm.land/fang/v2"
	"github.com/spf13/cobra"

	"mcpscope/session"
)

// Main runs mcpscope with args (without the program name) and returns the
// process's exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, args, stdout, stderr)
}

// Run is Main under ctx (tests cancel it instead of sending a signal).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(stdout)
	setHelpWidth(stdout)
	if helpRequested(args) {
		hw := helpOutput(stdout)
		defer hw.Flush()
		root.SetOut(hw)
		wrapHelpText(root, hw.width)
	}
	root.SetErr(stderr)
	onError := func(w io.Writer, _ fang.Styles, err error) {
		if wantsJSON(root, args) {
			if !errors.As(err, new(shown)) {
				printJSONError(stdout, err)
			}
			return
		}
		printError(w, err)
	}
	err := fang.Execute(ctx, root, fang.WithVersion(version()), fang.WithoutManpage(), fang.WithErrorHandler(onError))
	return exitCode(err)
}

// Command groups, in the order help lists them.
const (
	groupHeadless = "headless"
	groupSessions = "sessions"
	groupServers  = "servers"
)

// newRoot builds the command tree: the inspector at the root, and one line
// per subcommand here.
func newRoot() *cobra.Command {
	root := newInspectCmd()
	root.AddGroup(
		&cobra.Group{ID: groupHeadless, Title: "headless (the same engine, no UI)"},
		&cobra.Group{ID: groupSessions, Title: "calls left running, journals"},
		&cobra.Group{ID: groupServers, Title: "more"},
	)
	for _, c := range []*cobra.Command{
		newListCmd("tools", "tools/list", "tools", "tools", "List the server's tools"),
		newListCmd("resources", "resources/list", "resources", "resources", "List the server's resources"),
		newListCmd("templates", "resources/templates/list", "resourceTemplates", "resources", "List the server's resource templates"),
		newListCmd("prompts", "prompts/list", "prompts", "prompts", "List the server's prompts"),
		newCallCmd(),
		newReadCmd(),
		newPromptCmd(),
		newPingCmd(),
		newTasksCmd(),
		newTaskCmd(),
		newListenCmd(),
		newRecordCmd(),
		newRejoinCmd(),
		newJournalCmd(),
		newOpenCmd(),
		newAttachCmd(),
		newJournalsCmd(),
		newExportCmd(),
		newDiffCmd(),
		newLintCmd(),
		newServeCmd(),
		newReplayCmd(),
		newDemoCmd(),
		newBenchCmd(),
		newClientCmd(),
		newServersCmd(),
		newWrapCmd(),
		newUnwrapCmd(),
		newProxyCmd(),
		newProxiesCmd(),
		newVersionCmd(),
		newManCmd(),
		newCompletionCmd(),
	} {
		root.AddCommand(c)
	}
	root.SuggestionsMinimumDistance = 2
	root.SetHelpCommandGroupID(groupServers)
	registerCompletions(root)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &usageError{cmd: c.CommandPath(), msg: err.Error()}
	})
	return root
}

// version is mcpscope's version with the commit and build time the Go
// toolchain recorded, when it recorded them.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return versionOf(info)
}

// unstamped says why a binary carries no commit and how to get one: go
// build and go install stamp the commit only in a checkout whose .git is a
// directory, so go run and builds inside a git worktree (where .git is a
// file) record none.
const unstamped = " (no commit recorded: 'go run' and builds inside a git worktree carry none; 'go build' or 'go install .' in a clone records it)"

// versionOf is version for the build info info (nil when there is none).
// A release build stamps session.Version at link time (-X, see
// .goreleaser.yaml): that version wins over the module version the Go
// toolchain derives from git, which for a snapshot is a pseudo-version.
// Unstamped, session.Version is a -dev version and the module version, when
// there is one, names the build better.
func versionOf(info *debug.BuildInfo) string {
	v := session.Version
	if info == nil {
		return v + unstamped
	}
	if info.Main.Version != "" && info.Main.Version != "(devel)" && strings.HasSuffix(v, "-dev") {
		v = strings.TrimPrefix(info.Main.Version, "v")
	}
	var rev, at, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	if rev == "" {
		if info.Main.Version != "" && info.Main.Version != "(devel)" {
			return v // a module version (go install mcpscope@vX) names the release
		}
		return v + unstamped
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return v + " (commit " + rev + dirty + ", " + at + ")"
}

// wantsJSON reports whether the command args ran asked for --json: then its
// errors are JSON on stdout too.
func wantsJSON(root *cobra.Command, args []string) bool {
	c, _, err := root.Find(args)
	if err != nil || c == nil {
		return false
	}
	f := c.Flags().Lookup("json")
	return f != nil && f.Value.String() == "true"
}
