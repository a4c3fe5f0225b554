package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcpscope/bench"
)

// bigLine is the size of the huge frame in bigJournal: large enough that
// copies of it stand out of the binary's own few megabytes. hugeLine is
// the size a hostile journal was seen with (the 300 MB of issue 37).
const (
	bigLine  = 64 << 20
	hugeLine = 300 << 20
)

// bigJournal writes a journal of one line of about bigLine bytes (the
// bench's big-line rows read the same).
func bigJournal(t *testing.T, path string, bigLine int, request bool) {
	t.Helper()
	if err := bench.WriteBigLineJournal(path, bigLine, request); err != nil {
		t.Fatal(err)
	}
}

// A journal with one huge line is read by journal, export (jsonl, har,
// otlp) and diff in memory within 1.5 times the line, plus the binary's
// own: the line is held once (decoded in place, its parts slices of it),
// and what is written is encoded a piece at a time. export jsonl still
// copies it byte for byte.
func TestBigLineMemory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.jsonl")
	bigJournal(t, path, bigLine, false)
	checkBigLinePeaks(t, dir, path, bigLine, 24<<20)
	in, _ := os.ReadFile(path)
	out, _ := os.ReadFile(filepath.Join(dir, "out.jsonl"))
	if !bytes.Equal(in, out) {
		t.Errorf("export jsonl: %d bytes for a %d-byte journal, not the same bytes", len(out), len(in))
	}
	if har, _ := os.ReadFile(filepath.Join(dir, "out.har")); !json.Valid(har) || !bytes.Contains(har, []byte(`with é\\n`)) {
		t.Errorf("export har: %d bytes, valid JSON %v", len(har), json.Valid(har))
	}
}

// The same at the size seen in the wild, 300 MB, as a result and as a
// request: every reader peaks at 1.5 times the line + 64 MiB at most
// (before: diff held a huge request twice, 2.3 times the line). Not with
// -short: it writes 300 MB journals and their exports.
func TestHugeLineMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 300 MB journal")
	}
	for _, request := range []bool{false, true} {
		t.Run(map[bool]string{false: "result", true: "request"}[request], func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "huge.jsonl")
			bigJournal(t, path, hugeLine, request)
			checkBigLinePeaks(t, dir, path, hugeLine, bench.BigLineAllowance)
		})
	}
}

// checkBigLinePeaks runs each reader of the journal at path (one line of
// about line bytes) as a child and holds its peak resident set (rusage)
// to 1.5 × line + allowance.
func checkBigLinePeaks(t *testing.T, dir, path string, line, allowance int64) {
	t.Helper()
	st, _ := os.Stat(path)
	limit := line*3/2 + allowance
	for _, args := range bench.BigLineReaders(path, dir) {
		cmd := mcpscope(t, t.TempDir(), args...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		peak, err := runMeasured(t, cmd)
		if err != nil {
			t.Fatalf("%s: %v\n%s", args[0:1], err, errb.String())
		}
		t.Logf("%s: peak %d MiB for a %d MiB line (journal %d MiB)", strings.Join(append([]string{args[0]}, args[2:]...), " "), peak>>20, line>>20, st.Size()>>20)
		if peak > limit {
			t.Errorf("%v: peak memory %d MiB, want under %d MiB (1.5 × the %d MiB line + %d MiB)", args, peak>>20, limit>>20, line>>20, allowance>>20)
		}
	}
}
