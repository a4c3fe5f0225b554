package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"mcpscope/artifact/diff"
	"mcpscope/connect"
	"mcpscope/internal/render"
	"mcpscope/internal/shell"
	"mcpscope/internal/userfile"
	"mcpscope/transport"
)

func newDiffCmd() *cobra.Command {
	var (
		f connFlags
		o diffOptions
	)
	cmd := &cobra.Command{
		Use:   "diff [A] [B] [target]",
		Short: "Compare two servers' catalogs (journals, snapshots, live); exit 1 on drift",
		Long: "Compare what two servers offer, or one server at two times: server info, protocol version, capabilities, " +
			"instructions, and every tool, resource, template and prompt added, removed or changed, with a structural " +
			"diff of input and output schemas, annotations and descriptions. Changes that may break a client (a tool " +
			"gone, a property gone or of another type, an input tightened: a new required property, a new or narrower " +
			"minItems, minLength, maxLength, minimum, maximum, pattern, format, const or enum, additionalProperties: false) are marked. " +
			"So is a tool whose hints now say it is less safe (readOnlyHint true to false, destructiveHint false to true), " +
			"marked riskier: hosts approve calls by these hints.\n\n" +
			"A side is a journal (the last lists it recorded), a snapshot written by --baseline, or a live server: a URL, " +
			"or the command after -- (one side only: a second -- is refused; snapshot one command with --baseline first). " +
			"The sides are the arguments in order, then the target; when one is missing, the embedded demo server takes " +
			"the last place.\n\n" +
			"--baseline FILE compares the one side with the snapshot in FILE, or writes FILE when it does not exist yet: " +
			"commit it, and CI fails (exit 1) when the server's catalog drifts. --update rewrites it.",
		GroupID: groupSessions,
		Example: "  mcpscope diff before.jsonl after.jsonl\n" +
			"  mcpscope diff before.jsonl http://127.0.0.1:3001/mcp\n" +
			"  mcpscope diff recorded.jsonl -- node server.js\n" +
			"  mcpscope diff --baseline testdata/catalog.json -- node server.js",
		Args: func(cmd *cobra.Command, args []string) error { return checkDiffArgs(cmd, args, &o) },
		RunE: func(cmd *cobra.Command, args []string) error {
			o.cmdPath = cmd.CommandPath()
			o.own, o.url, o.command = split(cmd, args)
			o.spec = func(url string, command []string) (connect.Spec, error) { return f.spec(cmd, url, command) }
			o.startTrace = func(sp *connect.Spec) (*liveTrace, error) { return f.otlp.start(cmd, sp) }
			return runDiff(cmd.Context(), &o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f.add(cmd.Flags())
	f.otlp.add(cmd.Flags())
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the report as JSON for programs")
	cmd.Flags().StringVar(&o.baseline, "baseline", "", "compare with the snapshot in this file, or write it there when it does not exist")
	cmd.Flags().StringVar(&o.junit, "junit", "", "also write the report as JUnit XML to this file, a test case per tool, resource, template and prompt, for CI: "+
		"a breaking or riskier change fails its case, any other passes and names the change in its output")
	cmd.Flags().BoolVar(&o.driftFails, "junit-drift-fails", false, "with --junit, fail the case of every change, not only the breaking and riskier ones")
	cmd.Flags().BoolVar(&o.update, "update", false, "with --baseline, rewrite the file with what the side holds now")
	return cmd
}

// checkDiffArgs refuses, before anything starts, a diff command line that
// cannot work: too many sides, two commands, flags that need another.
func checkDiffArgs(cmd *cobra.Command, args []string, o *diffOptions) error {
	own, url, command := split(cmd, args)
	if i := slices.Index(command, "--"); i >= 0 {
		return twoCommands(cmd, command[:i], command[i+1:])
	}
	want := o.sidesWanted()
	n := len(own)
	if url != "" || len(command) > 0 {
		n++
	}
	if n > want {
		if o.baseline != "" {
			return usagef(cmd.CommandPath(), "with --baseline, diff takes one side (a journal or a target), got %d", n)
		}
		return usagef(cmd.CommandPath(), "diff compares two sides, got %d", n)
	}
	if o.driftFails && o.junit == "" {
		return usagef(cmd.CommandPath(), "--junit-drift-fails says how --junit counts changes: give --junit FILE")
	}
	if o.update && o.baseline == "" {
		return usagef(cmd.CommandPath(), "--update rewrites the --baseline file: give --baseline FILE")
	}
	if o.baseline != "" {
		return checkOutput(cmd, "--baseline", o.baseline)
	}
	return nil
}

// diffOptions is what a diff was asked: its sides and its flags. The cobra
// command fills it; runDiff needs no cobra, so tests call it directly.
type diffOptions struct {
	cmdPath string   // names the command in usage errors ("mcpscope diff")
	own     []string // the sides given as arguments: journals, snapshots, URLs
	url     string   // the target: a URL,
	command []string // or the command after --

	asJSON   bool
	baseline string
	update   bool
	junit    string
	// driftFails: every change fails its JUnit case, not only breaking ones.
	driftFails bool

	// spec makes a live side's spec from the connection flags; startTrace
	// starts its live trace (nil when no side is live, or no --otlp).
	spec       func(url string, command []string) (connect.Spec, error)
	startTrace func(sp *connect.Spec) (*liveTrace, error)
}

// sidesWanted is how many sides the diff compares: two, or one against
// the --baseline file.
func (o *diffOptions) sidesWanted() int {
	if o.baseline != "" {
		return 1
	}
	return 2
}

// diffSide is one side of a diff: a file, or a live server (a URL, a
// command, or neither: the embedded demo).
type diffSide struct {
	file    string
	url     string
	command []string
}

// runDiff compares the two sides o names (or the one side and the
// baseline), prints the report to out, and returns the drift as an error:
// exit 1 when the catalogs differ.
func runDiff(ctx context.Context, o *diffOptions, out, errw io.Writer) error {
	snaps, err := diffSnapshots(ctx, o, errw)
	if err != nil {
		return err
	}
	if o.baseline != "" {
		if _, err := os.Stat(o.baseline); errors.Is(err, os.ErrNotExist) {
			if err := writeBaseline(o.baseline, snaps[0]); err != nil {
				return err
			}
			fmt.Fprintf(out, "wrote the baseline %s: %s\n", o.baseline, snaps[0].Counts())
			return nil
		}
		old, err := diff.Load(o.baseline)
		if err != nil {
			return err
		}
		snaps = []*diff.Snapshot{old, snaps[0]}
	}
	r := diff.Compare(snaps[0], snaps[1])
	if o.asJSON {
		if err := render.Line(out, map[string]any{"drift": r.Drift(), "breaking": r.Breaking(), "riskier": r.Riskier(), "report": r}); err != nil {
			return err
		}
	} else {
		st := diff.Styles{}
		if isTerminal(out) && os.Getenv("NO_COLOR") == "" {
			st = diff.ANSI()
		}
		r.Human(out, st)
	}
	if o.junit != "" {
		if err := writeJUnit(o.junit, diffJUnit(r, snaps[0], snaps[1], o.driftFails)); err != nil {
			return err
		}
	}
	if o.update {
		if err := writeBaseline(o.baseline, snaps[1]); err != nil {
			return err
		}
		fmt.Fprintf(errw, "mcpscope: rewrote the baseline %s\n", o.baseline)
		return nil
	}
	if r.Drift() {
		return shown{&driftError{changes: len(r.Changes), breaking: r.Breaking(), riskier: r.Riskier()}}
	}
	return nil
}

// diffSides are the sides o names, in order, the embedded demo taking the
// last place when one is missing.
func diffSides(o *diffOptions) []diffSide {
	var sides []diffSide
	for _, a := range o.own {
		if hasHTTPScheme(a) {
			sides = append(sides, diffSide{url: a})
		} else {
			sides = append(sides, diffSide{file: a})
		}
	}
	if o.url != "" || len(o.command) > 0 {
		sides = append(sides, diffSide{url: o.url, command: o.command})
	}
	want := o.sidesWanted()
	if len(sides) < want {
		sides = append(sides, diffSide{}) // the embedded demo
	}
	return sides
}

// diffSnapshots reads or takes the snapshot of each side: a file is
// loaded, a live server connected to and listed.
func diffSnapshots(ctx context.Context, o *diffOptions, errw io.Writer) ([]*diff.Snapshot, error) {
	sides := diffSides(o)
	// Every live side's spec is checked before anything starts.
	specs := make([]*connect.Spec, len(sides))
	for i, sd := range sides {
		if sd.file != "" {
			if _, err := os.Stat(sd.file); err != nil {
				if h := schemeHint(sd.file); h != "" {
					return nil, usagef(o.cmdPath, "%s", h)
				}
				return nil, usagef(o.cmdPath, "%v", err)
			}
			continue
		}
		sp, err := o.spec(sd.url, sd.command)
		if err != nil {
			return nil, err
		}
		sp.Grace, sp.Notes = oneShotGrace, errw
		sp.Auth.Interactive = isTerminal(errw)
		specs[i] = &sp
	}
	snaps := make([]*diff.Snapshot, len(sides))
	for i, sd := range sides {
		if specs[i] == nil {
			if err := journalFile(o.cmdPath, sd.file); err != nil {
				return nil, err // a FIFO or a device would never end
			}
			s, err := diff.Load(sd.file)
			if err != nil {
				if _, jerr := journalHeader(o.cmdPath, sd.file); jerr != nil {
					return nil, jerr // not a journal, nor a snapshot: the command line's mistake
				}
				return nil, err
			}
			snaps[i] = s
			continue
		}
		var live *liveTrace
		if o.startTrace != nil {
			var err error
			if live, err = o.startTrace(specs[i]); err != nil { // a trace per side, as each has its journal
				return nil, err
			}
		}
		s, err := connect.Connect(ctx, *specs[i])
		if err != nil {
			live.finish()
			return nil, err
		}
		source := s.Info().Target
		if sd.url == "" && len(sd.command) == 0 {
			source = "the embedded demo server"
		}
		snaps[i] = diff.FromSession(ctx, s, transport.RedactTarget(source))
		s.Close()
		live.finish()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return snaps, nil
}

// twoCommands refuses "diff -- A -- B": everything after the first -- is
// one command, so B would be A's arguments and the demo the other side. A
// command is one side; the other is recorded first.
func twoCommands(cmd *cobra.Command, a, b []string) error {
	show := func(argv []string) string {
		return strings.TrimPrefix(transport.RedactTarget("stdio: "+shell.Join(argv)), "stdio: ")
	}
	if len(a) == 0 {
		a = []string{"CMD_A"}
	}
	if len(b) == 0 {
		b = []string{"CMD_B"}
	}
	return usagef(cmd.CommandPath(), "diff runs one command, everything after the first --; this line has a second --, "+
		"which would run %s as one command and compare it with the embedded demo. To diff two commands, snapshot the first, "+
		"then compare the second with it:\n"+
		"  mcpscope diff --baseline a.json --update -- %s\n"+
		"  mcpscope diff a.json -- %s\n"+
		"(a command whose own arguments hold --: run it through sh -c '…')",
		show(slices.Concat(a, []string{"--"}, b)), show(a), show(b))
}

// writeBaseline writes a snapshot file (mode 0644 when new: a baseline is
// meant to be committed).
func writeBaseline(path string, s *diff.Snapshot) error {
	return userfile.Write(path, 0o644, s.Write)
}

// driftError is a diff that found changes: exit 1, so it gates CI.
type driftError struct{ changes, breaking, riskier int }

func (e *driftError) Error() string {
	msg := fmt.Sprintf("the catalogs differ: %d change(s), %d breaking", e.changes, e.breaking)
	if e.riskier > 0 {
		msg += fmt.Sprintf(", %d riskier", e.riskier)
	}
	return msg
}

func (e *driftError) Is(target error) bool { return target == errServerState }
