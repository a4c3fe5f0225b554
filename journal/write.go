package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"mcpscope/internal/userfile"
	"mcpscope/internal/xdg"
	"mcpscope/transport"
)

// Writer is an append-only JSONL file, one per session. Append encodes a
// frame into a queue and fixes its place in the file at once; one writer
// goroutine drains whatever is queued into a single write(2). A write(2)
// to a file completes even when the process is killed during it, so a
// crash or kill -9 loses at most the frames queued behind the write in
// progress: the frames that arrived during one write.
type Writer struct {
	path     string
	f        *os.File
	seekable bool        // a regular file: frames can be read back from it
	info     os.FileInfo // the file's, to read it back by path once closed

	mu       sync.Mutex
	moved    *sync.Cond // signalled when the queue is taken and when a write ends
	pending  []byte     // encoded lines waiting for the writer
	spare    []byte     // the buffer the last write used, for reuse
	inflight []byte     // the lines being written now (readable under mu)
	size     int64      // bytes in the file
	end      int64      // offset after the last line appended (size + inflight + pending)
	err      error
	closed   bool
	wake     chan struct{}
	done     chan struct{} // closed when the writer is gone
	pace     *time.Timer   // wakes the writer Pace after the first frame queued
	paced    bool          // on mu: pace is armed
	memo     recordMemo    // on mu
}

// Bounds of the writer.
const (
	// QueueBytes is how many encoded bytes may wait for the writer
	// before Append waits for it (a disk slower than the server). The
	// frames waiting are what a kill -9 can lose: those that arrived
	// during one write, never more than this many bytes of them (and one
	// frame). One MiB is still one write(2) per thousands of frames; a
	// bigger queue only makes the buffers a long flood leaves behind
	// bigger (at 4 MiB the queue and its spare grew to ~12 MiB of heap
	// between 1M and 3M frames, the TUI's growth).
	QueueBytes = 1 << 20
	// keepBuffer is the largest buffer kept for reuse after a write, so
	// one huge frame does not stay pinned (the queue's own doubling
	// reaches twice QueueBytes).
	keepBuffer = 2 << 20
	// CloseWait bounds how long Close waits for queued frames to
	// reach the file.
	CloseWait = 10 * time.Second
	// Pace is the longest a frame waits in the queue before the
	// writer is woken for it, and journalWakeBytes the queue that wakes
	// it at once. Woken for every frame that found the queue empty, the
	// writer wrote a frame or two at a time under a flood, and the
	// wake-ups (a goroutine hand-off each, on ingest's way) and write(2)s
	// cost more than the encoding. A kill -9 loses the frames queued: at
	// most Pace's worth (or journalWakeBytes), and one write's.
	Pace             = time.Millisecond
	journalWakeBytes = 256 << 10
)

// DefaultDir is $XDG_STATE_HOME/mcpscope/journal (or ~/.local/state/…).
func DefaultDir() string {
	return filepath.Join(xdg.StateDir(), "journal")
}

// NewPath names a fresh journal file in dir.
func NewPath(dir string, now time.Time) string {
	return filepath.Join(dir, fmt.Sprintf("%s-%d.jsonl", now.UTC().Format("20060102-150405.000"), os.Getpid()))
}

// Create opens path for appending (0600, parent dirs 0700) and
// writes the header line when the file is new. A path that is a device or
// a FIFO (--journal /dev/null) is written through, never replaced: frames
// cannot be read back from it, so the session keeps what a session without
// a journal keeps.
func Create(path, target string) (*Writer, error) {
	f, size, seekable, err := openJournalFile(path, target)
	if err != nil {
		return nil, err
	}
	j := &Writer{f: f, path: path, size: size, end: size, seekable: seekable, wake: make(chan struct{}, 1), done: make(chan struct{})}
	if seekable {
		j.info, _ = f.Stat()
	}
	j.moved = sync.NewCond(&j.mu)
	j.pace = time.AfterFunc(time.Hour, func() {
		j.mu.Lock()
		j.paced = false
		j.mu.Unlock()
		j.signal()
	})
	j.pace.Stop()
	go j.writer()
	return j, nil
}

// signal wakes the writer.
func (j *Writer) signal() {
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

// OpenAppend opens path as Create does and returns the file,
// positioned to append, for a writer of its own (the proxy's recorder).
func OpenAppend(path, target string) (*os.File, error) {
	f, _, _, err := openJournalFile(path, target)
	return f, err
}

// openJournalFile opens path for appending (userfile.Append: a regular
// file read-write, created when missing; a device or FIFO write-only) and
// writes the header when the file is empty.
func openJournalFile(path, target string) (f *os.File, size int64, seekable bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, 0, false, &FileError{Path: path, Err: err}
	}
	f, seekable, err = userfile.Append(path, 0o600) // read-write when seekable: paging back
	if err != nil {
		return nil, 0, false, &FileError{Path: path, Err: err}
	}
	if seekable {
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, 0, false, &FileError{Path: path, Err: err}
		}
		size = st.Size()
	}
	if size == 0 {
		h, _ := json.Marshal(Header{Format: Format, Started: time.Now(), Target: target, PID: os.Getpid()})
		n, err := f.Write(append(h, '\n'))
		if err != nil {
			f.Close()
			return nil, 0, false, &FileError{Path: path, Err: err}
		}
		size = int64(n)
	}
	return f, size, seekable, nil
}

// FileError is a journal that could not be created or written.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return "journal " + e.Path + ": " + e.Err.Error() }

func (e *FileError) Unwrap() error { return e.Err }

// Seekable reports a journal in a regular file: frames can be read back
// from it (ReadBack), unlike one written to a device or a FIFO.
func (j *Writer) Seekable() bool { return j.seekable }

// Path is where the journal lives.
func (j *Writer) Path() string { return j.path }

// Append queues one frame for the writer and returns where its line starts
// in the file and its length. The first write failure is kept and
// returned from then on; the session reports it once and goes on without
// a journal.
func (j *Writer) Append(seq uint64, f transport.Frame) (off int64, n int, err error) {
	return j.AppendFrame(seq, &f)
}

// AppendFrame is Append without copying the frame (ingest's way).
func (j *Writer) AppendFrame(seq uint64, f *transport.Frame) (off int64, n int, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for len(j.pending) >= QueueBytes && j.err == nil && !j.closed {
		j.moved.Wait() // the disk is behind: wait for the writer to take the queue
	}
	if j.err != nil {
		return -1, 0, j.err
	}
	if j.closed {
		return -1, 0, &FileError{Path: j.path, Err: os.ErrClosed}
	}
	was := len(j.pending)
	j.pending = j.memo.append(j.pending, seq, f)
	n = len(j.pending) - was
	off = j.end
	j.end += int64(n)
	switch {
	case was < journalWakeBytes && len(j.pending) >= journalWakeBytes:
		j.signal()
	case !j.paced:
		j.paced = true
		j.pace.Reset(Pace)
	}
	return off, n, nil
}

// writer drains the queue, one write(2) for everything queued.
func (j *Writer) writer() {
	defer close(j.done)
	for {
		j.mu.Lock()
		for len(j.pending) == 0 && !j.closed {
			j.mu.Unlock()
			<-j.wake
			j.mu.Lock()
		}
		if len(j.pending) == 0 {
			j.mu.Unlock()
			return
		}
		buf := j.pending
		j.pending, j.spare = j.spare[:0], nil
		j.inflight = buf
		j.moved.Broadcast()
		j.mu.Unlock()

		_, err := j.f.Write(buf)

		j.mu.Lock()
		j.size += int64(len(buf))
		j.inflight = nil
		if cap(buf) <= keepBuffer {
			j.spare = buf[:0]
		}
		if err != nil && j.err == nil {
			j.err = &FileError{Path: j.path, Err: err}
		}
		j.moved.Broadcast()
		j.mu.Unlock()
	}
}

// Flush waits until every frame appended so far is in the file (or the
// journal failed) and returns the journal's error, if any.
func (j *Writer) Flush() error {
	j.signal()
	j.mu.Lock()
	defer j.mu.Unlock()
	want := j.end
	for j.size < want && j.err == nil {
		j.moved.Wait()
	}
	return j.err
}

// WrittenTo wakes the writer and waits until the file holds the
// journal's first end bytes, the journal failed or closed, or wait passed;
// it reports whether they are in.
func (j *Writer) WrittenTo(end int64, wait time.Duration) bool {
	j.signal()
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.size >= end {
		return true
	}
	late := false
	t := time.AfterFunc(wait, func() {
		j.mu.Lock()
		late = true
		j.moved.Broadcast()
		j.mu.Unlock()
	})
	defer t.Stop()
	for j.size < end && j.err == nil && !late && !j.closed {
		j.moved.Wait()
	}
	return j.size >= end
}

// Close writes what is queued (waiting at most CloseWait) and
// closes the file.
func (j *Writer) Close() error {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return nil
	}
	j.closed = true
	j.pace.Stop()
	j.moved.Broadcast()
	j.mu.Unlock()
	j.signal()
	t := time.NewTimer(CloseWait)
	defer t.Stop()
	var err error
	select {
	case <-j.done:
	case <-t.C:
		err = &FileError{Path: j.path, Err: fmt.Errorf("the disk took longer than %s to take the last frames; some may be missing", CloseWait)}
	}
	if cerr := j.f.Close(); err == nil && cerr != nil {
		err = &FileError{Path: j.path, Err: cerr}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if err == nil {
		err = j.err
	}
	return err
}

// ReadBack reads len(p) bytes of the journal at off: from the file, or from
// the queue for lines the writer has not written yet.
func (j *Writer) ReadBack(p []byte, off int64) error {
	j.mu.Lock()
	size := j.size
	if off+int64(len(p)) > size {
		// Some of it is still queued: copy that part while the queue holds.
		from := max(off, size)
		k := int(from - off)
		if !copyQueued(p[k:], from-size, j.inflight, j.pending) {
			j.mu.Unlock()
			return fmt.Errorf("journal %s: bytes %d-%d are not in it", j.path, off, off+int64(len(p)))
		}
		p = p[:k]
	}
	j.mu.Unlock()
	if len(p) == 0 {
		return nil
	}
	_, err := j.f.ReadAt(p, off)
	if errors.Is(err, os.ErrClosed) {
		err = j.readClosed(p, off)
	}
	if err != nil {
		return fmt.Errorf("read journal %s at %d: %w", j.path, off, err)
	}
	return nil
}

// readClosed reads the journal back once it is closed (the session closed,
// and a reader goes on with the frames that came in meanwhile: record
// prints them), from its path while that names the same file.
func (j *Writer) readClosed(p []byte, off int64) error {
	f, err := os.Open(j.path)
	if err != nil {
		return err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || j.info == nil || !os.SameFile(st, j.info) {
		return errors.New("the journal is closed and its path names another file now")
	}
	_, err = f.ReadAt(p, off)
	return err
}

// copyQueued fills p from position at of the queue, which is inflight
// followed by pending.
func copyQueued(p []byte, at int64, inflight, pending []byte) bool {
	if at+int64(len(p)) > int64(len(inflight)+len(pending)) {
		return false
	}
	if at < int64(len(inflight)) {
		n := copy(p, inflight[at:])
		p, at = p[n:], 0
	} else {
		at -= int64(len(inflight))
	}
	copy(p, pending[at:])
	return true
}
