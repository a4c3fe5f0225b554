package transport

import (
	"bytes"
	"io"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Raw hands the pipes over untouched: CRLF, empty lines, a last line with
// no newline and stderr come back byte for byte, and no In frame is made.
func TestStdioRawPassesBytesAsTheyAre(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]byte{}
	var wg sync.WaitGroup
	wg.Add(2)
	raw := func(stream string, r io.Reader) {
		defer wg.Done()
		b, _ := io.ReadAll(r)
		mu.Lock()
		got[stream] = b
		mu.Unlock()
	}
	s, rec := stdioStart(t, StdioOptions{Command: "sh", Args: []string{"-c", "cat; printf 'err\\r\\n' >&2"}, Raw: raw}, nil)
	in := []byte("{\"a\":1}\r\n\n  \n{\"b\":2}\nno newline")
	if err := s.WriteRaw(in[:10]); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteRaw(in[10:]); err != nil {
		t.Fatal(err)
	}
	s.closeStdin()
	stdioWaitDone(t, s)
	wg.Wait()
	if !bytes.Equal(got["stdout"], in) || string(got["stderr"]) != "err\r\n" {
		t.Fatalf("stdout %q stderr %q", got["stdout"], got["stderr"])
	}
	for _, f := range rec.all() {
		if f.Dir != Local {
			t.Fatalf("Raw made a frame: %+v", f)
		}
	}
	if err := s.WriteRaw([]byte("x\n")); err == nil {
		t.Fatal("WriteRaw after exit succeeded")
	}
}

// Signal reaches the server's process group.
func TestStdioSignal(t *testing.T) {
	s, _ := stdioStart(t, StdioOptions{Command: "sleep", Args: []string{"30"}, Raw: func(string, io.Reader) {}}, nil)
	s.Signal(syscall.SIGINT)
	select {
	case <-s.Done():
	case <-time.After(stdioWait):
		t.Fatal("SIGINT did not end the server")
	}
	if _, sig, exited := s.ExitStatus(); !exited || sig != "interrupt" {
		t.Fatalf("exit: %q %v", sig, exited)
	}
}
