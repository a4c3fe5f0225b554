package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"mcpscope/journal"
	"mcpscope/transport"
)

// kill -9 during a flood, then count: the journal holds a gapless prefix
// of what the server sent, at most its last line torn, and of the frames
// mcpscope had already shown (record printed them) it lost at most what
// can wait for one write: journal.QueueBytes.
func TestJournalAfterKill9DuringAFlood(t *testing.T) {
	state := t.TempDir()
	jpath := filepath.Join(state, "flood.jsonl")
	// 100,000 notifications a second: fast, but slow enough that record
	// keeps up, so what it shows is what the session took in.
	cmd := mcpscope(t, state, "record", "--era", "legacy", "--journal", jpath, "--", binary(t), "bench", "serve",
		"--burst", "0", "--rate", "100000", "--for", "60s")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	// record prints every frame as the store gets it: count what was shown.
	shown := make(chan uint64, 1)
	killAt := uint64(300_000)
	go func() {
		var last uint64
		r := bufio.NewReaderSize(stdout, 1<<16)
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				shown <- last
				return
			}
			if seq, ok := seqOf(line); ok {
				last = seq
			}
			if last == killAt {
				cmd.Process.Signal(syscall.SIGKILL)
			}
		}
	}()
	var lastShown uint64
	select {
	case lastShown = <-shown:
	case <-time.After(2 * time.Minute):
		t.Fatal("the flood never reached the kill")
	}
	cmd.Wait()
	if lastShown < killAt {
		t.Fatalf("record showed %d frames before it ended; the kill was due at %d", lastShown, killAt)
	}

	f, err := os.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		frames, next uint64 = 0, 1
		want                = 0 // the next flood notification, "n want"
		bytes        int
	)
	_, err = journal.Read(f, func(seq uint64, fr transport.Frame) error {
		if seq != next {
			return fmt.Errorf("frame %d follows %d: the journal has a gap", seq, next-1)
		}
		next++
		frames++
		if fr.Kind == transport.Message && fr.Dir == transport.In {
			if n, ok := floodNumber(fr.Data); ok {
				if n != want {
					return fmt.Errorf("notification n %d follows n %d: the journal lost one in the middle", n, want-1)
				}
				want++
				bytes = len(fr.Data)
			}
		}
		return nil
	})
	var damage *journal.Damage
	if err != nil && !(errors.As(err, &damage) && damage.Count == 0) {
		t.Fatalf("after kill -9: %v", err)
	}
	lost := uint64(0)
	if lastShown > frames {
		lost = lastShown - frames
	}
	t.Logf("kill -9 at frame %d shown: the journal holds %d frames (%d flood notifications, last line torn: %v); shown but not journaled: %d",
		lastShown, frames, want, damage != nil, lost)
	// A journal line of a flood notification is its data plus ~100 bytes
	// of record around it.
	if limit := uint64(journal.QueueBytes/(bytes+100) + 1); lost > limit {
		t.Fatalf("%d frames that were shown are not in the journal; one write's queue holds at most %d", lost, limit)
	}
}

// seqOf reads the seq of a record line (`{"seq":N,…`).
func seqOf(line []byte) (uint64, bool) {
	const p = `{"seq":`
	if len(line) < len(p) || string(line[:len(p)]) != p {
		return 0, false
	}
	i := len(p)
	for i < len(line) && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	n, err := strconv.ParseUint(string(line[len(p):i]), 10, 64)
	return n, err == nil
}

// floodNumber reads i from a flood notification ("data":"n i").
func floodNumber(data []byte) (int, bool) {
	const p = `"data":"n `
	for i := 0; i+len(p) <= len(data); i++ {
		if string(data[i:i+len(p)]) == p {
			j := i + len(p)
			k := j
			for k < len(data) && data[k] >= '0' && data[k] <= '9' {
				k++
			}
			n, err := strconv.Atoi(string(data[j:k]))
			return n, err == nil
		}
	}
	return 0, false
}
