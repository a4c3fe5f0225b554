package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/internal/termsafe"
	"mcpscope/session"
)

func newJournalCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "journal FILE",
		Short:   "Summarise a journal file",
		GroupID: groupSessions,
		Example: "  mcpscope journal ~/.local/state/mcpscope/journal/20261123-101500.000-4242.jsonl",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef(cmd.CommandPath(), "journal needs one file path")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return summariseJournal(cmd.OutOrStdout(), cmd.CommandPath(), args[0])
		},
	}
}

// summariseJournal reads a journal back (time linear in its size, memory
// bounded by the store's index) and prints what it holds: the frames
// read, by kind, the calls, and every line that is not a record.
func summariseJournal(out io.Writer, cmdPath, path string) error {
	s, h, err := session.Load(path)
	var damage *session.JournalDamage
	switch {
	case errors.Is(err, session.ErrNotJournal):
		return usagef(cmdPath, "%s is not an mcpscope journal: its first line is neither a journal header nor a journal record (journals are in %s)",
			path, session.DefaultJournalDir())
	case errors.Is(err, os.ErrNotExist):
		return usagef(cmdPath, "%s does not exist", path)
	case err != nil && !errors.As(err, &damage):
		return fmt.Errorf("read journal %s: %w", path, err)
	}
	defer s.Close()
	st := s.Store()
	frames := st.Len()
	if frames == 0 && damage == nil {
		if h.Format == "" {
			return usagef(cmdPath, "%s holds no frames and no journal header: it is empty", path)
		}
		fmt.Fprintf(out, "journal %s\ntarget  %s\nstarted %s\nframes  0 (the journal has its header and nothing else: no frame crossed the wire)\n",
			path, termsafe.Line(h.Target), h.Started.Format(time.RFC3339))
		return nil
	}
	fmt.Fprintf(out, "journal %s\n", path)
	if h.Format != "" {
		fmt.Fprintf(out, "target  %s\nstarted %s\n", termsafe.Line(h.Target), h.Started.Format(time.RFC3339))
	} else {
		fmt.Fprintf(out, "target  (no journal header: `mcpscope record` output)\n")
	}
	fmt.Fprintf(out, "frames  %d read\n", frames)
	kinds := map[string]int{}
	st.Scan(0, 0, func(e session.Entry) bool {
		if e.Kind != 0 {
			kinds[e.Dir.String()+" "+e.Kind.String()]++
		}
		return true
	})
	keys := make([]string, 0, len(kinds))
	for k := range kinds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(out, "  %-16s %d\n", k, kinds[k])
	}
	in := s.Info()
	fmt.Fprintf(out, "server  %s %s (protocol %s)\ncalls   %d\n", termsafe.Line(in.ServerInfo.Name),
		termsafe.Line(in.ServerInfo.Version), termsafe.Line(in.ProtocolVersion), in.Calls)
	for _, c := range s.Calls() {
		sn := c.Snapshot()
		fmt.Fprintf(out, "  #%-5s %-28s %-10s %s\n", termsafe.Line(sn.Key), termsafe.Line(sn.Method+" "+sn.Name), sn.State,
			sn.Duration(sn.Started).Round(time.Millisecond))
	}
	if damage == nil {
		return nil
	}
	for _, b := range damage.Bad {
		fmt.Fprintf(out, "line %d is not a record: %s\n", b.Line, termsafe.Line(b.Why))
	}
	if more := damage.Count - len(damage.Bad); more > 0 {
		fmt.Fprintf(out, "… and %d more lines that are not records\n", more)
	}
	if damage.Torn > 0 {
		fmt.Fprintf(out, "line %d is incomplete: the writer stopped mid-line (a crash or kill -9)\n", damage.Torn)
	}
	return &journalDamageError{path: path, d: damage}
}

// journalDamageError: the summary is printed, but some lines were not
// records (exit 1).
type journalDamageError struct {
	path string
	d    *session.JournalDamage
}

func (e *journalDamageError) Error() string {
	n := e.d.Count
	if e.d.Torn > 0 {
		n++
	}
	return fmt.Sprintf("%s: %d line(s) could not be read (listed above); the summary covers every other line", e.path, n)
}

func (e *journalDamageError) Is(target error) bool { return target == errServerState }
