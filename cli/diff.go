package cli

import (
	"errors"
	"fmt"
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
		f        connFlags
		asJSON   bool
		baseline string
		update   bool
		junit    string
		// driftFails: every change fails its JUnit case, not only breaking ones.
		driftFails bool
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
		Args: func(cmd *cobra.Command, args []string) error {
			own, url, command := split(cmd, args)
			if i := slices.Index(command, "--"); i >= 0 {
				return twoCommands(cmd, command[:i], command[i+1:])
			}
			want := 2
			if baseline != "" {
				want = 1
			}
			n := len(own)
			if url != "" || len(command) > 0 {
				n++
			}
			if n > want {
				if baseline != "" {
					return usagef(cmd.CommandPath(), "with --baseline, diff takes one side (a journal or a target), got %d", n)
				}
				return usagef(cmd.CommandPath(), "diff compares two sides, got %d", n)
			}
			if driftFails && junit == "" {
				return usagef(cmd.CommandPath(), "--junit-drift-fails says how --junit counts changes: give --junit FILE")
			}
			if update && baseline == "" {
				return usagef(cmd.CommandPath(), "--update rewrites the --baseline file: give --baseline FILE")
			}
			if baseline != "" {
				return checkOutput(cmd, "--baseline", baseline)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			own, url, command := split(cmd, args)
			type side struct {
				file    string
				url     string
				command []string
			}
			var sides []side
			for _, a := range own {
				if hasHTTPScheme(a) {
					sides = append(sides, side{url: a})
				} else {
					sides = append(sides, side{file: a})
				}
			}
			if url != "" || len(command) > 0 {
				sides = append(sides, side{url: url, command: command})
			}
			want := 2
			if baseline != "" {
				want = 1
			}
			if len(sides) < want {
				sides = append(sides, side{}) // the embedded demo
			}
			// Every live side's spec is checked before anything starts.
			specs := make([]*connect.Spec, len(sides))
			for i, sd := range sides {
				if sd.file != "" {
					if _, err := os.Stat(sd.file); err != nil {
						if h := schemeHint(sd.file); h != "" {
							return usagef(cmd.CommandPath(), "%s", h)
						}
						return usagef(cmd.CommandPath(), "%v", err)
					}
					continue
				}
				sp, err := f.spec(cmd, sd.url, sd.command)
				if err != nil {
					return err
				}
				sp.Grace, sp.Notes = oneShotGrace, cmd.ErrOrStderr()
				sp.Auth.Interactive = isTerminal(cmd.ErrOrStderr())
				specs[i] = &sp
			}
			snaps := make([]*diff.Snapshot, len(sides))
			for i, sd := range sides {
				if specs[i] == nil {
					if err := journalFile(cmd, sd.file); err != nil {
						return err // a FIFO or a device would never end
					}
					s, err := diff.Load(sd.file)
					if err != nil {
						if _, jerr := journalHeader(cmd, sd.file); jerr != nil {
							return jerr // not a journal, nor a snapshot: the command line's mistake
						}
						return err
					}
					snaps[i] = s
					continue
				}
				live, err := f.otlp.start(cmd, specs[i]) // a trace per side, as each has its journal
				if err != nil {
					return err
				}
				s, err := connect.Connect(cmd.Context(), *specs[i])
				if err != nil {
					live.finish()
					return err
				}
				source := s.Info().Target
				if sd.url == "" && len(sd.command) == 0 {
					source = "the embedded demo server"
				}
				snaps[i] = diff.FromSession(cmd.Context(), s, transport.RedactTarget(source))
				s.Close()
				live.finish()
				if err := cmd.Context().Err(); err != nil {
					return err
				}
			}
			out := cmd.OutOrStdout()
			if baseline != "" {
				if _, err := os.Stat(baseline); errors.Is(err, os.ErrNotExist) {
					if err := writeBaseline(baseline, snaps[0]); err != nil {
						return err
					}
					fmt.Fprintf(out, "wrote the baseline %s: %s\n", baseline, snaps[0].Counts())
					return nil
				}
				old, err := diff.Load(baseline)
				if err != nil {
					return err
				}
				snaps = []*diff.Snapshot{old, snaps[0]}
			}
			r := diff.Compare(snaps[0], snaps[1])
			if asJSON {
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
			if junit != "" {
				if err := writeJUnit(junit, diffJUnit(r, snaps[0], snaps[1], driftFails)); err != nil {
					return err
				}
			}
			if update {
				if err := writeBaseline(baseline, snaps[1]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "mcpscope: rewrote the baseline %s\n", baseline)
				return nil
			}
			if r.Drift() {
				return shown{&driftError{changes: len(r.Changes), breaking: r.Breaking(), riskier: r.Riskier()}}
			}
			return nil
		},
	}
	f.add(cmd.Flags())
	f.otlp.add(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON for programs")
	cmd.Flags().StringVar(&baseline, "baseline", "", "compare with the snapshot in this file, or write it there when it does not exist")
	cmd.Flags().StringVar(&junit, "junit", "", "also write the report as JUnit XML to this file, a test case per tool, resource, template and prompt, for CI: "+
		"a breaking or riskier change fails its case, any other passes and names the change in its output")
	cmd.Flags().BoolVar(&driftFails, "junit-drift-fails", false, "with --junit, fail the case of every change, not only the breaking and riskier ones")
	cmd.Flags().BoolVar(&update, "update", false, "with --baseline, rewrite the file with what the side holds now")
	return cmd
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
