package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"mcpscope/artifact/scan"
	"mcpscope/bench"
	"mcpscope/filter"
	"mcpscope/framefilter"
	"mcpscope/internal/render"
	"mcpscope/internal/termsafe"
	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/transport"
)

func newJournalCmd() *cobra.Command {
	var (
		ff              filterFlag
		summary, asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "journal FILE",
		Short: "Summarise a journal file",
		Long: "Summarise a journal file: its target, its calls (listed as they end, with how they ended), and its frames " +
			"by kind. The file is read as a stream, so a journal of any length takes little memory.\n\n" +
			"With --filter, the frames counted are those the filter matches, and a call is listed when one of its frames " +
			"matches; ~s, ~e and ~dur see each call as it ended (the journal is then read twice).\n\n" +
			"On a terminal (stdout and stdin both), without --filter, it opens the journal in the inspector instead, as " +
			"mcpscope open does; --summary prints the summary there too, --json prints it as JSON.",
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
			// The bench's journal row profiles a read-back this way too.
			stopProfile, err := bench.StartCPUProfile()
			if err != nil {
				return err
			}
			defer stopProfile()
			out, path := cmd.OutOrStdout(), args[0]
			if !summary && !asJSON && flt == nil && isTerminal(out) && isTerminal(cmd.InOrStdin()) {
				return openOffline(cmd, path, &connFlags{}, "", nil)
			}
			h, err := journalHeader(cmd.CommandPath(), path)
			if err != nil {
				return err
			}
			if asJSON {
				sum, err := summariseJournal(path, h, flt)
				if jerr := render.Line(out, sum); jerr != nil {
					return jerr
				}
				return journalDamage(cmd.ErrOrStderr(), path, err)
			}
			// One write per 64 KiB, not per call listed (a write(2) each
			// was a tenth of the read-back of a big journal); calls are
			// printed as they end, so memory does not grow with them.
			bw := bufio.NewWriterSize(out, 64<<10)
			defer bw.Flush()
			sum := newJournalSummary(path, h, flt)
			sum.printHead(bw)
			err = sum.read(path, flt, func(c journalCallJSON) { sum.printCall(bw, c) })
			sum.printTail(bw)
			return journalDamage(bw, path, err)
		},
	}
	ff.add(cmd.Flags(), "frames and calls")
	cmd.Flags().BoolVar(&summary, "summary", false, "print the summary even on a terminal (where the journal otherwise opens in the inspector)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as one JSON object, for programs (lines that are not records go to stderr)")
	return cmd
}

// journalSummary is what journal prints: as text, or as JSON with --json.
type journalSummary struct {
	Journal  string                  `json:"journal"`
	Target   string                  `json:"target,omitempty"` // redacted (journal reads redact it)
	Record   bool                    `json:"record,omitempty"` // no header: mcpscope record output
	Started  time.Time               `json:"started,omitzero"`
	Filter   string                  `json:"filter,omitempty"`
	Calls    []journalCallJSON       `json:"calls"` // as they ended
	Frames   int                     `json:"frames"`
	Matched  *int                    `json:"matched,omitempty"` // with a filter: the frames it matches
	Kinds    map[string]int          `json:"kinds"`             // frames (matched) by direction and kind
	Server   protocol.Implementation `json:"server"`
	Protocol string                  `json:"protocolVersion,omitempty"`
	Total    int                     `json:"totalCalls"` // every call in the journal, matched or not
	listed   int
	line     []byte   // printCall's, reused
	durs     []string // printCall's durations under a second, by millisecond, each written once
}

type journalCallJSON struct {
	Key        string  `json:"key"`
	Method     string  `json:"method"`
	Name       string  `json:"name,omitempty"`
	State      string  `json:"state"` // session.StateWord: the TUI's word
	DurationMS float64 `json:"durationMs,omitempty"`
	// Handle: a detached call's record, to rejoin (mcpscope rejoin HANDLE).
	Handle string `json:"handle,omitempty"`
	ended  bool
	dur    time.Duration
}

// summariseJournal reads path once (twice when flt reads how calls end) and
// summarises it, its calls included; err is what reading left unread
// (journalDamage says it).
func summariseJournal(path string, h journal.Header, flt *filter.Filter) (*journalSummary, error) {
	sum := newJournalSummary(path, h, flt)
	err := sum.read(path, flt, func(c journalCallJSON) { sum.Calls = append(sum.Calls, c) })
	return sum, err
}

func newJournalSummary(path string, h journal.Header, flt *filter.Filter) *journalSummary {
	sum := &journalSummary{Journal: path, Calls: []journalCallJSON{}, Kinds: map[string]int{}}
	if h.Format == "" {
		sum.Record = true
	} else {
		sum.Target, sum.Started = h.Target, h.Started
	}
	if flt != nil {
		sum.Filter = flt.String()
	}
	return sum
}

// read reads path, counting into sum and handing each call listed to
// each as it ends.
func (sum *journalSummary) read(path string, flt *filter.Filter, each func(journalCallJSON)) error {
	var (
		in           scan.Info
		matched      int
		seen, listed bitset // calls with a matching frame; calls listed
		subj         = framefilter.NewSubjects()
		kinds        = map[dirKind]int{}
		known        [4][5]int // the kinds a journal holds, counted without a map
	)
	list := func(i int, sn *session.CallSnapshot) {
		if listed.has(i) || flt != nil && !seen.has(i) {
			return
		}
		listed.set(i)
		c := journalCallJSON{Key: sn.Key, Method: sn.Method, Name: sn.Name, State: session.StateWord(sn), Handle: sn.Handle}
		if !sn.Ended.IsZero() {
			c.ended, c.dur = true, sn.Ended.Sub(sn.Started).Round(time.Millisecond) // sn.Duration, without copying sn
			c.DurationMS = float64(c.dur) / float64(time.Millisecond)
		}
		sum.listed++
		each(c)
	}
	// One pass, unless the filter reads how calls end (~s ~e ~dur).
	o := scan.Options{Final: flt != nil && flt.Volatile(), CallEnded: list, Borrow: true, // nothing here keeps a frame's bytes
		NoParams: true, // nor reads a call's params or id (the filter's subject is the frame's)
		// Without a filter, nothing printed reads progress: not how calls
		// end, nor which call a progress notification is of.
		NoProgress: flt == nil}
	_, err := scan.File(path, o, func(fr *scan.Frame) error {
		in.Observe(fr)
		sum.Frames++
		if flt != nil && !flt.Match(subj.Fill(&fr.Frame, fr.Env, fr.Call, fr.Time)) {
			return nil
		}
		matched++
		// Named once at the end, not per frame.
		if fr.Dir < 4 && fr.Kind < 5 {
			known[fr.Dir][fr.Kind]++
		} else {
			kinds[dirKind{fr.Dir, fr.Kind}]++
		}
		if fr.Call != nil {
			seen.set(fr.CallIndex)
			if fr.Call.State.Ended() {
				list(fr.CallIndex, fr.Call) // a late frame of a call that ended unseen
			}
		}
		return nil
	})
	for d := range known {
		for k, n := range known[d] {
			if n > 0 {
				kinds[dirKind{transport.Dir(d), transport.Kind(k)}] += n
			}
		}
	}
	for k, n := range kinds {
		sum.Kinds[k.dir.String()+" "+k.kind.String()] += n
	}
	if flt != nil {
		sum.Matched = &matched
	}
	sum.Server, sum.Protocol, sum.Total = in.ServerInfo, in.ProtocolVersion, in.Calls
	return err
}

// dirKind is a frame's direction and kind, which the summary counts by.
type dirKind struct {
	dir  transport.Dir
	kind transport.Kind
}

// printHead, printCall and printTail write the summary for people.
func (sum *journalSummary) printHead(out io.Writer) {
	w := func(label, format string, a ...any) { fmt.Fprintf(out, "%-8s %s\n", label, fmt.Sprintf(format, a...)) }
	w("journal", "%s", termsafe.Line(sum.Journal))
	if sum.Record {
		w("target", "(no journal header: `mcpscope record` output)")
	} else {
		w("target", "%s", termsafe.Line(sum.Target))
		w("started", "%s", sum.Started.Format(time.RFC3339))
	}
	if sum.Filter != "" {
		w("filter", "%s", termsafe.Line(sum.Filter))
	}
}

func (sum *journalSummary) printCall(out io.Writer, c journalCallJSON) {
	if sum.listed == 1 {
		fmt.Fprintf(out, "%-8s %s\n", "calls", "(as they ended)")
	}
	// As fmt's "  #%-5s %-28s %-10s %s\n", appended into one reused line:
	// a journal lists a call per request, and fmt was a tenth of its read.
	// termsafe.Line works rune by rune, so the method and the name are
	// made safe apart, the space between them kept as is.
	key, method, name := termsafe.Line(c.Key), termsafe.Line(c.Method), termsafe.Line(c.Name)
	b := append(sum.line[:0], "  #"...)
	b = appendPadded(b, 5, utf8.RuneCountInString(key), key)
	b = append(b, ' ')
	b = append(b, method...)
	b = append(b, ' ')
	b = appendPadded(b, 28, utf8.RuneCountInString(method)+1+utf8.RuneCountInString(name), name)
	b = append(b, ' ')
	b = appendPadded(b, 10, utf8.RuneCountInString(c.State), c.State)
	b = append(b, ' ')
	if c.ended {
		b = append(b, sum.durText(c.dur)...)
	} else {
		b = append(b, '-')
	}
	if c.Handle != "" {
		b = append(b, "  as "...)
		b = append(b, termsafe.Line(c.Handle)...)
	}
	b = append(b, '\n')
	out.Write(b) //nolint:errcheck // as fmt.Fprintf's error was: bufio keeps it for Flush
	sum.line = b
}

// durText is d.String(), d a whole number of milliseconds: made once for
// each under a second, the durations most calls take (a string each was
// an allocation a call).
func (sum *journalSummary) durText(d time.Duration) string {
	ms := d / time.Millisecond
	if d%time.Millisecond != 0 || ms < 0 || ms >= 1000 {
		return d.String()
	}
	if sum.durs == nil {
		sum.durs = make([]string, 1000)
	}
	if sum.durs[ms] == "" {
		sum.durs[ms] = d.String()
	}
	return sum.durs[ms]
}

// appendPadded appends s, then spaces up to width when the text of the
// field (runes of it, s's included) is narrower, as fmt's %-*s pads.
func appendPadded(b []byte, width, runes int, s string) []byte {
	b = append(b, s...)
	for ; runes < width; runes++ {
		b = append(b, ' ')
	}
	return b
}

func (sum *journalSummary) printTail(out io.Writer) {
	w := func(label, format string, a ...any) { fmt.Fprintf(out, "%-8s %s\n", label, fmt.Sprintf(format, a...)) }
	switch {
	case sum.Matched != nil:
		w("frames", "%d read, %d match", sum.Frames, *sum.Matched)
	case sum.Frames == 0:
		w("frames", "0 (the journal has its header and nothing else: no frame crossed the wire)")
	default:
		w("frames", "%d read", sum.Frames)
	}
	keys := make([]string, 0, len(sum.Kinds))
	for k := range sum.Kinds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(out, "  %-16s %d\n", k, sum.Kinds[k])
	}
	w("server", "%s %s (protocol %s)", termsafe.Line(sum.Server.Name), termsafe.Line(sum.Server.Version),
		termsafe.Line(sum.Protocol))
	if sum.Filter != "" {
		w("calls", "%d of %d", sum.listed, sum.Total)
	} else {
		w("calls", "%d", sum.Total)
	}
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
	var d *journal.Damage
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
	d    *journal.Damage
}

func (e *journalDamageError) Error() string {
	n := e.d.Count
	if e.d.Torn > 0 {
		n++
	}
	return fmt.Sprintf("%s: %d line(s) could not be read (listed above); the output covers every other line", e.path, n)
}

func (e *journalDamageError) Is(target error) bool { return target == errServerState }
