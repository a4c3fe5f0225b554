package journal

import (
	"sync/atomic"
	"time"
)

// stampSecond is a record time's text up to its second, and its zone,
// for one second in one location: what every record in that second
// shares.
type stampSecond struct {
	sec  int64
	loc  *time.Location
	head []byte // 2006-01-02T15:04:05
	zone []byte // Z07:00
}

// lastStamp is the second the last record time fell in. Replaced whole on
// a new second (or location), never changed: any goroutine may read it.
var lastStamp atomic.Pointer[stampSecond]

// appendStamp appends t as t.AppendFormat(buf, time.RFC3339Nano) does,
// byte for byte (TestJournalStampIsRFC3339Nano), at a fraction of its
// cost: a flood's records share their second, so only the fraction is
// written each time. Formatting the time whole was a fifth of a record
// line's cost.
func appendStamp(buf []byte, t time.Time) []byte {
	sec, loc := t.Unix(), t.Location()
	s := lastStamp.Load()
	if s == nil || s.sec != sec || s.loc != loc {
		if s = newStampSecond(t, sec, loc); s == nil {
			return t.AppendFormat(buf, time.RFC3339Nano)
		}
		lastStamp.Store(s)
	}
	buf = append(buf, s.head...)
	if ns := t.Nanosecond(); ns != 0 {
		// RFC3339Nano's fraction: 9 digits, trailing zeros dropped.
		var d [10]byte
		d[0] = '.'
		for i := 9; i > 0; i-- {
			d[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := len(d)
		for d[n-1] == '0' {
			n--
		}
		buf = append(buf, d[:n]...)
	}
	return append(buf, s.zone...)
}

// newStampSecond is t's second; nil for a year RFC3339 does not write in
// four digits (then the time is formatted whole).
func newStampSecond(t time.Time, sec int64, loc *time.Location) *stampSecond {
	if y := t.Year(); y < 0 || y > 9999 {
		return nil
	}
	b := t.Truncate(time.Second).AppendFormat(nil, time.RFC3339)
	const head = len("2006-01-02T15:04:05")
	if len(b) <= head {
		return nil
	}
	return &stampSecond{sec: sec, loc: loc, head: b[:head:head], zone: b[head:]}
}
