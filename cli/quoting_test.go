package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/connect"
	"mcpscope/internal/shell"
	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/testkit/shelltest"
	"mcpscope/transport"
)

// The command lines mcpscope prints hold words from servers, journals,
// state-store records and config files. Each is checked the way a person
// would use it: pasted into a real shell, it must read back as exactly the
// intended argv and run nothing; shown, it must hold nothing a terminal
// acts on.

// pasted is the command line in out that follows prefix, up to the end of
// its line (or the last suffix on it, when given), read back by bash; it fails t
// when there is none, when it is unsafe on a terminal, or when pasting it
// ran anything.
func pasted(t *testing.T, out, prefix, suffix string) []string {
	t.Helper()
	if i := unsafeAt(out); i >= 0 {
		t.Fatalf("output not terminal-safe at byte %d: %q", i, out)
	}
	_, line, ok := strings.Cut(out, prefix)
	if !ok {
		t.Fatalf("no %q in output:\n%s", prefix, out)
	}
	line, _, _ = strings.Cut(line, "\n")
	if suffix != "" {
		i := strings.LastIndex(line, suffix)
		if i < 0 {
			t.Fatalf("no %q after %q in %q", suffix, prefix, line)
		}
		line = line[:i]
	}
	return shelltest.Words(t, "bash", t.TempDir(), line)
}

// taskJournal is a journal of one tasks/get whose result says the task id
// is input_required, asking for keys.
func taskJournal(t *testing.T, id string, keys []string) string {
	t.Helper()
	reqs := map[string]any{}
	for _, k := range keys {
		reqs[k] = map[string]any{"method": "elicitation/create", "params": map[string]any{"message": "ok?"}}
	}
	get, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": map[string]any{"taskId": id}})
	res, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{"taskId": id, "status": "input_required", "inputRequests": reqs}})
	at := time.Unix(1700000000, 0)
	j := header + string(journal.AppendRecord(nil, 1, transport.Frame{Time: at, Dir: transport.Out, Kind: transport.Message, Data: get})) +
		string(journal.AppendRecord(nil, 2, transport.Frame{Time: at, Dir: transport.In, Kind: transport.Message, Data: res}))
	return writeFile(t, j)
}

// A task that waits for input names the way back: the task id and the
// server's input keys are words of the printed command, whatever they
// hold; an id that reads as a flag gets no `task result` line.
func TestTaskHintQuotesTheServersWords(t *testing.T) {
	keys := slices.DeleteFunc(slices.Clone(shelltest.Hostile), func(k string) bool { return k == "" })
	const url = "http://127.0.0.1:9/mcp?token=CANARY-hint"
	for _, id := range shelltest.Hostile {
		if id == "" {
			continue
		}
		t.Run(fmt.Sprintf("%q", id), func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", t.TempDir())
			s, _, err := session.Load(taskJournal(t, id, keys))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			tasks := s.Tasks()
			if len(tasks) != 1 || len(tasks[0].InputRequests) != len(keys) {
				t.Fatalf("the journal's task did not load: %+v", tasks)
			}
			// As the session has them: JSON made invalid UTF-8 U+FFFD.
			id := tasks[0].TaskID
			var answers []string
			for _, k := range slices.Sorted(maps.Keys(tasks[0].InputRequests)) {
				answers = append(answers, "--answer", k+"=<json>")
			}
			stopped := errors.New("stopped")

			// No rejoin record here: the task is fetched by its id.
			var b bytes.Buffer
			printError(&b, withTaskHint(stopped, s, id, url))
			if strings.Contains(b.String(), "CANARY") {
				t.Fatalf("the URL's secret is in the hint: %s", b.String())
			}
			if shell.IsFlag(id) {
				if strings.Contains(b.String(), "pick it up again") {
					t.Fatalf("a command line for an id that reads as a flag: %s", b.String())
				}
			} else {
				want := append(append([]string{"mcpscope", "task", "result", id}, answers...), transport.RedactURL(url))
				if got := pasted(t, b.String(), "pick it up again with: ", ""); !slices.Equal(got, want) {
					t.Fatalf("the hint reads as\n%q\nwant\n%q\n(printed: %s)", got, want, b.String())
				}
			}

			// With the record, the way back is rejoin.
			if err := statestore.Default().Put(statestore.Detached{Handle: protocol.TaskHandle(id), TaskID: id, Target: transport.RedactURL(url),
				Transport: "http", Method: "tools/call", Started: time.Now()}); err != nil {
				t.Fatal(err)
			}
			b.Reset()
			printError(&b, withTaskHint(stopped, s, id, url))
			want := append([]string{"mcpscope", "rejoin", protocol.TaskHandle(id)}, answers...)
			if got := pasted(t, b.String(), "pick it up again with: ", ""); !slices.Equal(got, want) {
				t.Fatalf("the rejoin hint reads as\n%q\nwant\n%q\n(printed: %s)", got, want, b.String())
			}

			// `mcpscope tasks` (2026) lists the record with both ways back.
			var out bytes.Buffer
			cmd := &cobra.Command{}
			cmd.SetOut(&out)
			if err := listKnownTasks(cmd, s, url, false); err != nil {
				t.Fatal(err)
			}
			want = []string{"mcpscope", "rejoin", protocol.TaskHandle(id)}
			if shell.IsFlag(id) {
				if got := pasted(t, out.String(), "  (", ")"); !slices.Equal(got, want) {
					t.Fatalf("the listing reads as %q, want %q\n%s", got, want, out.String())
				}
				return
			}
			if got := pasted(t, out.String(), "  (", " …, or "); !slices.Equal(got, []string{"mcpscope", "task", "get", id}) {
				t.Fatalf("the listing's task get reads as %q\n%s", got, out.String())
			}
			if got := pasted(t, out.String(), " …, or ", ")"); !slices.Equal(got, want) {
				t.Fatalf("the listing's rejoin reads as %q, want %q\n%s", got, want, out.String())
			}
		})
	}
}

// Error hints put what a server or a record said into flags, quoted.
func TestErrorHintsQuote(t *testing.T) {
	for _, w := range shelltest.Hostile {
		t.Run(fmt.Sprintf("%q", w), func(t *testing.T) {
			var b bytes.Buffer
			printError(&b, &session.Unanswered{Key: w, Method: "elicitation/create", Why: "no answer"})
			if got, want := pasted(t, b.String(), "answer it with ", " (or --answers FILE)"), []string{"--answer", w + "=<json>"}; !slices.Equal(got, want) {
				t.Errorf("unanswered: %q, want %q", got, want)
			}
			b.Reset()
			printError(&b, &connect.MissingSecretError{Name: w, Ref: "header:" + w})
			if got, want := pasted(t, b.String(), "pass ", " again"), []string{"-H", w + ": …"}; !slices.Equal(got, want) {
				t.Errorf("missing header: %q, want %q", got, want)
			}
			b.Reset()
			printError(&b, &transport.RedirectError{Status: 302, From: "http://a/mcp", To: "http://b/", Origin: w, Home: "http://a"})
			if got, want := pasted(t, b.String(), "follow the redirect with ", ""), []string{"--allow-redirect", w}; !slices.Equal(got, want) {
				t.Errorf("redirect: %q, want %q", got, want)
			}
			b.Reset()
			printError(&b, &connect.MissingSecretError{Name: "X", Ref: "env:" + w})
			if unsafeAt(b.String()) >= 0 || !strings.Contains(b.String(), "again") {
				t.Errorf("missing env: %q", b.String())
			}
		})
	}
}

// The journal hint and open's replay confirmation (a recorded stdio line
// runs as sh -c LINE) show exactly what they name.
func TestJournalHintAndReplayConfirmationQuote(t *testing.T) {
	for _, w := range shelltest.Hostile {
		if w == "" {
			continue
		}
		t.Run(fmt.Sprintf("%q", w), func(t *testing.T) {
			var b bytes.Buffer
			journalHint(&b, "the session's journal", w)
			arg := w
			if shell.IsFlag(w) {
				arg = "./" + w
			}
			if got, want := pasted(t, b.String(), "read it back with: ", ")"), []string{"mcpscope", "open", arg}; !slices.Equal(got, want) {
				t.Errorf("journal hint: %q, want %q", got, want)
			}

			line := "node server.js " + w
			cmd := &cobra.Command{Use: "open"}
			lv, err := liveTarget(cmd, &connFlags{}, "", nil, "stdio: "+line)
			if err != nil {
				t.Fatal(err)
			}
			if lv.live.Missing != "" {
				return // redacted (w looked like a secret): nothing to run
			}
			if !lv.live.Confirm {
				t.Fatal("a recorded command runs without asking")
			}
			if got, want := pasted(t, lv.live.Target+"\n", "stdio: ", ""), []string{"sh", "-c", line}; !slices.Equal(got, want) {
				t.Errorf("confirmation shows %q, want %q", got, want)
			}
		})
	}
}

// A copied command line names a config file's header by quoting it, and
// the secret's variable stays a reference the person's shell expands.
func TestTargetLineQuotesConfigWords(t *testing.T) {
	evil := "X-`touch pwned`-$(touch pwned)"
	sp := connect.Spec{Headers: map[string]string{evil + "-Token": "CANARY-tl", evil: "v;touch pwned"},
		Command: []string{"node", "s.js", "--name", "a'b\nc"}, Env: []string{"MODE=$(touch pwned)"}}
	line := targetLine(sp)
	if strings.Contains(line, "CANARY") {
		t.Fatalf("the secret is in %s", line)
	}
	os.Unsetenv(shell.VarName(evil + "-Token"))
	got := shelltest.Words(t, "bash", t.TempDir(), line)
	want := []string{"-H", evil + ": v;touch pwned", "-H", evil + "-Token: ", "-e", "MODE=$(touch pwned)", "--", "node", "s.js", "--name", "a'b\nc"}
	if !slices.Equal(got, want) {
		t.Fatalf("targetLine %s reads as\n%q\nwant\n%q", line, got, want)
	}
	if unsafeAt(line) >= 0 {
		t.Fatalf("not terminal-safe: %q", line)
	}
}
