package proxy

import (
	"bufio"
	"bytes"
	"io"
	"time"
)

// lineReader cuts a byte stream into lines without holding any back: a
// line goes out as soon as its newline has arrived. Lines already in the
// buffer together are handed over one by one and then flush is called, so
// a caller can write them with one system call; flush also runs before
// every read that may wait, so nothing sits in a batch while the peer is
// quiet.
type lineReader struct {
	br  *bufio.Reader
	max int // longest line handed whole to line; longer ones go to long in pieces
	// bulk, when set, is offered all the whole lines buffered, in one
	// slice valid only during the call; it takes them by returning true,
	// else they go to line one by one.
	bulk func(b []byte) bool
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// hasLine reports whether a whole line is buffered.
func (lr *lineReader) hasLine() bool {
	b, _ := lr.br.Peek(lr.br.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}

// run reads until the end of the stream. line gets each line with its
// terminator (the last one may have none); its slice is valid only during
// the call. A line over max is handed to long in pieces as they arrive:
// first is true for the first piece, last for the one that ends it.
func (lr *lineReader) run(line func(b []byte), long func(piece []byte, first, last bool), flush func()) error {
	var acc []byte
	streaming := false
	for {
		if !streaming && acc == nil {
			if lr.bulk != nil {
				b, _ := lr.br.Peek(lr.br.Buffered())
				if k := bytes.LastIndexByte(b, '\n'); k >= 0 && lr.bulk(b[:k+1]) {
					lr.br.Discard(k + 1)
					continue
				}
			}
			if !lr.hasLine() {
				flush()
			}
		}
		frag, err := lr.br.ReadSlice('\n')
		complete := err == nil
		switch {
		case streaming:
			if len(frag) > 0 || complete {
				long(frag, false, complete)
			}
			streaming = !complete
		case complete && acc == nil:
			line(frag)
		case len(frag) == 0:
		case len(acc)+len(frag) > lr.max:
			flush()
			long(acc, true, false)
			acc = nil
			long(frag, false, complete)
			streaming = !complete
		default:
			if acc == nil {
				acc = make([]byte, 0, 2*len(frag))
			}
			acc = append(acc, frag...)
			if complete {
				line(acc)
				acc = nil
			}
		}
		if err == nil || err == bufio.ErrBufferFull {
			continue
		}
		if len(acc) > 0 {
			line(acc) // the last line, without a newline
		}
		if streaming {
			long(nil, false, true)
		}
		flush()
		return err
	}
}

// trimEOL drops a line's terminator: what the journal keeps of a line.
func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// wireLock serializes whole lines onto one pipe. Unlike a mutex, a caller
// that must not wait forever (a viewer's command) can give up.
type wireLock chan struct{}

func newWireLock() wireLock { return make(wireLock, 1) }

func (l wireLock) lock()   { l <- struct{}{} }
func (l wireLock) unlock() { <-l }

func (l wireLock) lockWithin(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case l <- struct{}{}:
		return true
	case <-t.C:
		return false
	}
}
