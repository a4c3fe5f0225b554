// Package journal writes and reads session journals (JSONL records of frames) and the index files beside them, and decodes, in one pass, the JSON-RPC messages they hold.
package journal

import (
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"mcpscope/internal/jsonscan"
	"mcpscope/transport"
)

// Format names the first line of every journal file.
const Format = "mcpscope-journal/1"

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
// buf. It is written by hand because it runs for every frame: the members
// are Record's, in the order seq, t, dir, kind, meta, raw|b64, so any JSON
// reader reads it as a Record and the data comes last (journals written
// before had meta last; both are read).
func AppendRecord(buf []byte, seq uint64, f transport.Frame) []byte {
	return appendRecord(buf, seq, &f)
}

// appendRecord is AppendRecord without copying the frame (ingest's way).
func appendRecord(buf []byte, seq uint64, f *transport.Frame) []byte {
	buf = appendRecordHead(buf, seq, f)
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
	return append(buf, '}', '\n')
}

// recordChunk is how much of a frame's data WriteRecord encodes at a time.
const recordChunk = 64 << 10

// WriteRecord writes to w the line AppendRecord makes, byte for byte, with
// the data encoded a piece at a time: a frame of any size costs buf's
// 64 KiB more, not a second copy of itself. It returns buf for reuse.
func WriteRecord(w io.Writer, buf []byte, seq uint64, f transport.Frame) ([]byte, error) {
	if len(f.Data) <= recordChunk {
		buf = AppendRecord(buf[:0], seq, f)
		_, err := w.Write(buf)
		return buf, err
	}
	buf = appendRecordHead(buf[:0], seq, &f)
	raw := utf8.Valid(f.Data)
	if raw {
		buf = append(buf, `,"raw":"`...)
	} else {
		buf = append(buf, `,"b64":"`...)
	}
	for d := f.Data; len(d) > 0; {
		var n int
		if raw {
			n = runeCut(d, recordChunk)
			buf = appendJSONText(buf, d[:n])
		} else {
			n = min(len(d), recordChunk/3*3) // whole groups of 3: no padding mid-stream
			buf = base64.StdEncoding.AppendEncode(buf, d[:n])
		}
		d = d[n:]
		if _, err := w.Write(buf); err != nil {
			return buf, err
		}
		buf = buf[:0]
	}
	buf = append(buf, '"', '}', '\n')
	_, err := w.Write(buf)
	return buf, err
}

// runeCut is where to cut d at most max bytes in without splitting a
// UTF-8 character (d is valid UTF-8).
func runeCut(d []byte, max int) int {
	if len(d) <= max {
		return len(d)
	}
	n := max
	for n > max-utf8.UTFMax && !utf8.RuneStart(d[n]) {
		n--
	}
	return n
}

// appendRecordHead is a record up to its data: seq, t, dir, kind, meta.
func appendRecordHead(buf []byte, seq uint64, f *transport.Frame) []byte {
	buf = append(buf, `{"seq":`...)
	buf = strconv.AppendUint(buf, seq, 10)
	buf = append(buf, `,"t":"`...)
	buf = appendStamp(buf, f.Time)
	buf = append(buf, `","dir":"`...)
	buf = append(buf, f.Dir.String()...)
	buf = append(buf, `","kind":"`...)
	buf = append(buf, f.Kind.String()...)
	buf = append(buf, '"')
	// meta goes before the bytes: a reader that pages back the head of a
	// huge line finds every field but the tail of the data (see pageRecord).
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
			buf = appendMeta(buf, &f.Meta) // terminal-safe: Detail may quote a server
		}
	}
	return buf
}

// appendJSONString quotes valid UTF-8 as a JSON string without HTML
// escaping, so the journal stays greppable; the characters that could
// hijack a terminal showing it (controls, bidi, separators) are \u
// escapes, which read back as the same bytes.
func appendJSONString(buf, s []byte) []byte {
	buf = append(buf, '"')
	buf = appendJSONText(buf, s)
	return append(buf, '"')
}

// appendJSONText is appendJSONString without the quotes
// (jsonscan.AppendJSONText, invalid UTF-8 copied).
func appendJSONText(buf, s []byte) []byte { return jsonscan.AppendJSONText(buf, s, false) }

func metaEmpty(m *transport.Meta) bool {
	return m.Event == "" && m.Detail == "" && m.HTTPMethod == "" && m.URL == "" && m.Status == 0 &&
		len(m.Headers) == 0 && m.Stream == "" && m.Resumes == "" && m.EventID == "" && m.EventType == "" &&
		m.Retry == 0 && m.PID == 0 && m.ExitCode == nil && m.Signal == "" && m.Via == ""
}

// Frame turns a record back into the frame it was written from.
func (r *Record) Frame() (transport.Frame, error) {
	f := transport.Frame{Time: r.Time}
	if f.Dir = dirOf(r.Dir); f.Dir == 0 {
		return f, fmt.Errorf("record %d: unknown direction %q", r.Seq, r.Dir)
	}
	if f.Kind = kindOf(r.Kind); f.Kind == 0 {
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
