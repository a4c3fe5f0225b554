package cli

import (
	"bytes"
	"io"
	"os"
	"sync/atomic"

	"github.com/charmbracelet/x/term"
	"github.com/muesli/cancelreader"
)

// quitKeys lets q end a wait before the inspector draws (connecting to a
// server that never answers): the terminal goes raw and a watcher reads
// its keys; q calls quit, and so does ctrl+c (interrupt), which raw mode
// turns into a byte. stop puts the terminal back and returns once the
// watcher has let go of stdin, so the inspector reads every key after it.
// On anything but a terminal it does nothing. While raw, notes written
// through crlf keep their line starts.
// Every other key typed meanwhile is kept, in order, and stop returns them:
// the inspector takes them as if typed once it draws (ui.Options.Typeahead).
func quitKeys(in io.Reader, crlf *atomic.Bool, quit func(interrupt bool)) (stop func() (typed []byte)) {
	f, ok := in.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return func() []byte { return nil }
	}
	st, err := term.MakeRaw(f.Fd())
	if err != nil {
		return func() []byte { return nil }
	}
	cr, err := cancelreader.NewReader(f)
	if err != nil {
		_ = term.Restore(f.Fd(), st)
		return func() []byte { return nil }
	}
	crlf.Store(true)
	done := make(chan struct{})
	var kept []byte
	go func() {
		defer close(done)
		var b [64]byte
		for {
			n, err := cr.Read(b[:])
			if i := bytes.IndexAny(b[:n], "qQ\x03"); i >= 0 {
				quit(b[i] == 3)
				return
			}
			if len(kept) < 4096 {
				kept = append(kept, b[:n]...)
			}
			if err != nil {
				return
			}
		}
	}()
	return func() []byte {
		var typed []byte
		if cr.Cancel() {
			<-done // bounded: a cancelled read returns at once
			typed = kept
		}
		cr.Close()
		crlf.Store(false)
		_ = term.Restore(f.Fd(), st)
		return typed
	}
}
