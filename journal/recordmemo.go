package journal

import (
	"bytes"
	"strconv"
	"time"
	"unicode/utf8"

	"mcpscope/internal/jsonscan"
	"mcpscope/transport"
)

// recordMemo is the journal's encoder: appendRecord, byte for byte, made
// cheaper for a flood by what it remembers of the last record. A flood's
// lines come in runs that share their time (one pipe read), direction,
// kind and meta, and differ from one another in a field or two, most
// often near their end. So what a record holds between its seq and its
// data is made once a run; and a line's escaped text is the last line's
// up to where the two part, escaped again only from the checkpoint
// before that. In a CPU profile of `record` under a flood, the journal's
// encoding went from 23 % to 14 %.
type recordMemo struct {
	seq SeqDigits
	// What comes between a record's seq and its data, up to the raw
	// string's opening quote, for t, dir, kind and pid (with nothing else
	// in meta); nil when there is none yet.
	t    time.Time
	dir  transport.Dir
	kind transport.Kind
	pid  int
	mid  []byte
	// The last data escaped, its escaped text, and checkpoints into both:
	// data[:p.i] escapes to out[:p.j]. The first is {0, 0}; then one
	// every memoStep bytes of data, at the start of a character (escaping
	// goes character by character, so text up to one escapes the same
	// whatever follows).
	data []byte
	out  []byte
	cps  []memoPoint
}

type memoPoint struct{ i, j int }

// SeqDigits writes the seqs of a journal's records in decimal: the seq
// after the last one written is the last one's digits counted up, which
// is all the lines of a run need (strconv was an eighth of the cost of
// encoding a flood's record).
type SeqDigits struct {
	seq  uint64
	text []byte
}

// Append appends seq in decimal to buf.
func (d *SeqDigits) Append(buf []byte, seq uint64) []byte {
	if seq != d.seq+1 || len(d.text) == 0 {
		d.text = strconv.AppendUint(d.text[:0], seq, 10)
	} else {
		i := len(d.text) - 1
		for ; i >= 0 && d.text[i] == '9'; i-- {
			d.text[i] = '0'
		}
		if i < 0 {
			d.text = append(d.text, 0)
			copy(d.text[1:], d.text)
			d.text[0] = '1'
		} else {
			d.text[i]++
		}
	}
	d.seq = seq
	return append(buf, d.text...)
}

const (
	memoMax  = 16 << 10 // longer data is encoded by appendRecord, not remembered
	memoStep = 16
)

// append appends appendRecord(seq, f) to buf.
func (m *recordMemo) append(buf []byte, seq uint64, f *transport.Frame) []byte {
	meta := f.Meta
	meta.PID = 0
	if len(f.Data) > memoMax || len(f.Data) == 0 && f.Kind != transport.Message || !metaEmpty(&meta) || !utf8.Valid(f.Data) {
		return appendRecord(buf, seq, f) // no raw string, or a rarer shape
	}
	if m.mid == nil || f.Time != m.t || f.Dir != m.dir || f.Kind != m.kind || f.Meta.PID != m.pid {
		const seq0 = `{"seq":0`
		m.t, m.dir, m.kind, m.pid = f.Time, f.Dir, f.Kind, f.Meta.PID
		m.mid = append(appendRecordHead(m.mid[:0], 0, f), `,"raw":"`...)
		m.mid = m.mid[:copy(m.mid, m.mid[len(seq0):])]
	}
	buf = append(buf, `{"seq":`...)
	buf = m.seq.Append(buf, seq)
	buf = append(buf, m.mid...)
	buf = append(buf, m.escape(f.Data)...)
	return append(buf, '"', '}', '\n')
}

// escape returns appendJSONText(s), valid until the next call.
func (m *recordMemo) escape(s []byte) []byte {
	if len(m.cps) == 0 {
		m.cps = append(m.cps, memoPoint{})
	}
	// Resume from the last checkpoint s shares with the last data: most
	// often its last one (one vector compare), else the last one before
	// where the two part.
	k := len(m.cps) - 1
	if at := m.cps[k].i; at > len(s) || !bytes.Equal(s[:at], m.data[:at]) {
		p := jsonscan.CommonPrefix(s, m.data)
		for k--; m.cps[k].i > p; k-- {
		}
	}
	m.cps = m.cps[:k+1]
	i := m.cps[k].i
	m.out = m.out[:m.cps[k].j]
	for i < len(s) {
		e := min(i+memoStep, len(s))
		for e < len(s) && !utf8.RuneStart(s[e]) {
			e++
		}
		m.out = appendJSONText(m.out, s[i:e])
		if i = e; i < len(s) {
			m.cps = append(m.cps, memoPoint{i, len(m.out)})
		}
	}
	m.data = append(m.data[:0], s...)
	return m.out
}
