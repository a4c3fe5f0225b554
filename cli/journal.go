package cli

import (
	"fmt"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/artifact/scan"
	"mcpscope/internal/termsafe"
	"mcpscope/session"
)

func newJournalCmd() *cobra.Command {
	var ff filterFlag
	cmd := &cobra.Command{
		Use:   "journal FILE",
		Short: "Summarise a journal file",
		Long: "Summarise a journal file: its target, its calls (listed as they end, with how they ended), and its frames " +
			"by kind. The file is read as a stream, so a journal of any length takes little memory.\n\n" +
			"With --filter, the frames counted are those the filter matches, and a call is listed when one of its frames " +
			"matches; ~s, ~e and ~dur see each call as it ended (the journal is then read twice).",
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
			h, err := scan.Header(path)
			if err != nil {
				return err
			}
			w := func(label, format string, a ...any) { fmt.Fprintf(out, "%-8s %s\n", label, fmt.Sprintf(format, a...)) }
			w("journal", "%s", termsafe.Line(path))
			w("target", "%s", termsafe.Line(h.Target))
			w("started", "%s", h.Started.Format(time.RFC3339))
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
			if flt != nil {
				w("frames", "%d of %d match", matched, frames)
			} else {
				w("frames", "%d", frames)
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
			return tornNote(cmd, path, err)
		},
	}
	ff.add(cmd.Flags(), "frames and calls")
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
