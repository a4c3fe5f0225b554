// Package journaltest writes frames as a journal file, the way mcpscope
// writes one, for tests that load, open or follow it.
package journaltest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"mcpscope/journal"
	"mcpscope/transport"
)

// Write writes hdr (its Format filled in when empty) and frames, numbered
// from 1, to a new file called name under t's temporary folder and returns
// its path (the name shows where a view names the recording).
func Write(t testing.TB, name string, hdr journal.Header, frames ...transport.Frame) string {
	t.Helper()
	if hdr.Format == "" {
		hdr.Format = journal.Format
	}
	b, err := json.Marshal(hdr)
	if err != nil {
		t.Fatal(err)
	}
	buf := append(b, '\n')
	for i, f := range frames {
		buf = journal.AppendRecord(buf, uint64(i+1), f)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, buf, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
