package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"mcpscope/artifact/scan"
	"mcpscope/session"
)

// journalHeader reads path's header, with the errors a person can act on: a
// file that is missing, a folder, or not a journal is the command line's
// mistake (exit 2), named with what the file holds instead.
//
// A journal is a file whose first line is a journal header or, for
// `mcpscope record` output, a journal record (session.ReadJournal decides).
func journalHeader(cmd *cobra.Command, path string) (session.Header, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return session.Header{}, usagef(cmd.CommandPath(), "%s is a folder, not a journal: give one journal file (journals are in %s)",
			path, session.DefaultJournalDir())
	}
	h, err := scan.Header(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return h, usagef(cmd.CommandPath(), "%s does not exist", path)
	case errors.Is(err, session.ErrNotJournal):
		return h, notJournal(cmd, path)
	case errors.Is(err, scan.ErrEmpty):
		return h, usagef(cmd.CommandPath(), "%s holds no frames and no journal header: it is empty", path)
	}
	return h, err
}

// notJournal is the usage error for a file that is not a journal, quoting
// the start of its first line.
func notJournal(cmd *cobra.Command, path string) error {
	return usagef(cmd.CommandPath(), "%s is not an mcpscope journal: its first line%s is neither a journal header nor a journal record (journals are in %s)",
		path, firstLineExcerpt(path), session.DefaultJournalDir())
}

// firstLineExcerpt is ` (starts "…")`: what a file that is not a journal
// holds, at most 40 bytes of it, quoted ("" when it cannot be read).
func firstLineExcerpt(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := bufio.NewReader(f).Peek(41)
	line, _, _ := strings.Cut(string(b), "\n")
	if line == "" {
		return ""
	}
	more := ""
	if len(line) > 40 {
		line, more = strings.ToValidUTF8(line[:40], ""), "…"
	}
	return fmt.Sprintf(" (%q%s)", line, more)
}
