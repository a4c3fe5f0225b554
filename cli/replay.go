package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/artifact/replay"
	"mcpscope/artifact/scan"
	"mcpscope/connect"
	"mcpscope/internal/render"
	"mcpscope/internal/termsafe"
	"mcpscope/transport"
)

func newReplayCmd() *cobra.Command {
	var (
		f         connFlags
		yes       bool
		tolerance time.Duration
		noTiming  bool
		asJSON    bool
		junit     string
	)
	cmd := &cobra.Command{
		Use:   "replay FILE [target]",
		Short: "Send a recording's requests again to a live server; report what differs",
		Long: "Send the requests of a journal again, one after another in recorded order, to a live server (the target, or " +
			"the URL the journal recorded), and report call by call what differs from the recording: the result (a " +
			"structural diff; _meta, resultType complete and the 2026-07-28 caching hints aside), an error where there " +
			"was none or another one, a tool that now reports isError, a duration beyond --tolerance. A call the recording " +
			"cancelled is cancelled after as long. Server requests (sampling, elicitation, MRTR input) get the answers the " +
			"recorded client gave, unless --answer says otherwise.\n\n" +
			"The handshake is the live session's own; task and listen requests, which refer to the recorded session, are " +
			"skipped. Tools that declare destructiveHint are skipped, or asked about on a terminal; --yes replays them. A " +
			"stdio recording needs its command after --: mcpscope never runs a command because a file names it.",
		GroupID: groupSessions,
		Example: "  mcpscope replay session.jsonl                       # the URL it was recorded against\n" +
			"  mcpscope replay session.jsonl http://127.0.0.1:3001/mcp\n" +
			"  mcpscope replay session.jsonl --tolerance 5s -- node server.js",
		Args: func(cmd *cobra.Command, args []string) error {
			own, _, _ := split(cmd, args)
			switch {
			case len(own) == 0:
				return usagef(cmd.CommandPath(), "replay needs a journal file")
			case len(own) > 1:
				if h := schemeHint(own[1]); h != "" {
					return usagef(cmd.CommandPath(), "%s", h)
				}
				return usagef(cmd.CommandPath(), "replay takes one journal, then the target; %q is one too many", own[1])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			own, url, command := split(cmd, args)
			if _, err := journalHeader(cmd, own[0]); err != nil {
				return err
			}
			rec, err := replay.Load(own[0])
			if err != nil {
				return err
			}
			errw := cmd.ErrOrStderr()
			for _, n := range rec.Notes {
				fmt.Fprintf(errw, "mcpscope: note: %s: %s\n", termsafe.Line(own[0]), termsafe.Line(n))
			}
			if url == "" && len(command) == 0 && f.server.url == "" {
				if url = rec.URL(); url == "" {
					if rec.Info.Transport == "stdio" {
						h, _ := scan.Header(own[0])
						return usagef(cmd.CommandPath(), "%s was recorded over stdio (%s): give the server's command after -- "+
							"(mcpscope never runs a command because a file names it)", own[0], termsafe.Line(h.Target))
					}
					return usagef(cmd.CommandPath(), "%s recorded no usable URL (a credential in it was redacted): give the URL", own[0])
				}
				fmt.Fprintf(errw, "mcpscope: replaying against the recorded %s\n", termsafe.Line(url))
			}
			sp, err := f.spec(cmd, url, command)
			if err != nil {
				return err
			}
			for k, v := range rec.Answers {
				if sp.Answers == nil {
					sp.Answers = map[string]json.RawMessage{}
				}
				if _, given := sp.Answers[k]; !given {
					sp.Answers[k] = v
				}
			}
			// Declare what the recorded client declared: a server lists
			// tools by the client's capabilities, so more would differ.
			sp.Capabilities = rec.Info.ClientCapabilities
			sp.Grace, sp.Notes = oneShotGrace, errw
			sp.Auth.Interactive = isTerminal(errw)
			live, err := f.otlp.start(cmd, &sp)
			if err != nil {
				return err
			}
			defer live.finish() // after the session closed: its last spans
			s, err := connect.Connect(cmd.Context(), sp)
			if err != nil {
				return err
			}
			defer s.Close()
			out := cmd.OutOrStdout()
			in := s.Info()
			if !asJSON {
				fmt.Fprintf(out, "recorded %s %s (protocol %s)\nlive     %s %s (protocol %s)\n",
					termsafe.Line(rec.Info.ServerInfo.Name), termsafe.Line(rec.Info.ServerInfo.Version), termsafe.Line(rec.Info.ProtocolVersion),
					termsafe.Line(in.ServerInfo.Name), termsafe.Line(in.ServerInfo.Version), termsafe.Line(in.ProtocolVersion))
				if sp.Capabilities != nil {
					fmt.Fprintf(out, "declared %s (as the recorded client did)\n", capabilityNames(sp.Capabilities))
				} else {
					fmt.Fprintln(out, "declared what the recorded answers serve (the recording holds no handshake request)")
				}
			}
			o := replay.Options{Yes: yes, Tolerance: tolerance, NoTiming: noTiming}
			if !asJSON {
				o.Each = func(r replay.Result) { printReplayResult(out, r) }
			}
			if !yes && isTerminal(errw) && isTerminal(cmd.InOrStdin()) {
				lines := bufio.NewReader(cmd.InOrStdin())
				o.Ask = func(tool string) bool {
					fmt.Fprintf(errw, "replay %s, which declares destructiveHint? [y/N] ", termsafe.Line(tool))
					answer, _ := lines.ReadString('\n')
					return strings.EqualFold(strings.TrimSpace(answer), "y") || strings.EqualFold(strings.TrimSpace(answer), "yes")
				}
			}
			sum, err := replay.Run(cmd.Context(), s, rec, o)
			if junit != "" && sum != nil {
				if jerr := writeJUnit(junit, replayJUnit(sum, transport.RedactTarget(in.Target))); jerr != nil && err == nil {
					err = jerr
				}
			}
			if asJSON {
				if jerr := render.Line(out, sum); jerr != nil && err == nil {
					err = jerr
				}
			} else {
				fmt.Fprintf(out, "replayed %d of %d calls: %d same, %d differ, %d skipped\n",
					sum.Same+sum.Differ, len(rec.Calls), sum.Same, sum.Differ, sum.Skipped)
			}
			if err != nil {
				return err
			}
			if sum.Differ > 0 {
				return shown{&replayDiffError{n: sum.Differ}}
			}
			return nil
		},
	}
	f.add(cmd.Flags())
	f.otlp.add(cmd.Flags())
	cmd.Flags().BoolVar(&yes, "yes", false, "replay tools that declare destructiveHint too, without asking")
	cmd.Flags().DurationVar(&tolerance, "tolerance", time.Second, "how far a call's duration may stray from the recorded one")
	cmd.Flags().BoolVar(&noTiming, "no-timing", false, "compare no durations")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON for programs")
	cmd.Flags().StringVar(&junit, "junit", "", "also write the report as JUnit XML to this file, a test case per replayed call, for CI")
	return cmd
}

func printReplayResult(w io.Writer, r replay.Result) {
	head := fmt.Sprintf("  #%-5d %-28s %-8s ", r.Seq, termsafe.Line(r.Method+" "+r.Name), r.Status)
	switch r.Status {
	case "skipped":
		fmt.Fprintln(w, head+termsafe.Line(r.Reason))
		return
	case "same":
		fmt.Fprintf(w, "%s%s (recorded %s)\n", head, time.Duration(r.Live).Round(time.Millisecond), time.Duration(r.Recorded).Round(time.Millisecond))
		return
	}
	pad := strings.Repeat(" ", len([]rune(head)))
	for i, l := range replayLines(r) {
		if i == 0 {
			fmt.Fprintln(w, head+l)
		} else {
			fmt.Fprintln(w, pad+l)
		}
	}
}

// replayLines are a differing call's differences, one a line, sanitised.
func replayLines(r replay.Result) []string {
	var out []string
	for _, d := range r.Differences {
		if d.Detail != "" {
			out = append(out, d.What+": "+termsafe.Line(d.Detail))
		}
		for _, fl := range d.Fields {
			path := fl.Path
			if path == "" {
				path = "(value)"
			}
			switch fl.Op {
			case "added":
				out = append(out, fmt.Sprintf("%s: + %s %s", d.What, termsafe.Line(path), cutValue(fl.After)))
			case "removed":
				out = append(out, fmt.Sprintf("%s: - %s %s", d.What, termsafe.Line(path), cutValue(fl.Before)))
			default:
				out = append(out, fmt.Sprintf("%s: ~ %s %s → %s", d.What, termsafe.Line(path), cutValue(fl.Before), cutValue(fl.After)))
			}
		}
	}
	return out
}

// capabilityNames lists a capabilities object's members, and the
// extensions it declares, for one line of output.
func capabilityNames(caps json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(caps, &m) != nil || len(m) == 0 {
		return "no capabilities"
	}
	var names []string
	for k, v := range m {
		if k != "extensions" {
			names = append(names, k)
			continue
		}
		var ext map[string]json.RawMessage
		_ = json.Unmarshal(v, &ext)
		for e := range ext {
			names = append(names, "extension "+e)
		}
	}
	sort.Strings(names)
	return termsafe.Line(strings.Join(names, ", "))
}

func cutValue(b []byte) string { return termsafe.Cut(string(b), 100) }

// replayDiffError is a replay that found differences: exit 1.
type replayDiffError struct{ n int }

func (e *replayDiffError) Error() string {
	return fmt.Sprintf("%d call(s) differ from the recording", e.n)
}

func (e *replayDiffError) Is(target error) bool { return target == errServerState }
