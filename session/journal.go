package session

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"mcpscope/internal/termsafe"
	"mcpscope/transport"
)

// JournalFormat names the first line of every journal file.
const JournalFormat = "mcpscope-journal/1"

// Record is one journal line: a frame with its sequence number. Raw holds the
// exact bytes when they are UTF-8, B64 otherwise, so nothing is rewritten.
type Record struct {
	Seq  uint64          `json:"seq"`
	Time time.Time       `json:"t"`
	Dir  string          `json:"dir"`
	Kind string          `json:"kind"`
	Raw  *string         `json:"raw,omitempty"`
	B64  string          `json:"b64,omitempty"`
	Meta *transport.Meta `json:"meta,omitempty"`
}

// Header is the first line of a journal.
type Header struct {
	Format  string    `json:"format"`
	Started time.Time `json:"started"`
	Target  string    `json:"target"`
	PID     int       `json:"pid"`
}

// AppendRecord encodes one frame as a journal line (with its newline) onto
// buf. It is written by hand because it runs for every frame: the layout is
// exactly what json.Marshal of Record gives, which ReadJournal reads back.
func AppendRecord(buf []byte, seq uint64, f transport.Frame) []byte {
	buf = append(buf, `{"seq":`...)
	buf = strconv.AppendUint(buf, seq, 10)
	buf = append(buf, `,"t":"`...)
	buf = f.Time.AppendFormat(buf, time.RFC3339Nano)
	buf = append(buf, `","dir":"`...)
	buf = append(buf, f.Dir.String()...)
	buf = append(buf, `","kind":"`...)
	buf = append(buf, f.Kind.String()...)
	buf = append(buf, '"')
	if len(f.Data) > 0 || f.Kind == transport.Message {
		if utf8.Valid(f.Data) {
			buf = append(buf, `,"raw":`...)
			buf = appendJSONString(buf, f.Data)
		} else {
			buf = append(buf, `,"b64":"`...)
			buf = base64.StdEncoding.AppendEncode(buf, f.Data)
			buf = append(buf, '"')
		}
	}
	if !metaEmpty(&f.Meta) {
		buf = append(buf, `,"meta":`...)
		rest := f.Meta
		rest.PID = 0
		if metaEmpty(&rest) {
			// The common stdio case: only the pid (metaEmpty is the one list
			// of fields, so a new field can never be dropped here).
			buf = append(buf, `{"pid":`...)
			buf = strconv.AppendInt(buf, int64(f.Meta.PID), 10)
			buf = append(buf, '}')
		} else {
			m, _ := marshalNoEscape(f.Meta)
			buf = append(buf, termsafe.JSON(m)...) // Detail may quote a server
		}
	}
	return append(buf, '}', '\n')
}

// appendJSONString quotes valid UTF-8 as a JSON string without HTML
// escaping, so the journal stays greppable; the characters that could
// hijack a terminal showing it (controls, bidi, separators) are \u
// escapes, which read back as the same bytes.
func appendJSONString(buf, s []byte) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c == 0x7f {
			r, n := utf8.DecodeRune(s[i:])
			if termsafe.Hidden(r) {
				buf = append(buf, s[start:i]...)
				buf = append(buf, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
				start = i + n
			}
			i += n - 1
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		buf = append(buf, s[start:i]...)
		switch c {
		case '"', '\\':
			buf = append(buf, '\\', c)
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		default:
			buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func metaEmpty(m *transport.Meta) bool {
	return m.Event == "" && m.Detail == "" && m.HTTPMethod == "" && m.URL == "" && m.Status == 0 &&
		len(m.Headers) == 0 && m.Stream == "" && m.Resumes == "" && m.EventID == "" && m.EventType == "" &&
		m.Retry == 0 && m.PID == 0 && m.ExitCode == nil && m.Signal == "" && m.Via == ""
}

// Frame turns a record back into the frame it was written from.
func (r *Record) Frame() (transport.Frame, error) {
	f := transport.Frame{Time: r.Time}
	switch r.Dir {
	case "out":
		f.Dir = transport.Out
	case "in":
		f.Dir = transport.In
	case "local":
		f.Dir = transport.Local
	default:
		return f, fmt.Errorf("record %d: unknown direction %q", r.Seq, r.Dir)
	}
	switch r.Kind {
	case "message":
		f.Kind = transport.Message
	case "garbage":
		f.Kind = transport.Garbage
	case "stderr":
		f.Kind = transport.Stderr
	case "event":
		f.Kind = transport.Event
	default:
		return f, fmt.Errorf("record %d: unknown kind %q", r.Seq, r.Kind)
	}
	switch {
	case r.Raw != nil:
		f.Data = []byte(*r.Raw)
	case r.B64 != "":
		d, err := base64.StdEncoding.DecodeString(r.B64)
		if err != nil {
			return f, fmt.Errorf("record %d: bad base64: %w", r.Seq, err)
		}
		f.Data = d
	}
	if r.Meta != nil {
		f.Meta = *r.Meta
	}
	return f, nil
}

// Journal is an append-only JSONL file, one per session. Every frame is
// written with one write call before the session acts on it, so a crash or
// kill -9 loses at most the frame being written.
type Journal struct {
	mu   sync.Mutex
	f    *os.File
	path string
	buf  []byte
	err  error
}

// DefaultJournalDir is $XDG_STATE_HOME/mcpscope/journal (or ~/.local/state/…).
func DefaultJournalDir() string {
	return filepath.Join(StateDir(), "journal")
}

// StateDir is mcpscope's XDG state directory.
func StateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "mcpscope")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "state", "mcpscope")
	}
	return filepath.Join(os.TempDir(), "mcpscope-state")
}

// NewJournalPath names a fresh journal file in dir.
func NewJournalPath(dir string, now time.Time) string {
	return filepath.Join(dir, fmt.Sprintf("%s-%d.jsonl", now.UTC().Format("20060102-150405.000"), os.Getpid()))
}

// CreateJournal opens path for appending (0600, parent dirs 0700) and
// writes the header line when the file is new.
func CreateJournal(path, target string) (*Journal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, &JournalError{Path: path, Err: err}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, &JournalError{Path: path, Err: err}
	}
	j := &Journal{f: f, path: path}
	if st, err := f.Stat(); err == nil && st.Size() == 0 {
		h, _ := json.Marshal(Header{Format: JournalFormat, Started: time.Now(), Target: target, PID: os.Getpid()})
		if _, err := f.Write(append(h, '\n')); err != nil {
			f.Close()
			return nil, &JournalError{Path: path, Err: err}
		}
	}
	return j, nil
}

// JournalError is a journal that could not be created or written.
type JournalError struct {
	Path string
	Err  error
}

func (e *JournalError) Error() string { return "journal " + e.Path + ": " + e.Err.Error() }

func (e *JournalError) Unwrap() error { return e.Err }

// Path is where the journal lives.
func (j *Journal) Path() string { return j.path }

// Append writes one frame. The first failure is kept and returned from then
// on; the session reports it once and goes on without a journal.
func (j *Journal) Append(seq uint64, f transport.Frame) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return j.err
	}
	j.buf = AppendRecord(j.buf[:0], seq, f)
	if _, err := j.f.Write(j.buf); err != nil {
		j.err = fmt.Errorf("write journal %s: %w", j.path, err)
	}
	if cap(j.buf) > 1<<20 { // don't pin a 20 MB buffer after one big frame
		j.buf = nil
	}
	return j.err
}

// Close closes the file.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.f.Close()
}

// ReadJournal reads records from r, calling fn for each frame in order. A
// torn last line (a crash mid-write) is reported as an error after every
// whole record before it has been delivered.
func ReadJournal(r io.Reader, fn func(seq uint64, f transport.Frame) error) (Header, error) {
	var h Header
	br := bufio.NewReaderSize(r, 1<<16)
	line := 0
	for {
		b, err := br.ReadBytes('\n')
		if len(b) > 0 {
			line++
			if b[len(b)-1] != '\n' {
				return h, fmt.Errorf("journal line %d is incomplete (the writer stopped mid-line); everything before it was read", line)
			}
			if line == 1 && bytes.Contains(b[:min(len(b), 64)], []byte(`"format"`)) {
				if jerr := json.Unmarshal(b, &h); jerr != nil {
					return h, fmt.Errorf("journal header: %w", jerr)
				}
				continue
			}
			var rec Record
			if jerr := json.Unmarshal(b, &rec); jerr != nil {
				return h, fmt.Errorf("journal line %d: %w", line, jerr)
			}
			f, ferr := rec.Frame()
			if ferr != nil {
				return h, ferr
			}
			if ferr := fn(rec.Seq, f); ferr != nil {
				return h, ferr
			}
		}
		if err == io.EOF {
			return h, nil
		}
		if err != nil {
			return h, err
		}
	}
}
