package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/testkit/nodetest"
)

// A journal that is not a regular file (a FIFO, which blocked for ever, or
// /dev/zero behind a symlink, which was read for ever) or standard input
// is the command line's mistake: every command that reads a journal says
// so at once and exits 2.
func TestJournalMustBeARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f.jsonl")
	nodetest.LoneFIFO(t, fifo)
	zero := filepath.Join(dir, "z.jsonl")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, says string }{
		{fifo, "is a named pipe (FIFO), not a regular file"},
		{zero, "is a device, not a regular file"},
		{"-", "not from standard input"},
	} {
		for _, argv := range [][]string{
			{"journal", c.path},
			{"journal", "--summary", c.path},
			{"export", "--format", "jsonl", c.path},
			{"diff", c.path, c.path},
			{"serve", c.path},
			{"replay", c.path, "http://127.0.0.1:1/mcp"},
		} {
			type result struct {
				code     int
				out, err string
			}
			done := make(chan result, 1)
			go func() {
				var out, errb bytes.Buffer
				code := Run(context.Background(), argv, &out, &errb)
				done <- result{code, out.String(), errb.String()}
			}()
			select {
			case r := <-done:
				says := c.says
				if c.path == "-" && argv[0] == "diff" {
					says = "" // diff reads its sides' names its own way: no such file
				}
				if r.code != exitUsage || !strings.Contains(r.err, says) || r.out != "" {
					t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 saying %q", argv, r.code, r.out, r.err, c.says)
				}
			case <-time.After(time.Minute):
				t.Fatalf("%q still reading a minute later", argv) // a hang guard: it answers at once
			}
		}
	}
}
