package proxy

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"mcpscope/transport"
)

// When the journal falls behind, the forwarders wait: the lines queued for
// it never pass recQueueBytes (of memory held) or recQueueFrames by more
// than the run that reached the bound, however fast they come; then they
// all reach the journal, in order.
func TestRecorderQueueIsBounded(t *testing.T) {
	for _, tc := range []struct {
		name          string
		lines, length int  // per run
		room          int  // the run's buffer: a reused one is as big as the most it held
		bulk          bool // the lines go in as one runLine
	}{
		{"frames", 100, len(floodNote), 0, false},
		{"frames in bulk", 100, len(floodNote), 0, true},
		{"bytes", 10, 10 << 10, 0, false},
		{"a line each in big buffers", 1, len(floodNote), 64 << 10, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jr, jw, err := os.Pipe() // a journal that takes nothing until we read it
			if err != nil {
				t.Fatal(err)
			}
			defer jr.Close()
			r := startRecorder(jw, "pipe", func(string) {})
			line := []byte(floodNote)
			if tc.length > len(line) {
				line = append(line[:len(line)-2], `,"pad":"`+strings.Repeat("x", tc.length-len(line)-10)+`"}}`...)
			}
			runs := 300
			if tc.lines == 1 {
				runs = 1000
			}
			var maxBytes, maxFrames, runBytes int
			done := make(chan struct{})
			go func() {
				defer close(done)
				run := &lineRun{}
				for range runs {
					run.t, run.dir, run.pid = time.Now(), transport.In, 1
					if cap(run.data) < tc.room {
						run.data = make([]byte, 0, tc.room)
					}
					if tc.bulk {
						run.addLines(bytes.Repeat(append(line, '\n'), tc.lines), tc.lines, transport.ViaHost)
					}
					for range tc.lines * btoi(!tc.bulk) {
						run.addLine(append(line, '\n'), transport.ViaHost, nil)
					}
					runBytes = max(runBytes, run.size())
					r.recordRun(run)
					r.signal()
					r.mu.Lock()
					maxBytes, maxFrames = max(maxBytes, r.qbytes), max(maxFrames, r.qframes)
					r.mu.Unlock()
					run = r.nextRun(run)
				}
			}()
			// Until the queue is at its bound (the next run waits), the
			// journal takes nothing.
			for {
				r.mu.Lock()
				full := r.qbytes > recQueueBytes || r.qframes >= recQueueFrames
				r.mu.Unlock()
				if full {
					break
				}
				select {
				case <-done:
					t.Fatal("all runs were queued with the journal stuck")
				default:
				}
				runtime.Gosched()
			}
			var journal bytes.Buffer
			copied := make(chan error, 1)
			go func() { _, err := io.Copy(&journal, jr); copied <- err }()
			<-done
			r.close()
			if err := <-copied; err != nil {
				t.Fatal(err)
			}
			if maxBytes > recQueueBytes+runBytes || maxFrames > recQueueFrames+tc.lines {
				t.Fatalf("queue reached %d bytes, %d frames (bound %d + %d, %d + %d)", maxBytes, maxFrames, recQueueBytes, runBytes, recQueueFrames, tc.lines)
			}
			recs := bytes.Split(bytes.TrimSuffix(journal.Bytes(), []byte{'\n'}), []byte{'\n'})
			if len(recs) != runs*tc.lines {
				t.Fatalf("journal has %d records, want %d", len(recs), runs*tc.lines)
			}
			for i, rec := range recs {
				if want := fmt.Sprintf(`{"seq":%d,`, i+1); !bytes.HasPrefix(rec, []byte(want)) {
					t.Fatalf("record %d: %.40s…", i+1, rec)
				}
			}
			t.Logf("queue peaked at %d bytes, %d frames", maxBytes, maxFrames)
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
