package statestore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// markPath is where handle's Mark lives, beside its record (List reads
// *.json only).
func markPath(recordPath string) string { return strings.TrimSuffix(recordPath, ".json") + ".mark" }

// markCompactAt is the size past which a mark file is written afresh with
// its newest mark alone.
const markCompactAt = 64 << 10

// Mark appends m to the mark file beside the record, one line in one
// write, not synced: it must survive a kill -9 of this process (the page
// cache does), and costs no disk flush per step. An append, not a
// temporary file renamed over the last mark: on ext4 a rename over an
// existing file starts the new file's writeback and took ~2 ms a step
// under a progress flood; the append takes microseconds. A reader takes
// the newest whole line (a line torn by a crash mid-write is skipped), and
// past markCompactAt the file is replaced by one holding m alone.
func (fs *FileStore) Mark(handle string, m Mark) error {
	p, err := fs.path(handle)
	if err != nil {
		return err
	}
	if _, err := os.Stat(p); err != nil {
		return nil // no record: the call ended, nothing to mark
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	// A newline before as well as after: a line a crash tore ends there,
	// and this one reads whole.
	b = append(append([]byte{'\n'}, b...), '\n')
	f, err := os.OpenFile(markPath(p), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("state store %s: %w", fs.Dir, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("state store write %s: %w", f.Name(), err)
	}
	size, serr := f.Seek(0, io.SeekCurrent)
	if err := f.Close(); err != nil {
		return fmt.Errorf("state store write %s: %w", markPath(p), err)
	}
	if serr == nil && size > markCompactAt {
		return fs.compactMark(handle, markPath(p), b)
	}
	return nil
}

// compactMark replaces the mark file at path by one holding line alone,
// renamed into place so that a reader sees the old file or the new.
func (fs *FileStore) compactMark(handle, path string, line []byte) error {
	tmp, err := os.CreateTemp(fs.Dir, "."+handle+".*.mark")
	if err != nil {
		return fmt.Errorf("state store %s: %w", fs.Dir, err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(line); err != nil {
		tmp.Close()
		return fmt.Errorf("state store write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// applyMarks applies the marks in the file at path to d: each whole line
// that reads as a Mark (Apply keeps the newest).
func applyMarks(d *Detached, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	for line := range bytes.SplitSeq(b, []byte{'\n'}) {
		var m Mark
		if len(line) > 0 && json.Unmarshal(line, &m) == nil {
			d.Apply(m)
		}
	}
}
