package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/session"
	"mcpscope/transport"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "j.jsonl")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func record(seq int, data string) string {
	return string(session.AppendRecord(nil, uint64(seq), transport.Frame{Time: time.Unix(1700000000, 0), Dir: transport.In, Kind: transport.Message, Data: []byte(data)}))
}

const header = `{"format":"mcpscope-journal/1","started":"2026-01-01T00:00:00Z","target":"stdio: srv","pid":1}` + "\n"

// mcpscope journal says what a file is: empty, a header alone, not a
// journal at all; it counts the frames it read, reports every line that
// is not a record by number and goes on past it.
func TestJournalCommandSaysWhatItRead(t *testing.T) {
	note := func(i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"%d"}}`, i)
	}
	damaged := header + record(1, note(1)) + "not a record\n" + record(3, note(3)) + `{"a":1}` + "\n" + record(5, note(5)) + `{"seq":6,"t":"`
	cases := []struct {
		name    string
		content string
		code    int
		want    []string
	}{
		{"empty", "", exitUsage, []string{"holds no frames and no journal header: it is empty"}},
		{"header only", header, exitOK, []string{"frames   0 (the journal has its header and nothing else"}},
		{"not a journal", `{"name":"pkg","version":"1.0.0"}` + "\n", exitUsage, []string{"is not an mcpscope journal", "neither a journal header nor a journal record"}},
		{"damaged", damaged, exitServerErr, []string{"frames   3 read", "in message       3", "line 3 is not a record", "line 5 is not a record",
			"line 7 is incomplete", "3 line(s) could not be read"}},
		{"record output", record(1, note(1)) + record(2, note(2)), exitOK, []string{"frames   2 read", "no journal header"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errb := run(t, "journal", writeFile(t, c.content))
			all := out + errb
			if code != c.code {
				t.Errorf("exit %d, want %d:\n%s", code, c.code, all)
			}
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("output lacks %q:\n%s", w, all)
				}
			}
		})
	}
}
