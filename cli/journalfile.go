package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"

	"mcpscope/artifact/scan"
	"mcpscope/internal/shell"
	"mcpscope/journal"
)

// journalHeader reads path's header, with the errors a person can act on: a
// file that is missing, a folder, or not a journal is the command line's
// mistake (exit 2), named with what the file holds instead.
//
// A journal is a file whose first line is a journal header or, for
// `mcpscope record` output, a journal record (journal.Read decides). name
// is the command's (cmd.CommandPath()), for the error.
func journalHeader(name, path string) (journal.Header, error) {
	if err := journalFile(name, path); err != nil {
		return journal.Header{}, err
	}
	h, err := scan.Header(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return h, usagef(name, "%s does not exist", path)
	case errors.Is(err, journal.ErrNotJournal):
		return h, notJournal(name, path)
	case errors.Is(err, scan.ErrEmpty):
		return h, usagef(name, "%s holds no frames and no journal header: it is empty", path)
	}
	return h, err
}

// journalFile refuses, as the command line's mistake (exit 2), a journal
// path that is not a regular file: a folder, standard input ("-"), a FIFO,
// a device (/dev/zero) or a socket. A journal is read more than once (its
// header, then its frames, then paged back from its index) and to its end,
// so a pipe would be read once and then hang, and a device never end. A
// symlink to a journal is followed; a path that does not exist is left to
// the reader, which says so. name is the command's, for the error.
func journalFile(name, path string) error {
	if path == "-" {
		return usagef(name, "a journal is read from a file, not from standard input (it is read more than once): save it to a file first, then give its path")
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return nil
	case fi.IsDir():
		return usagef(name, "%s is a folder, not a journal: give one journal file (journals are in %s)",
			path, journal.DefaultDir())
	case !fi.Mode().IsRegular():
		return usagef(name, "%s is %s, not a regular file: a journal is read more than once and to its end; copy it to a file first (cat %s > saved.jsonl)",
			path, fileKind(fi.Mode()), shell.Quote(path))
	}
	return nil
}

// fileKind names what a path that is not a regular file is.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// notJournal is the usage error for a file that is not a journal, quoting
// the start of its first line.
func notJournal(name, path string) error {
	return usagef(name, "%s is not an mcpscope journal: its first line%s is neither a journal header nor a journal record (journals are in %s)",
		path, firstLineExcerpt(path), journal.DefaultDir())
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
