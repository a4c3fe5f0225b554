package cli

import (
	"bufio"
	"context"
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
		f connFlags
		o replayOptions
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
			o.cmdPath, o.file, o.url, o.command = cmd.CommandPath(), own[0], url, command
			o.urlFlag = f.server.url != ""
			o.spec = func(url string, command []string) (connect.Spec, error) { return f.spec(cmd, url, command) }
			o.startTrace = func(sp *connect.Spec) (*liveTrace, error) { return f.otlp.start(cmd, sp) }
			return runReplay(cmd.Context(), &o, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f.add(cmd.Flags())
	f.otlp.add(cmd.Flags())
	cmd.Flags().BoolVar(&o.yes, "yes", false, "replay tools that declare destructiveHint too, without asking")
	cmd.Flags().DurationVar(&o.tolerance, "tolerance", time.Second, "how far a call's duration may stray from the recorded one")
	cmd.Flags().BoolVar(&o.noTiming, "no-timing", false, "compare no durations")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the report as JSON for programs")
	cmd.Flags().StringVar(&o.junit, "junit", "", "also write the report as JUnit XML to this file, a test case per replayed call, for CI")
	return cmd
}

// replayOptions is what a replay was asked: the journal, the target and
// the flags. The cobra command fills it; runReplay needs no cobra.
type replayOptions struct {
	cmdPath string   // names the command in usage errors ("mcpscope replay")
	file    string   // the journal
	url     string   // the target: a URL,
	command []string // or the command after --
	urlFlag bool     // --url was given: the target is the flags'

	yes       bool
	tolerance time.Duration
	noTiming  bool
	asJSON    bool
	junit     string

	// spec makes the live server's spec from the connection flags;
	// startTrace starts its live trace (nil: none).
	spec       func(url string, command []string) (connect.Spec, error)
	startTrace func(sp *connect.Spec) (*liveTrace, error)
}

// runReplay sends the journal's requests again to the live server, prints
// what differs to out (notes and questions to errw, answers read from in),
// and returns the differences as an error: exit 1 when a call differs.
func runReplay(ctx context.Context, o *replayOptions, in io.Reader, out, errw io.Writer) error {
	if _, err := journalHeader(o.cmdPath, o.file); err != nil {
		return err
	}
	rec, err := replay.Load(o.file)
	if err != nil {
		return err
	}
	for _, n := range rec.Notes {
		fmt.Fprintf(errw, "mcpscope: note: %s: %s\n", termsafe.Line(o.file), termsafe.Line(n))
	}
	url := o.url
	if url == "" && len(o.command) == 0 && !o.urlFlag {
		if url = rec.URL(); url == "" {
			if rec.Info.Transport == "stdio" {
				h, _ := scan.Header(o.file)
				return usagef(o.cmdPath, "%s was recorded over stdio (%s): give the server's command after -- "+
					"(mcpscope never runs a command because a file names it)", o.file, termsafe.Line(h.Target))
			}
			return usagef(o.cmdPath, "%s recorded no usable URL (a credential in it was redacted): give the URL", o.file)
		}
		fmt.Fprintf(errw, "mcpscope: replaying against the recorded %s\n", termsafe.Line(url))
	}
	sp, err := o.spec(url, o.command)
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
	var live *liveTrace
	if o.startTrace != nil {
		if live, err = o.startTrace(&sp); err != nil {
			return err
		}
	}
	defer live.finish() // after the session closed: its last spans
	s, err := connect.Connect(ctx, sp)
	if err != nil {
		return err
	}
	defer s.Close()
	info := s.Info()
	if !o.asJSON {
		fmt.Fprintf(out, "recorded %s %s (protocol %s)\nlive     %s %s (protocol %s)\n",
			termsafe.Line(rec.Info.ServerInfo.Name), termsafe.Line(rec.Info.ServerInfo.Version), termsafe.Line(rec.Info.ProtocolVersion),
			termsafe.Line(info.ServerInfo.Name), termsafe.Line(info.ServerInfo.Version), termsafe.Line(info.ProtocolVersion))
		if sp.Capabilities != nil {
			fmt.Fprintf(out, "declared %s (as the recorded client did)\n", capabilityNames(sp.Capabilities))
		} else {
			fmt.Fprintln(out, "declared what the recorded answers serve (the recording holds no handshake request)")
		}
	}
	ro := replay.Options{Yes: o.yes, Tolerance: o.tolerance, NoTiming: o.noTiming}
	if !o.asJSON {
		ro.Each = func(r replay.Result) { printReplayResult(out, r) }
	}
	if !o.yes && isTerminal(errw) && isTerminal(in) {
		lines := bufio.NewReader(in)
		ro.Ask = func(tool string) bool {
			fmt.Fprintf(errw, "replay %s, which declares destructiveHint? [y/N] ", termsafe.Line(tool))
			answer, _ := lines.ReadString('\n')
			return strings.EqualFold(strings.TrimSpace(answer), "y") || strings.EqualFold(strings.TrimSpace(answer), "yes")
		}
	}
	sum, err := replay.Run(ctx, s, rec, ro)
	if o.junit != "" && sum != nil {
		if jerr := writeJUnit(o.junit, replayJUnit(sum, transport.RedactTarget(info.Target))); jerr != nil && err == nil {
			err = jerr
		}
	}
	if o.asJSON {
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
