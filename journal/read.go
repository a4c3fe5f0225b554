package journal

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"mcpscope/internal/jsonscan"
	"mcpscope/transport"
)

// ErrNotJournal: the file is not an mcpscope journal (nor `record` output).
var ErrNotJournal = errors.New("not an mcpscope journal")

// Damage is a journal some of whose lines could not be read. Every
// other line was delivered before it was returned.
type Damage struct {
	Bad   []BadLine // the first maxBadLines lines that are not records
	Count int       // how many lines in all are not records
	Torn  int       // the number of a last line the writer left unfinished (0: none)
}

// BadLine is one line of a journal that is not a record, and why.
type BadLine struct {
	Line int
	Why  string
}

const maxBadLines = 100

func (d *Damage) Error() string {
	var parts []string
	if d.Count > 0 {
		msg := fmt.Sprintf("journal line %d is not a record (%s)", d.Bad[0].Line, d.Bad[0].Why)
		if d.Count > 1 {
			msg += fmt.Sprintf("; %d more lines are not records either", d.Count-1)
		}
		parts = append(parts, msg+"; every other line was read")
	}
	if d.Torn > 0 {
		parts = append(parts, fmt.Sprintf("journal line %d is incomplete (the writer stopped mid-line); everything before it was read", d.Torn))
	}
	return strings.Join(parts, "; ")
}

func (d *Damage) add(line int, why error) {
	d.Count++
	if len(d.Bad) < maxBadLines {
		d.Bad = append(d.Bad, BadLine{Line: line, Why: why.Error()})
	}
}

// LinePos is where a journal line is in its file: offset and length, the
// newline included.
type LinePos struct {
	Off int64
	N   int
}

// Read reads records from r, calling fn for each frame in order.
// Lines that are not records are skipped and reported, with their
// numbers, in a *Damage returned after everything else was
// delivered; a torn last line (a crash mid-write) likewise. A file whose
// first line is neither a journal header nor a record is not read:
// the error wraps ErrNotJournal. An error from fn stops the reading.
func Read(r io.Reader, fn func(seq uint64, f transport.Frame) error) (Header, error) {
	return ReadPos(r, func(seq uint64, f transport.Frame, _ LinePos) error { return fn(seq, f) })
}

// ReadBorrowed is Read for a reader that uses each frame's
// data only during fn (it writes it out, or copies what it keeps): the data
// may be the line's own buffer, valid until fn returns, so a frame costs no
// copy at its size.
func ReadBorrowed(r io.Reader, fn func(seq uint64, f transport.Frame) error) (Header, error) {
	lr := newLineReader(r)
	lr.scratch.borrow = true
	return readLines(lr, func(seq uint64, f *transport.Frame, _ LinePos) error { return fn(seq, *f) })
}

// ReadDecoded is ReadBorrowed that also decodes each message
// frame, as DecodeInto(into, f.Data) does (env and batch are nil for other
// frames), in the same pass as its record: unescaping the frame notes where
// its quotes are, and the decoder takes its strings' ends from there rather
// than scanning for them again. env and batch are borrowed as f's data is,
// and f itself (the reader's own, not copied on the way) is valid only
// during fn.
func ReadDecoded(r io.Reader, into *Envelope, fn func(seq uint64, f *transport.Frame, env *Envelope, batch []*Envelope) error) (Header, error) {
	return readJournalDecoded(r, into, false, fn)
}

// ReadDecodedNoProgress is ReadDecoded for a reader that
// reads no progress: a progress notification's params are stepped over,
// not read, so its Envelope tells nothing of them (ProgressParams is not
// ok; no name, token or request id). Its Params are there as ever, and
// every other message is decoded whole.
func ReadDecodedNoProgress(r io.Reader, into *Envelope, fn func(seq uint64, f *transport.Frame, env *Envelope, batch []*Envelope) error) (Header, error) {
	return readJournalDecoded(r, into, true, fn)
}

func readJournalDecoded(r io.Reader, into *Envelope, noProgress bool, fn func(seq uint64, f *transport.Frame, env *Envelope, batch []*Envelope) error) (Header, error) {
	lr := newLineReader(r)
	lr.scratch.borrow = true
	lr.scratch.quotes.want = true
	return readLines(lr, func(seq uint64, f *transport.Frame, _ LinePos) error {
		var env *Envelope
		var batch []*Envelope
		if f.Kind == transport.Message {
			env, batch, _, _ = decodeFrameQuoted(f.Data, into, lr.scratch.quotesOf(f.Data), noProgress)
		}
		return fn(seq, f, env, batch)
	})
}

func ReadPos(r io.Reader, fn func(seq uint64, f transport.Frame, pos LinePos) error) (Header, error) {
	return readLines(newLineReader(r), func(seq uint64, f *transport.Frame, pos LinePos) error { return fn(seq, *f, pos) })
}

// ReadAt reads a journal's records from offset off of r (where a
// line starts: 0, or the end of a line read before), calling fn with each
// frame, its number and where its line is (offset and length, newline
// included). Damaged lines and a torn last line are reported as
// Read reports them, after everything else was delivered.
func ReadAt(r io.ReaderAt, off int64, fn func(seq uint64, f transport.Frame, lineOff int64, lineLen int) error) (Header, error) {
	return ReadPos(&offsetReader{r: r, base: off}, func(seq uint64, f transport.Frame, pos LinePos) error {
		return fn(seq, f, off+pos.Off, pos.N)
	})
}

// offsetReader reads r from base on.
type offsetReader struct {
	r    io.ReaderAt
	base int64
	pos  int64
}

func (o *offsetReader) Read(p []byte) (int, error) {
	n, err := o.r.ReadAt(p, o.base+o.pos)
	o.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

// readLines reads lr's lines, calling fn with each frame: the walk's own,
// valid during fn (a frame is a few hundred bytes, not copied on each hop).
func readLines(lr *lineReader, fn func(seq uint64, f *transport.Frame, pos LinePos) error) (Header, error) {
	var h Header
	var damage Damage
	first := true // the next line decides whether this is a journal at all
	var f transport.Frame
	for {
		b, pos, owned, err := lr.next()
		if len(b) > 0 {
			if b[len(b)-1] != '\n' {
				if err == nil || err == io.EOF {
					damage.Torn = lr.line
				}
				break
			}
			if lr.line == 1 && IsHeader(b) {
				if herr := ReadHeader(b, &h); herr != nil {
					return h, herr
				}
				first = false
				continue
			}
			seq, perr := parseRecordInto(b[:len(b)-1], owned, false, &lr.scratch, &f)
			switch {
			case perr != nil && first:
				return h, fmt.Errorf("%w: line %d is neither a journal header nor a record (%v)", ErrNotJournal, lr.line, perr)
			case perr != nil:
				damage.add(lr.line, perr)
			default:
				first = false
				if ferr := fn(seq, &f, pos); ferr != nil {
					return h, ferr
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return h, fmt.Errorf("read journal after line %d: %w", lr.line, err)
		}
	}
	if damage.Count > 0 || damage.Torn > 0 {
		return h, &damage
	}
	return h, nil
}

// IsHeader reports whether a first line is a journal header.
func IsHeader(b []byte) bool {
	return bytes.Contains(b[:min(len(b), 64)], []byte(`"format"`))
}

func ReadHeader(b []byte, h *Header) error {
	if err := json.Unmarshal(b, h); err != nil {
		return fmt.Errorf("%w: its first line names a format but does not read as a header (%v)", ErrNotJournal, err)
	}
	h.Target = transport.RedactTarget(h.Target) // older builds recorded it as typed
	if h.Format == Format {
		return nil
	}
	if strings.HasPrefix(h.Format, "mcpscope-journal/") {
		return fmt.Errorf("the journal is in format %q, which this mcpscope (reading %s) does not know: use a newer mcpscope", h.Format, Format)
	}
	return fmt.Errorf("%w: its header names the format %q", ErrNotJournal, h.Format)
}

// lineReader reads lines and knows where each starts. From a file, a line
// longer than its buffer is read again at its offset into a buffer of
// exactly its size, so a huge line costs its size once, not a chain of
// growing copies.
type lineReader struct {
	br   *bufio.Reader
	ra   io.ReaderAt // the file, when r is one
	off  int64       // offset of the next line
	line int         // number of the last line returned
	// scratch is where a line's raw frame is unescaped before it is
	// copied out at its size.
	scratch rawScratch
}

const readBuffer = 1 << 16

// hugeLine is the length from which a line is read after a collection.
const hugeLine = 32 << 20

func newLineReader(r io.Reader) *lineReader {
	lr := &lineReader{br: bufio.NewReaderSize(r, readBuffer)}
	if f, ok := r.(*os.File); ok {
		if at, err := f.Seek(0, io.SeekCurrent); err == nil {
			lr.ra, lr.off = f, at
		}
	}
	return lr
}

// next returns the next line with its newline (none on a torn last line),
// where it is, and whether the caller owns its buffer (else it is valid
// until the next call only).
func (lr *lineReader) next() (b []byte, pos LinePos, owned bool, err error) {
	b, err = lr.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		b, err = lr.long(b)
		owned = true
	}
	if len(b) > 0 {
		lr.line++
	}
	pos = LinePos{Off: lr.off, N: len(b)}
	lr.off += int64(len(b))
	return b, pos, owned, err
}

// long assembles a line longer than the buffer, head being its start.
func (lr *lineReader) long(head []byte) ([]byte, error) {
	if lr.ra != nil {
		n := len(head)
		var err error
		for {
			var b []byte
			b, err = lr.br.ReadSlice('\n')
			n += len(b)
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		if n >= hugeLine {
			// The last huge line is garbage by now, but the collector
			// would let the heap reach twice it before running: collect
			// first, so a huge line costs its size once, not once more
			// for the line before it (diff reads two journals).
			runtime.GC()
		}
		buf := make([]byte, n)
		if _, rerr := lr.ra.ReadAt(buf, lr.off); rerr != nil && !(rerr == io.EOF && n > 0) {
			return nil, rerr
		}
		return buf, err
	}
	chunks := [][]byte{bytes.Clone(head)}
	n := len(head)
	var err error
	for {
		var b []byte
		b, err = lr.br.ReadSlice('\n')
		chunks = append(chunks, bytes.Clone(b))
		n += len(b)
		if err != bufio.ErrBufferFull {
			break
		}
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	buf := make([]byte, 0, n)
	for _, c := range chunks {
		buf = append(buf, c...)
	}
	return buf, err
}

// ParseRecord reads one journal line (without its newline) back into its
// number and frame, as the journal readers do.
func ParseRecord(line []byte) (uint64, transport.Frame, error) {
	return ParseLine(line, false, false)
}

// ParseLine reads one journal line (without its newline) into a frame.
// It reads the layout AppendRecord writes by hand and hands anything
// else to encoding/json. When owned, the line's buffer becomes the
// frame's data (unescaped in place); otherwise the data is a copy. With
// cut, the line may end inside the data (a head paged back from a huge
// line): the frame then holds the part that is there.
func ParseLine(line []byte, owned, cut bool) (uint64, transport.Frame, error) {
	return parseRecordScratch(line, owned, cut, nil)
}

// parseRecordScratch is ParseLine with fastRecord's scratch buffer.
func parseRecordScratch(line []byte, owned, cut bool, scratch *rawScratch) (uint64, transport.Frame, error) {
	var f transport.Frame
	seq, err := parseRecordInto(line, owned, cut, scratch, &f)
	return seq, f, err
}

// parseRecordInto is parseRecordScratch reading into *f (reset first):
// the journal walk's frame is then filled where it lives, not copied out
// of each call on the way up.
func parseRecordInto(line []byte, owned, cut bool, scratch *rawScratch, f *transport.Frame) (uint64, error) {
	*f = transport.Frame{}
	if scratch != nil {
		scratch.quotes.data = nil // the last line's
	}
	if seq, ok := fastRecord(line, owned, cut, scratch, f); ok {
		return seq, nil // its meta comes redacted
	}
	*f = transport.Frame{}
	if cut {
		return 0, errors.New("the head of the line is not in the layout mcpscope writes")
	}
	var rec Record
	if err := json.Unmarshal(line, &rec); err != nil {
		return 0, err
	}
	fr, err := rec.Frame()
	redactMeta(&fr.Meta)
	*f = fr
	return rec.Seq, err
}

// redactMeta redacts what a frame's metadata read from a journal may hold
// of a secret (its URL, credential headers, a URL in its detail), as the
// transport does before writing: journals from older builds, and foreign
// ones, hold them as sent. The message itself stays byte for byte.
func redactMeta(m *transport.Meta) {
	if m.URL != "" {
		m.URL = transport.RedactURL(m.URL)
	}
	m.Detail = transport.RedactText(m.Detail)
	redactHeaders(m.Headers)
}

// redactHeaders is redactMeta for a headers map, in place.
func redactHeaders(h map[string]string) {
	for k, v := range h {
		if redactedAlready(v) || plainHeader(k) {
			continue // what mcpscope writes, or no credential: no need to look again
		}
		if r := transport.RedactHeader(k, v); r != v {
			h[k] = r
		}
	}
}

// plainHeaders are header names every HTTP frame's meta repeats that
// never hold a credential (transport.IsSecretName says no to each: a test
// checks).
var plainHeaders = [...]string{"Content-Type", "Accept", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-ID"}

func plainHeader(name string) bool {
	for _, n := range plainHeaders {
		if name == n {
			return true
		}
	}
	return false
}

// redactedAlready reports a header value transport.RedactHeader leaves
// as it is whatever its name: "[redacted]", or a scheme of under 16 bytes
// and " [redacted]".
func redactedAlready(v string) bool {
	if v == "[redacted]" {
		return true
	}
	i := strings.IndexByte(v, ' ')
	return i > 0 && i < 16 && v[i:] == " [redacted]"
}

// fastRecord reads `{"seq":N,"t":"…","dir":"…","kind":"…"[,"meta":{…}][,"raw":"…"|,"b64":"…"]}`
// and the older layout with meta last. ok is false for anything else. The
// meta comes redacted as redactMeta leaves it. scratch, when not nil, is a buffer to unescape a line that is not owned
// into (kept between calls), so its data costs one allocation of its size.
func fastRecord(line []byte, owned, cut bool, scratch *rawScratch, f *transport.Frame) (seq uint64, ok bool) {
	sc := scanner{b: line}
	if sc.peek() != '{' {
		return 0, false
	}
	sc.i++
	var haveSeq, haveDir, haveKind, haveMeta bool
	// The head every record starts with, read in place: the member walk
	// below then goes on from there (and reads any other line whole).
	if n, i := recordHead(line, f); i > 0 {
		seq, sc.i = n, i
		haveSeq, haveDir, haveKind = true, true, true
	}
	for first := !haveSeq; ; first = false {
		if !first {
			switch sc.peek() {
			case ',':
				sc.i++
			case '}':
				sc.i++
				if sc.i != len(sc.b) || !haveSeq || !haveDir || !haveKind {
					return 0, false
				}
				if f.Data == nil && f.Kind == transport.Message {
					f.Data = []byte{} // as json gives "raw":""
				}
				return seq, true
			default:
				return 0, false
			}
		}
		key, kok := sc.recordKey()
		if !kok || sc.peek() != ':' {
			return 0, false
		}
		sc.i++
		switch string(key) {
		case "seq":
			start := sc.i
			for sc.i < len(sc.b) && sc.b[sc.i] >= '0' && sc.b[sc.i] <= '9' {
				sc.i++
			}
			n, err := strconv.ParseUint(string(sc.b[start:sc.i]), 10, 64)
			if err != nil || sc.i-start > 1 && sc.b[start] == '0' { // JSON has no leading zeros
				return 0, false
			}
			seq, haveSeq = n, true
		case "t":
			tb, tok := sc.plainBytes()
			if !tok {
				return 0, false
			}
			t, tok := parseTime(tb)
			if !tok {
				return 0, false
			}
			f.Time = t
		case "dir":
			s, sok := sc.plainBytes()
			if f.Dir = dirOf(string(s)); !sok || f.Dir == 0 {
				return 0, false
			}
			haveDir = true
		case "kind":
			s, sok := sc.plainBytes()
			if f.Kind = kindOf(string(s)); !sok || f.Kind == 0 {
				return 0, false
			}
			haveKind = true
		case "meta":
			if haveMeta || sc.peek() != '{' {
				return 0, false // a second meta merges into the first: encoding/json's way
			}
			// Read in place by the layout mcpscope writes; anything else
			// is measured and handed to encoding/json.
			start := sc.i
			if fastMeta(&sc, &f.Meta, true) {
				if f.Meta.URL != "" {
					f.Meta.URL = redactedURL(f.Meta.URL) // the headers came redacted
				}
				f.Meta.Detail = transport.RedactText(f.Meta.Detail)
			} else {
				var m transport.Meta // its own variable: &f.Meta given to encoding/json would put every f on the heap
				sc.i = start
				if !sc.skip() || json.Unmarshal(sc.b[start:sc.i], &m) != nil {
					return 0, false
				}
				redactMeta(&m)
				f.Meta = m
			}
			haveMeta = true
		case "raw":
			data, end, rok := unescapeRaw(sc.b, sc.i, owned, cut, scratch)
			if !rok {
				return 0, false
			}
			f.Data, sc.i = data, end
			if end == len(sc.b) && cut {
				return seq, haveSeq && haveDir && haveKind // the head ends in the data
			}
		case "b64":
			start := sc.i
			if sc.peek() != '"' {
				return 0, false
			}
			if _, sok := sc.str(); !sok {
				if !cut {
					return 0, false
				}
				sc.i = len(sc.b)
			}
			enc := bytes.Trim(sc.b[start:sc.i], `"`)
			if cut {
				enc = enc[:len(enc)/4*4]
			}
			d := make([]byte, base64.StdEncoding.DecodedLen(len(enc)))
			n, err := base64.StdEncoding.Decode(d, enc)
			if err != nil {
				return 0, false
			}
			f.Data = d[:n]
			if sc.i == len(sc.b) && cut {
				return seq, haveSeq && haveDir && haveKind
			}
		default:
			return 0, false
		}
	}
}

// recordHead reads the head AppendRecord writes,
// `{"seq":N,"t":"…","dir":"…","kind":"…"`, into seq and f's time,
// direction and kind, as the member walk would; i is the index after it,
// 0 when line does not start so (nothing is then set).
func recordHead(line []byte, f *transport.Frame) (seq uint64, i int) {
	const seqKey, tKey, dirKey, kindKey = `{"seq":`, `,"t":"`, `","dir":"`, `","kind":"`
	if len(line) < len(seqKey) || string(line[:len(seqKey)]) != seqKey {
		return 0, 0
	}
	i = len(seqKey)
	digits := i
	for i < len(line) && line[i] >= '0' && line[i] <= '9' && i-digits < 19 { // 19 digits fit
		seq = seq*10 + uint64(line[i]-'0')
		i++
	}
	if i == digits || i-digits == 19 || line[digits] == '0' && i-digits > 1 || len(line)-i < len(tKey) || string(line[i:i+len(tKey)]) != tKey {
		return 0, 0
	}
	i += len(tKey)
	end := bytes.IndexByte(line[i:min(len(line), i+40)], '"')
	if end < 0 {
		return 0, 0
	}
	t, ok := fastTime(line[i : i+end]) // its bytes are plain ASCII when it says yes
	if !ok {
		return 0, 0
	}
	i += end
	if len(line)-i < len(dirKey) || string(line[i:i+len(dirKey)]) != dirKey {
		return 0, 0
	}
	i += len(dirKey)
	dir, n := headWord(line[i:], dirWords[:])
	i += n
	if dir == 0 || len(line)-i < len(kindKey) || string(line[i:i+len(kindKey)]) != kindKey {
		return 0, 0
	}
	i += len(kindKey)
	kind, n := headWord(line[i:], kindWords[:])
	if kind == 0 {
		return 0, 0
	}
	f.Time, f.Dir, f.Kind = t, transport.Dir(dir), transport.Kind(kind)
	return seq, i + n + 1
}

// The words a record's dir and kind may be, each with its closing quote,
// by value (dirOf's and kindOf's).
var (
	dirWords  = [...]string{transport.Out: `out"`, transport.In: `in"`, transport.Local: `local"`}
	kindWords = [...]string{transport.Message: `message"`, transport.Garbage: `garbage"`, transport.Stderr: `stderr"`, transport.Event: `event"`}
)

// headWord is the index in words of the one b starts with (0: none) and
// its length without the quote: a string in the head compared in place,
// not looked for and then named.
func headWord(b []byte, words []string) (int, int) {
	for v, w := range words {
		if w != "" && len(b) >= len(w) && string(b[:len(w)]) == w {
			return v, len(w) - 1
		}
	}
	return 0, 0
}

// recordKey reads a key of a record in place. Each is a short ASCII word;
// a key that is not (one with an escape, say) comes back as bytes that
// name none, and the record is then not in the layout mcpscope writes.
func (sc *scanner) recordKey() ([]byte, bool) {
	if sc.peek() != '"' {
		return nil, false
	}
	// A byte loop, not IndexByte: keys are shorter than a call's setup.
	for j, end := sc.i+1, min(len(sc.b), sc.i+16); j < end; j++ {
		if sc.b[j] == '"' {
			k := sc.b[sc.i+1 : j]
			sc.i = j + 1
			return k, true
		}
	}
	return nil, false
}

// plainBytes reads a string token without escapes: its text, in place.
func (sc *scanner) plainBytes() ([]byte, bool) {
	if sc.peek() != '"' {
		return nil, false
	}
	start := sc.i
	plain, ok := sc.str()
	if !ok || !plain {
		return nil, false
	}
	return sc.b[start+1 : sc.i-1], true
}

// parseTime reads the RFC 3339 time AppendRecord writes
// (2006-01-02T15:04:05.999999999Z07:00) by hand, and anything else
// through time.Parse.
func parseTime(b []byte) (time.Time, bool) {
	if t, ok := fastTime(b); ok {
		return t, true
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	return t, err == nil
}

func fastTime(b []byte) (time.Time, bool) {
	num := func(b []byte) int {
		n := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	if len(b) < 20 || b[16] != ':' {
		return time.Time{}, false
	}
	sec := num(b[17:19])
	if sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	minute, ok := minuteOf(b[:16], num)
	if !ok {
		return time.Time{}, false
	}
	rest := b[19:]
	ns := 0
	if rest[0] == '.' {
		i := 1
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 1 || i > 10 {
			return time.Time{}, false
		}
		ns = num(rest[1:i])
		for k := i; k < 10; k++ {
			ns *= 10
		}
		rest = rest[i:]
	}
	off := 0
	switch {
	case len(rest) == 1 && rest[0] == 'Z':
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, om := num(rest[1:3]), num(rest[4:6])
		if oh < 0 || om < 0 || oh > 23 || om > 59 {
			return time.Time{}, false
		}
		off = (oh*60 + om) * 60
		if rest[0] == '-' {
			off = -off
		}
	default:
		return time.Time{}, false
	}
	return time.Unix(minute+int64(sec)-int64(off), int64(ns)), true
}

// minuteRead is a minute fastTime read: its text and its Unix time.
type minuteRead struct {
	text [16]byte
	unix int64
}

// lastMinute is the minute fastTime read last: a journal's frames share
// one for a minute, so the calendar is worked out once a minute.
var lastMinute atomic.Pointer[minuteRead]

// minuteOf reads "2006-01-02T15:04" as a Unix time (UTC); false when it is
// not one.
func minuteOf(b []byte, num func([]byte) int) (int64, bool) {
	if m := lastMinute.Load(); m != nil && string(m.text[:]) == string(b) {
		return m.unix, true
	}
	if b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' {
		return 0, false
	}
	y, mo, d, h, mi := num(b[0:4]), num(b[5:7]), num(b[8:10]), num(b[11:13]), num(b[14:16])
	if y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 {
		return 0, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, 0, 0, time.UTC)
	if t.Day() != d {
		return 0, false // 31 February: let time.Parse say no
	}
	m := &minuteRead{unix: t.Unix()}
	copy(m.text[:], b)
	lastMinute.Store(m)
	return m.unix, true
}

func dirOf(s string) transport.Dir {
	switch s {
	case "out":
		return transport.Out
	case "in":
		return transport.In
	case "local":
		return transport.Local
	}
	return 0
}

func kindOf(s string) transport.Kind {
	switch s {
	case "message":
		return transport.Message
	case "garbage":
		return transport.Garbage
	case "stderr":
		return transport.Stderr
	case "event":
		return transport.Event
	}
	return 0
}

// unescapeRaw decodes the JSON string starting at b[i] (its quote) into
// bytes exactly as encoding/json does, and returns them with the index
// after the string. When owned, it decodes in place. With cut, a string
// that runs to the end of b (a head of a huge line) yields what is there,
// a half escape or half character at the end dropped.
func unescapeRaw(b []byte, i int, owned, cut bool, scratch *rawScratch) (data []byte, end int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	// The quotes of the data, when its reader wants them: noted at the
	// escapes that make them, on a buffer the data is decoded into, for a
	// line in the read buffer (so the table kept stays small: 4 bytes a
	// quote of one such line at most).
	var qt *quoteTable
	if scratch != nil && scratch.quotes.want && !owned && !cut && len(b)-i <= readBuffer {
		qt = &scratch.quotes
		qt.data, qt.at, qt.clean = nil, qt.at[:0], true
	}
	i++
	start := i
	// The common case: no escapes up to the closing quote.
	j := jsonscan.PlainRun(b, i)
	borrow := scratch != nil && scratch.borrow
	if j < len(b) && b[j] == '"' {
		if owned || borrow {
			return b[start:j], j + 1, true
		}
		return bytes.Clone(b[start:j]), j + 1, true
	}
	var dst []byte
	switch {
	case owned:
		dst = b[start:start] // decoding never writes past where it reads (but see U+FFFD below)
	case scratch != nil && !cut && len(b)-start <= maxScratch:
		if cap(scratch.buf) < len(b)-start {
			scratch.buf = make([]byte, 0, len(b)-start)
		}
		dst = scratch.buf[:0]
	default:
		dst = make([]byte, 0, len(b)-start)
	}
	dst = append(dst, b[start:j]...)
	i = j
	for i < len(b) {
		if !owned {
			// Plain text and the short escapes, a word at a time.
			if dst, i = unescapeWords(b, i, dst, qt); i >= len(b) {
				break
			}
		}
		c := b[i]
		switch {
		case c == '"':
			if !owned && !borrow {
				dst = bytes.Clone(dst) // give back the spare capacity, or the scratch
			}
			if qt != nil && qt.clean && len(dst) > 0 {
				qt.data = dst
			}
			return dst, i + 1, true
		case c == '\\':
			if i+1 >= len(b) {
				return dst, len(b), cut
			}
			if qt != nil {
				qt.note(b[i+1], len(dst))
			}
			switch b[i+1] {
			case '"', '\\', '/':
				dst = append(dst, b[i+1])
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r, n := readU(b[i:], cut)
				if n == 0 {
					return dst, len(b), cut && len(b)-i < 12
				}
				dst = utf8.AppendRune(dst, r)
				i += n
				continue
			default:
				return nil, 0, false
			}
			i += 2
		case c < 0x20:
			return nil, 0, false
		case c < utf8.RuneSelf:
			// A run of plain bytes, copied at once.
			k := jsonscan.PlainRun(b, i+1)
			dst = append(dst, b[i:k]...)
			i = k
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				if cut && !utf8.FullRune(b[i:]) {
					return dst, len(b), true
				}
				if owned {
					// Three bytes for one: decoding in place would now
					// overtake the reading. The rest goes to a buffer.
					dst = append(make([]byte, 0, len(b)-start+8), dst...)
					owned = false
				}
				dst = utf8.AppendRune(dst, utf8.RuneError) // as encoding/json does
			} else {
				dst = append(dst, b[i:i+n]...)
			}
			i += n
		}
	}
	return dst, len(b), cut
}

// shortEscapes are the bytes the two-byte escapes stand for, by the byte
// after the backslash (0: not one).
var shortEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// unescapeWords is unescapeRaw's run from b[i] over plain ASCII and
// two-byte escapes, eight bytes at a time, into dst, which is not b (each
// word is stored whole before it is looked at: the bytes past a special one
// are written over next). It stops at anything else, or where fewer than
// eight bytes are left to read or room to write, and returns where.
//
// qt, when not nil, notes the quotes it writes and whether the data is
// still clean, as quoteTable.note does.
func unescapeWords(b []byte, i int, dst []byte, qt *quoteTable) ([]byte, int) {
	buf := dst[:cap(dst)]
	j := len(dst)
	// The quotes noted go to a local table, not through qt (whose header
	// each append would load and store), and to qt at the end.
	var at []int32
	if qt != nil {
		at = qt.at
	}
	for i+8 <= len(b) && j+8 <= len(buf) {
		x := binary.LittleEndian.Uint64(b[i:])
		binary.LittleEndian.PutUint64(buf[j:], x)
		m := jsonscan.SpecialMask(x)
		if m == 0 {
			i, j = i+8, j+8
			continue
		}
		// A word whose only special bytes are whole \" escapes (a
		// message's quotes: most of what a record escapes) is unescaped
		// at once, its backslashes taken out and what is above each
		// shifted down over it.
		bs := jsonscan.ByteMask(x, '\\')
		if bs>>56 == 0 && m == bs|bs<<8 && jsonscan.ByteMask(x, '"') == bs<<8 {
			out, n := x, 0
			for r := bs; r != 0; r &= r - 1 {
				p := bits.TrailingZeros64(r)/8 - n // where it is now
				lo := uint64(1)<<(8*p) - 1
				out = out&lo | out>>8&^lo
				if qt != nil {
					at = append(at, int32(j+p))
				}
				n++
			}
			binary.LittleEndian.PutUint64(buf[j:], out)
			i, j = i+8, j+8-n
			continue
		}
		// The same with a \" that the word's last byte starts (one
		// escape in eight does): its quote is taken as the last byte.
		// Its shift loop is written out again: one loop serving both
		// branches made BenchmarkUnescapeRaw 7-29 % slower on three of
		// its six frames (medians of 6 interleaved runs).
		if bs>>56 != 0 && i+8 < len(b) && b[i+8] == '"' {
			in := bs &^ (0x80 << 56) // the escapes within the word
			if m == bs|in<<8 && jsonscan.ByteMask(x, '"') == in<<8 {
				out, n := x&^(0xff<<56)|'"'<<56, 0
				for r := in; r != 0; r &= r - 1 {
					p := bits.TrailingZeros64(r)/8 - n
					lo := uint64(1)<<(8*p) - 1
					out = out&lo | out>>8&^lo
					if qt != nil {
						at = append(at, int32(j+p))
					}
					n++
				}
				if qt != nil {
					at = append(at, int32(j+7-n))
				}
				binary.LittleEndian.PutUint64(buf[j:], out)
				i, j = i+9, j+8-n
				continue
			}
		}
		k := bits.TrailingZeros64(m) / 8
		i, j = i+k, j+k
		if b[i] != '\\' || i+1 >= len(b) {
			break
		}
		e := shortEscapes[b[i+1]]
		if e == 0 {
			break
		}
		if qt != nil {
			qt.at = at
			qt.note(b[i+1], j)
			at = qt.at
		}
		buf[j] = e
		i, j = i+2, j+1
	}
	if qt != nil {
		qt.at = at
	}
	return buf[:j], i
}

// readU reads \uXXXX (and a low surrogate after a high one) at b, as
// encoding/json does: a lone surrogate is U+FFFD. n is 0 when b does not
// hold a whole escape (or, with cut, when the partner of a surrogate may
// lie past the end of a head).
func readU(b []byte, cut bool) (rune, int) {
	r := hex4(b)
	if r < 0 {
		return 0, 0
	}
	if !utf16.IsSurrogate(r) {
		return r, 6
	}
	if len(b) >= 12 {
		if dec := utf16.DecodeRune(r, hex4(b[6:])); dec != utf8.RuneError {
			return dec, 12
		}
	} else if cut {
		return 0, 0
	}
	return utf8.RuneError, 6
}

// quoteTable is where the quotes of a raw frame's data are, noted as it
// is unescaped (a quote there is always an escape in the record), for the
// decoder to take its strings' ends from. It holds only while the data is
// clean: no escape made a backslash or a control byte, and none was \u, so
// each string in it ends at the next quote and is its own text (the data
// is valid UTF-8 whatever the record held: unescaping makes it so).
type quoteTable struct {
	want  bool    // the reader decodes frames: note their quotes
	at    []int32 // the quotes' indexes in data, ascending
	clean bool
	data  []byte // the data at describes; nil: none (not clean, or not noted)
}

// note is the escape `\` + string(c) written at data index j.
func (qt *quoteTable) note(c byte, j int) {
	switch c {
	case '"':
		qt.at = append(qt.at, int32(j))
	case '/':
	default:
		qt.clean = false
	}
}

// quotesOf is the quote table of data, nil when none was noted for it.
func (s *rawScratch) quotesOf(data []byte) []int32 {
	if d := s.quotes.data; len(d) == 0 || len(d) != len(data) || &d[0] != &data[0] || len(d) > math.MaxInt32 {
		return nil
	}
	if s.quotes.at == nil {
		return []int32{} // clean, and no quote at all
	}
	return s.quotes.at
}

// rawScratch is the buffer a reader unescapes raw frames into.
type rawScratch struct {
	quotes quoteTable
	buf    []byte
	// borrow: the frame's data may stay in buf or in the line (its reader
	// uses it before the next line), not copied out at its size.
	borrow bool
}

// maxScratch bounds the scratch buffer a reader keeps: a longer line is
// unescaped into a buffer of its own.
const maxScratch = 1 << 20

// hex4 reads `\uXXXX` at the start of b; -1 when it is not there.
func hex4(b []byte) rune {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// FileHeader reads the header of the journal in r (or says it is no
// journal) without reading on: a file of records without a header
// (`mcpscope record` output) gives an empty Header.
func FileHeader(r io.ReaderAt) (Header, error) {
	var h Header
	first := make([]byte, 0, 4096)
	buf := make([]byte, 4096)
	for off := int64(0); ; {
		n, err := r.ReadAt(buf, off)
		off += int64(n)
		first = append(first, buf[:n]...)
		if i := bytes.IndexByte(first, '\n'); i >= 0 {
			first = first[:i+1]
			break
		}
		if err != nil || len(first) > 1<<20 {
			break
		}
	}
	switch {
	case len(first) == 0:
		return h, fmt.Errorf("%w: the file is empty", ErrNotJournal)
	case IsHeader(first):
		return h, ReadHeader(bytes.TrimSuffix(first, []byte("\n")), &h)
	}
	if _, _, err := ParseLine(bytes.TrimSuffix(first, []byte("\n")), false, false); err != nil {
		return h, fmt.Errorf("%w: its first line is neither a journal header nor a record (%v)", ErrNotJournal, err)
	}
	return h, nil
}
