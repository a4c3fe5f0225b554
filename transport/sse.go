package transport

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
)

// SSEEvent is one event of a text/event-stream, as the WHATWG "dispatch the
// event" step sees it, plus the empty-data blocks MCP uses for priming.
type SSEEvent struct {
	// ID is the stream's last event ID at dispatch (it persists across events
	// until another id field changes it, as in the spec).
	ID string
	// HasID says this event's own block carried an accepted id field.
	HasID bool
	// Type is the event field as sent; "" means the default "message".
	Type string
	// Data is the data buffer with its final LF removed. Empty means the event
	// is no message: a priming/polling event when HasID or Retry >= 0.
	Data []byte
	// Retry is the block's retry field in milliseconds, -1 when absent.
	Retry int
}

// IsMessage reports whether the event carries data (the only kind a browser
// would deliver to onmessage with content).
func (e SSEEvent) IsMessage() bool { return len(e.Data) > 0 }

// MaxSSEEvent bounds one event's buffered bytes so a hostile endless line
// cannot exhaust memory; real MCP payloads stay far below it.
const MaxSSEEvent = 256 << 20

// ErrSSETooLarge is returned when an event grows past MaxSSEEvent.
var ErrSSETooLarge = errors.New("sse: event larger than 256 MiB")

// SSEReader parses a text/event-stream. It has no line-length limit beyond
// MaxSSEEvent and never blocks longer than needed to see a line's end: a CR
// ends a line at once (a following LF is skipped lazily on the next read).
type SSEReader struct {
	br       *bufio.Reader
	started  bool // BOM check done
	skipLF   bool // previous line ended in CR
	line     []byte
	data     []byte
	hasData  bool // a data field was seen in this block
	typ      []byte
	idBuf    string // WHATWG "last event ID buffer"
	lastID   string // committed at each dispatch point
	blockID  bool
	retry    int
	fields   bool // any field seen in this block (for truncation reports)
	comments int
	events   int
}

// NewSSEReader reads events from r.
func NewSSEReader(r io.Reader) *SSEReader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	return &SSEReader{br: br, retry: -1}
}

// LastEventID is the last event ID as of the latest dispatched block: what a
// reconnecting client sends as Last-Event-ID ("" = send none).
func (r *SSEReader) LastEventID() string { return r.lastID }

// Comments counts ":" lines seen so far (keep-alives, go-sdk's ": ok").
func (r *SSEReader) Comments() int { return r.comments }

// Events counts events returned so far.
func (r *SSEReader) Events() int { return r.events }

// Next returns the next event. At a clean end of stream it returns io.EOF;
// when the stream ends inside an event (fields seen but no blank line), the
// event is discarded as the spec says and io.ErrUnexpectedEOF is returned so
// the cut is visible. Other read errors are returned as they are.
func (r *SSEReader) Next() (SSEEvent, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			// A pending comment loses nothing; a pending field does.
			if err == io.EOF && ((len(line) > 0 && line[0] != ':') || r.fields) {
				return SSEEvent{}, fmt.Errorf("sse: stream ended inside an event: %w", io.ErrUnexpectedEOF)
			}
			return SSEEvent{}, err
		}
		if len(line) == 0 {
			if ev, ok := r.dispatch(); ok {
				r.events++
				return ev, nil
			}
			continue
		}
		if line[0] == ':' {
			r.comments++
			continue
		}
		if err := r.field(line); err != nil {
			return SSEEvent{}, err
		}
	}
}

func (r *SSEReader) field(line []byte) error {
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if len(r.data)+len(value)+1 > MaxSSEEvent {
			return ErrSSETooLarge
		}
		r.data = append(r.data, value...)
		r.data = append(r.data, '\n')
		r.hasData = true
	case "event":
		r.typ = append(r.typ[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) >= 0 {
			break // spec: an id containing NUL is ignored
		}
		r.idBuf = string(value)
		r.blockID = true
	case "retry":
		if n, ok := digits(value); ok {
			r.retry = n
		}
	default:
		// Unknown fields are ignored, but still make this a partial event.
	}
	r.fields = true
	return nil
}

// digits parses an all-ASCII-digit value; overflow saturates rather than
// discarding a field the spec says is valid.
func digits(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		if n > (math.MaxInt32-9)/10 {
			n = math.MaxInt32
			continue
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// dispatch ends a block. Per WHATWG the last event ID is committed even when
// nothing is dispatched; blocks without data are returned only when they
// carried an id or retry (MCP priming and SEP-1699 polling events).
func (r *SSEReader) dispatch() (SSEEvent, bool) {
	r.lastID = r.idBuf
	ev := SSEEvent{ID: r.idBuf, HasID: r.blockID, Type: string(r.typ), Retry: r.retry}
	ok := r.hasData || r.blockID || r.retry >= 0
	if r.hasData {
		d := r.data[:len(r.data)-1] // drop the final LF
		ev.Data = make([]byte, len(d))
		copy(ev.Data, d)
	}
	if cap(r.data) > 1<<20 {
		r.data = nil // don't pin a 20 MB buffer for a stream of small events
	} else {
		r.data = r.data[:0]
	}
	r.typ = r.typ[:0]
	r.hasData, r.blockID, r.fields, r.retry = false, false, false, -1
	return ev, ok
}

// readLine returns the next line without its terminator (CRLF, LF or CR).
// At end of input the unterminated remainder is returned with io.EOF.
func (r *SSEReader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	if cap(r.line) > 1<<20 {
		r.line = nil
	}
	for {
		if r.br.Buffered() == 0 {
			if _, err := r.br.Peek(1); err != nil {
				return r.line, err
			}
		}
		if !r.started {
			// Every dispatchable block is at least 3 bytes long, so waiting
			// for 3 bytes here never delays an event.
			r.started = true
			if b, _ := r.br.Peek(3); bytes.Equal(b, []byte("\xef\xbb\xbf")) {
				r.br.Discard(3)
			}
			continue
		}
		buf, _ := r.br.Peek(r.br.Buffered())
		if r.skipLF {
			r.skipLF = false
			if buf[0] == '\n' {
				r.br.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		if i < 0 {
			if len(r.line)+len(buf) > MaxSSEEvent {
				return nil, ErrSSETooLarge
			}
			r.line = append(r.line, buf...)
			r.br.Discard(len(buf))
			continue
		}
		if len(r.line)+i > MaxSSEEvent {
			return nil, ErrSSETooLarge
		}
		r.line = append(r.line, buf[:i]...)
		r.skipLF = buf[i] == '\r'
		r.br.Discard(i + 1)
		return r.line, nil
	}
}
