package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/bench"
	"mcpscope/testkit/testservers"
)

// TestRecordPrintsTheJournalLines: record prints each frame as the line
// its journal holds, byte for byte (it copies the journal's line rather
// than encoding the frame again), with and without --filter.
func TestRecordPrintsTheJournalLines(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	server := testservers.BuildStdio(t)
	for _, filter := range []string{"", "~k response"} {
		journal := filepath.Join(t.TempDir(), "r.jsonl")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		out := &stopAtLine{want: []byte(`\"result\"`), stop: cancel}
		var errb bytes.Buffer
		args := []string{"record", "--journal", journal}
		if filter != "" {
			args = append(args, "--filter", filter)
		}
		code := Run(ctx, append(args, "--", server), out, &errb)
		cancel()
		if code != exitOK {
			t.Fatalf("record %q: exit %d\n%s", filter, code, errb.String())
		}
		b, err := os.ReadFile(journal)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(b), "\n")[1:] // after the header
		printed := strings.SplitAfter(out.String(), "\n")
		if filter == "" {
			if got, want := out.String(), strings.Join(lines, ""); got != want {
				t.Fatalf("record printed\n%s\nthe journal holds\n%s", got, want)
			}
			continue
		}
		held := map[string]bool{}
		for _, l := range lines {
			held[l] = true
		}
		n := 0
		for _, l := range printed {
			if l == "" {
				continue
			}
			n++
			if !held[l] || !strings.Contains(l, `"dir":"in"`) || !strings.Contains(l, `\"result\"`) {
				t.Errorf("record --filter %q printed a line that is not a response line of its journal: %s", filter, l)
			}
		}
		if n == 0 {
			t.Errorf("record --filter %q printed nothing", filter)
		}
	}
}

// TestRecordWritesTheCPUProfile: with MCPSCOPE_BENCH_CPUPROFILE set,
// record writes a CPU profile of its run there (gzipped, as pprof writes
// it), as journal and proxy do.
func TestRecordWritesTheCPUProfile(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	prof := filepath.Join(t.TempDir(), "record.prof")
	t.Setenv(bench.CPUProfileEnv, prof)
	server := testservers.BuildStdio(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := &stopAtLine{want: []byte(`\"result\"`), stop: cancel}
	var errb bytes.Buffer
	if code := Run(ctx, []string{"record", "--journal", filepath.Join(t.TempDir(), "r.jsonl"), "--", server}, out, &errb); code != exitOK {
		t.Fatalf("record: exit %d\n%s", code, errb.String())
	}
	b, err := os.ReadFile(prof)
	if err != nil {
		t.Fatalf("no CPU profile: %v", err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("the CPU profile is not a gzipped pprof file: % x", b[:min(len(b), 8)])
	}
}
