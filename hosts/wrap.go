package hosts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"mcpscope/internal/userfile"
)

// Wrapping a stdio entry makes its host start mcpscope in place of the
// server: command becomes mcpscope's own path, and args become
// proxy --name NAME -- CMD ARGS…, with the original command and arguments
// kept whole after --. The edit is textual: only the command's value and the
// start of the args array change, so every other key, comment and blank of
// the file stays as it was (JSONC files included).
//
// Before each change the whole file is copied next to it
// (<file>.mcpscope-backup-<time>, mode 0600), and the wrap is recorded in
// $XDG_STATE_HOME/mcpscope/wrapped.json: host, name, file, the entry's keys
// and the backup's path, and no value of the entry, so no secret leaves the
// host's directory. Unwrap puts back the entry's bytes from that backup when
// the wrapped entry is still exactly what wrap wrote; otherwise (the host or a
// person edited it since) it undoes wrap's edit in place and keeps the rest.

// Change is what Wrap or Unwrap did.
type Change struct {
	File    string
	Backup  string   // the file as it was before this change
	Runs    []string // what the entry runs now: command and arguments
	Exact   bool     // Unwrap: the entry is byte for byte what it was before wrap
	Warning string   // the file changed, but something around it did not work out
}

// RefusedError is a wrap or unwrap that changed nothing, and why.
type RefusedError struct{ Why string }

func (e *RefusedError) Error() string { return e.Why + "; nothing changed" }

func refuse(format string, a ...any) error { return &RefusedError{Why: fmt.Sprintf(format, a...)} }

// Wrap rewrites s's entry in its host's file to run self (mcpscope's
// absolute path) as proxy --name NAME -- CMD ARGS….
func Wrap(s Server, self string) (Change, error) {
	switch {
	case s.Host == Mcpscope:
		return Change{}, refuse("%q is one of mcpscope's own servers (%s): no host starts it, so there is nothing to wrap", s.Name, s.File)
	case s.Kind != "stdio":
		return Change{}, refuse("%q in %s is an %s server: wrapping HTTP servers is not supported yet (only stdio entries, which the host starts itself)", s.Name, s.File, s.Kind)
	case s.Wrapped != nil:
		return Change{}, refuse("%q in %s already runs through mcpscope proxy", s.Name, s.File)
	case !filepath.IsAbs(self):
		return Change{}, fmt.Errorf("mcpscope's own path %q is not absolute; the host could not start it", self)
	}
	f, err := openEntry(s)
	if err != nil {
		return Change{}, err
	}
	e := f.e
	if e.decodeErr != nil || e.command == "" {
		return Change{}, refuse("%s: the entry %q is not a plain stdio entry any more (%v)", s.File, s.Name, e.decodeErr)
	}
	edits, err := wrapEdits(e, self, s.Name)
	if err != nil {
		return Change{}, refuse("%s: the entry %q: %v", s.File, s.Name, err)
	}
	out := splice(f.src, edits)
	runs := append([]string{self, "proxy", "--name", s.Name, "--", e.command}, e.args...)
	if err := checkEntry(s.File, out, s.path, runs); err != nil {
		return Change{}, fmt.Errorf("mcpscope made a wrong edit of %s (%v); nothing changed: please report this", s.File, err)
	}
	now := time.Now()
	backup, err := f.write(out, now)
	if err != nil {
		return Change{}, err
	}
	c := Change{File: s.File, Backup: backup, Runs: runs}
	rec := WrapRecord{Host: s.Host, Name: s.Name, File: s.File, Path: s.path, Backup: backup, At: now.UTC().Truncate(time.Second)}
	if err := updateRecords(func(rs []WrapRecord) []WrapRecord { return append(dropRecord(rs, s.File, s.path), rec) }); err != nil {
		c.Warning = fmt.Sprintf("the wrap is not recorded (%v): unwrap will look for the backup next to the file", err)
	}
	return c, nil
}

// Unwrap puts s's entry back as it was before Wrap.
func Unwrap(s Server) (Change, error) {
	if s.Wrapped == nil {
		return Change{}, refuse("%q in %s does not run through mcpscope proxy", s.Name, s.File)
	}
	f, err := openEntry(s)
	if err != nil {
		return Change{}, err
	}
	e := f.e
	inner, ok := proxied(e.command, e.args)
	if e.decodeErr != nil || !ok {
		return Change{}, refuse("%s: the entry %q no longer runs mcpscope proxy --name NAME -- …: edit it by hand (the backups %s* are copies from before each change)", s.File, s.Name, s.File+BackupPrefix)
	}
	cur := f.src[e.start:e.end]
	var out []byte
	c := Change{File: s.File, Runs: inner}
	for _, b := range backupsOf(s) {
		if orig, ok := originalIn(s.File, b, s.path, e.command, e.args[2], cur); ok {
			out, c.Exact = splice(f.src, []edit{{e.start, e.end, string(orig)}}), true
			break
		}
	}
	if out == nil {
		edits, err := unwrapEdits(f.src, e, inner)
		if err != nil {
			return Change{}, refuse("%s: the entry %q: %v", s.File, s.Name, err)
		}
		out = splice(f.src, edits)
	}
	if err := checkEntry(s.File, out, s.path, inner); err != nil {
		return Change{}, fmt.Errorf("mcpscope made a wrong edit of %s (%v); nothing changed: please report this", s.File, err)
	}
	if c.Backup, err = f.write(out, time.Now()); err != nil {
		return Change{}, err
	}
	if err := updateRecords(func(rs []WrapRecord) []WrapRecord { return dropRecord(rs, s.File, s.path) }); err != nil {
		c.Warning = fmt.Sprintf("the wrap record was not removed (%v)", err)
	}
	return c, nil
}

// fileEntry is a host file read for a change, and the entry in it.
type fileEntry struct {
	host       string
	name, real string // as named, and with symlinks resolved (dotfile managers)
	mode       fs.FileMode
	src        []byte
	e          *entryText
}

func openEntry(s Server) (*fileEntry, error) {
	real, err := filepath.EvalSymlinks(s.File)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %w", s.File, err)
	}
	info, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %w", s.File, err)
	}
	src, err := os.ReadFile(real)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", s.File, err)
	}
	e, err := findEntry(s.File, src, s.path)
	if err != nil {
		return nil, refuse("cannot parse %s (%v): mcpscope edits only files it can read whole; fix the file (%s cannot read it either) and try again", s.File, err, Title(s.Host))
	}
	if e == nil {
		return nil, refuse("%s has no entry %q any more (it changed since it was read): run mcpscope servers", s.File, s.Name)
	}
	return &fileEntry{host: s.Host, name: s.File, real: real, mode: info.Mode().Perm(), src: src, e: e}, nil
}

// write backs the file up next to itself, then replaces it with out
// atomically, keeping its mode. It returns the backup's path.
func (f *fileEntry) write(out []byte, now time.Time) (string, error) {
	backup, err := writeBackup(f.name, f.src, now)
	if err != nil {
		return "", fmt.Errorf("cannot keep a backup of %s (%w); nothing changed", f.name, err)
	}
	// The hosts rewrite their files themselves (Claude Code often): do not
	// write over a change made since the file was read.
	if cur, err := os.ReadFile(f.real); err != nil || !bytes.Equal(cur, f.src) {
		os.Remove(backup)
		return "", fmt.Errorf("%s changed while mcpscope was editing it (is %s writing it?); nothing changed: try again, or quit it first", f.name, Title(f.host))
	}
	if err := writeAtomic(f.real, out, f.mode); err != nil {
		return "", fmt.Errorf("cannot write %s (%w); nothing changed (%s is a copy of it)", f.name, err, backup)
	}
	return backup, nil
}

// BackupPrefix starts the name of a backup, after the file's own name.
const BackupPrefix = ".mcpscope-backup-"

// writeBackup copies data to <file>.mcpscope-backup-<time>, never over an
// existing file.
func writeBackup(file string, data []byte, now time.Time) (string, error) {
	base := file + BackupPrefix + now.Format("20060102-150405")
	for i := 1; i < 100; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(name)
			return "", err
		}
		return name, nil
	}
	return "", fmt.Errorf("too many backups named %s*", base)
}

// writeAtomic writes data to path the one way mcpscope writes a file the
// user's setup names (userfile): a regular file is replaced atomically,
// keeping its mode; a symlink's target likewise; a device or FIFO is
// written through.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	return userfile.Write(path, mode, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// wrapEdits turn the entry e into proxy --name NAME -- CMD ARGS…: the
// command's value becomes self, and the proxy's words go in front of the
// args, in the array's own layout (one per line when it has one per line).
func wrapEdits(e *entryText, self, name string) ([]edit, error) {
	if e.cmd == nil {
		return nil, errors.New(`its "command" is not a string`)
	}
	words := []string{"proxy", "--name", name, "--", e.command}
	edits := []edit{{e.cmd.start, e.cmd.end, quote(self)}}
	switch {
	case e.argsErr != nil:
		return nil, e.argsErr
	case e.argsAt == nil:
		return append(edits, e.addArgs(joinQuoted(words))), nil
	case len(e.elems) == 0:
		at := e.argsAt.start + 1
		return append(edits, edit{at, at, joinQuoted(words)}), nil
	}
	first := e.elems[0].start
	sep := lineBreak(e.layout, first)
	var b strings.Builder
	for _, w := range words {
		b.WriteString(quote(w) + "," + sep)
	}
	return append(edits, edit{first, first, b.String()}), nil
}

// unwrapEdits undo wrapEdits in place: the command's value becomes the
// server's command again and the proxy's words leave the args.
func unwrapEdits(src []byte, e *entryText, inner []string) ([]edit, error) {
	if e.cmd == nil || e.argsAt == nil || len(e.elems) < 5 {
		return nil, errors.New("it is not in the shape wrap leaves")
	}
	edits := []edit{{e.cmd.start, e.cmd.end, quote(inner[0])}}
	els := e.elems
	if len(els) > 5 {
		return append(edits, edit{els[0].start, els[5].start, ""}), nil
	}
	// Only the proxy's words: an empty array, keeping any comment in it.
	if len(bytes.TrimSpace(src[e.argsAt.start+1:els[0].start])) == 0 && len(bytes.TrimSpace(src[els[4].end:e.argsAt.end-1])) == 0 {
		return append(edits, edit{e.argsAt.start, e.argsAt.end, "[]"}), nil
	}
	return append(edits, edit{els[0].start, els[4].end, ""}), nil
}

// lineBreak is what goes between two members or elements before offset at:
// a newline and the indentation there, or a space on a single line.
func lineBreak(b []byte, at int) string {
	j := at
	for j > 0 && (b[j-1] == ' ' || b[j-1] == '\t') {
		j--
	}
	if j == 0 || b[j-1] != '\n' {
		return " "
	}
	j--
	if j > 0 && b[j-1] == '\r' {
		j--
	}
	return string(b[j:at])
}

func joinQuoted(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = quote(w)
	}
	return strings.Join(q, ", ")
}

// checkEntry reads out (the new text of file) back and checks that the
// entry at path runs argv.
func checkEntry(file string, out []byte, path []string, argv []string) error {
	e, err := findEntry(file, out, path)
	switch {
	case err != nil:
		return err
	case e == nil:
		return errors.New("the entry is gone")
	case e.decodeErr != nil:
		return e.decodeErr
	}
	if got := append([]string{e.command}, e.args...); !slices.Equal(got, argv) {
		return fmt.Errorf("the entry runs %q, not %q", got, argv)
	}
	return nil
}

// backupsOf are the backups that may hold s's entry from before wrap: the
// recorded one, then the others next to the file, newest first.
func backupsOf(s Server) []string {
	var out []string
	if s.Wrapped.Backup != "" {
		out = append(out, s.Wrapped.Backup)
	}
	dir, base := filepath.Split(s.File)
	ents, _ := os.ReadDir(dir)
	var more []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), base+BackupPrefix) {
			more = append(more, filepath.Join(dir, e.Name()))
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(more)))
	for _, m := range more {
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// originalIn is the entry at path in backup (a copy of file) when
// wrapping it (as self, under name) gives exactly the wrapped entry cur.
func originalIn(file, backup string, path []string, self, name string, cur []byte) ([]byte, bool) {
	src, err := os.ReadFile(backup)
	if err != nil {
		return nil, false
	}
	e, err := findEntry(file, src, path)
	if err != nil || e == nil {
		return nil, false
	}
	edits, err := wrapEdits(e, self, name)
	if err != nil {
		return nil, false
	}
	for i := range edits {
		edits[i].start -= e.start
		edits[i].end -= e.start
	}
	if !bytes.Equal(splice(src[e.start:e.end], edits), cur) {
		return nil, false
	}
	return src[e.start:e.end], true
}

// updateRecords rewrites the records through change.
func updateRecords(change func([]WrapRecord) []WrapRecord) error {
	rs, err := loadRecords()
	if err != nil {
		return err
	}
	rs = change(rs)
	b, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(RecordsFile()), 0o700); err != nil {
		return err
	}
	return writeAtomic(RecordsFile(), append(b, '\n'), 0o600)
}

func dropRecord(rs []WrapRecord, file string, path []string) []WrapRecord {
	return slices.DeleteFunc(rs, func(r WrapRecord) bool { return r.File == file && slices.Equal(r.Path, path) })
}
