package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/artifact/scan"
	"mcpscope/internal/termsafe"
	"mcpscope/session"
)

func newJournalCmd() *cobra.Command {
	var (
		ff      filterFlag
		summary bool
	)
	cmd := &cobra.Command{
		Use:   "journal FILE",
		Short: "Summarise a journal file",
		Long: "Summarise a journal file: its target, its calls (listed as they end, with how they ended), and its frames " +
			"by kind. The file is read as a stream, so a journal of any length takes little memory.\n\n" +
			"With --filter, the frames counted are those the filter matches, and a call is listed when one of its frames " +
			"matches; ~s, ~e and ~dur see each call as it ended (the journal is then read twice).\n\n" +
			"On a terminal (stdout and stdin both), without --filter, it opens the journal in the inspector instead, as " +
			"mcpscope open does; --summary prints the summary there too.",
		GroupID: groupSessions,
		Example: "  mcpscope journal ~/.local/state/mcpscope/journal/20261123-101500.000-4242.jsonl\n" +
			"  mcpscope journal session.jsonl --filter '~e | ~s cancelled'",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef(cmd.CommandPath(), "journal needs one file path")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			flt, err := ff.parse(cmd)
			if err != nil {
				return err
			}
			out, path := cmd.OutOrStdout(), args[0]
			if !summary && flt == nil && isTerminal(out) && isTerminal(cmd.InOrStdin()) {
				return openOffline(cmd, path, &connFlags{}, "", nil)
			}
			h, err := journalHeader(cmd, path)
			if err != nil {
				return err
			}
			// One write per 64 KiB, not per call listed (a write(2) each
			// was a tenth of the read-back of a big journal).
			bw := bufio.NewWriterSize(out, 64<<10)
			defer bw.Flush()
			out = bw
			w := func(label, format string, a ...any) { fmt.Fprintf(out, "%-8s %s\n", label, fmt.Sprintf(format, a...)) }
			w("journal", "%s", termsafe.Line(path))
			if h.Format == "" {
				w("target", "(no journal header: `mcpscope record` output)")
			} else {
				w("target", "%s", termsafe.Line(h.Target))
				w("started", "%s", h.Started.Format(time.RFC3339))
			}
			if flt != nil {
				w("filter", "%s", termsafe.Line(flt.String()))
			}
			var (
				in              scan.Info
				frames, matched int
				calls           int
				seen, listed    bitset // calls with a matching frame; calls listed
				kinds           = map[string]int{}
				subj            = session.NewSubjects()
			)
			list := func(i int, sn *session.CallSnapshot) {
				if listed.has(i) || flt != nil && !seen.has(i) {
					return
				}
				listed.set(i)
				if calls == 0 {
					w("calls", "(as they ended)")
				}
				calls++
				dur := "-"
				if !sn.Ended.IsZero() {
					dur = sn.Duration(sn.Started).Round(time.Millisecond).String()
				}
				fmt.Fprintf(out, "  #%-5s %-28s %-10s %s\n", termsafe.Line(sn.Key), termsafe.Line(sn.Method+" "+sn.Name),
					session.StateWord(sn), dur)
			}
			// One pass, unless the filter reads how calls end (~s ~e ~dur).
			o := scan.Options{Final: flt != nil && flt.Volatile(), CallEnded: list}
			_, err = scan.File(path, o, func(fr *scan.Frame) error {
				in.Observe(fr)
				frames++
				if !flt.Match(subj.Fill(&fr.Frame, fr.Env, fr.Call, fr.Time)) {
					return nil
				}
				matched++
				kinds[fr.Dir.String()+" "+fr.Kind.String()]++
				if fr.Call != nil {
					seen.set(fr.CallIndex)
					if fr.Call.State.Ended() {
						list(fr.CallIndex, fr.Call) // a late frame of a call that ended unseen
					}
				}
				return nil
			})
			switch {
			case flt != nil:
				w("frames", "%d read, %d match", frames, matched)
			case frames == 0:
				w("frames", "0 (the journal has its header and nothing else: no frame crossed the wire)")
			default:
				w("frames", "%d read", frames)
			}
			keys := make([]string, 0, len(kinds))
			for k := range kinds {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(out, "  %-16s %d\n", k, kinds[k])
			}
			w("server", "%s %s (protocol %s)", termsafe.Line(in.ServerInfo.Name), termsafe.Line(in.ServerInfo.Version),
				termsafe.Line(in.ProtocolVersion))
			if flt != nil {
				w("calls", "%d of %d", calls, in.Calls)
			} else {
				w("calls", "%d", in.Calls)
			}
			return journalDamage(out, path, err)
		},
	}
	ff.add(cmd.Flags(), "frames and calls")
	cmd.Flags().BoolVar(&summary, "summary", false, "print the summary even on a terminal (where the journal otherwise opens in the inspector)")
	return cmd
}

// bitset is a set of call indexes, a bit each.
type bitset []uint64

func (b bitset) has(i int) bool { return i/64 < len(b) && b[i/64]&(1<<(i%64)) != 0 }

func (b *bitset) set(i int) {
	for len(*b) <= i/64 {
		*b = append(*b, 0)
	}
	(*b)[i/64] |= 1 << (i % 64)
}

// journalDamage reports, on w, the lines of a journal that could not be read,
// once what covers every other line is out. A torn last line alone (what a
// crash or kill -9 leaves) is a note; lines that are not records fail the
// command (exit 1).
func journalDamage(w io.Writer, path string, err error) error {
	var d *session.JournalDamage
	if !errors.As(err, &d) {
		return err
	}
	for _, b := range d.Bad {
		fmt.Fprintf(w, "mcpscope: %s line %d is not a record: %s\n", termsafe.Line(path), b.Line, termsafe.Line(b.Why))
	}
	if more := d.Count - len(d.Bad); more > 0 {
		fmt.Fprintf(w, "mcpscope: … and %d more lines that are not records\n", more)
	}
	if d.Torn > 0 {
		fmt.Fprintf(w, "mcpscope: note: %s line %d is incomplete: the writer stopped mid-line (a crash or kill -9); everything before it was read\n",
			termsafe.Line(path), d.Torn)
	}
	if d.Count == 0 {
		return nil
	}
	return &journalDamageError{path: path, d: d}
}

// journalDamageError: the output is complete but for some lines that were
// not records (exit 1).
type journalDamageError struct {
	path string
	d    *session.JournalDamage
}

func (e *journalDamageError) Error() string {
	n := e.d.Count
	if e.d.Torn > 0 {
		n++
	}
	return fmt.Sprintf("%s: %d line(s) could not be read (listed above); the output covers every other line", e.path, n)
}

func (e *journalDamageError) Is(target error) bool { return target == errServerState }
