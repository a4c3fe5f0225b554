package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/internal/shell"
	"mcpscope/testkit/peers"
	"mcpscope/testkit/testservers"
)

// hangGuard bounds a command that must end by itself: far above every
// limit the tests give, so only a hang trips it.
const hangGuard = 60 * time.Second

// runGuarded runs mcpscope with a private state directory and fails the
// test if it has not ended within hangGuard.
func runGuarded(t *testing.T, argv ...string) (code int, stdout, stderr string, took time.Duration) {
	t.Helper()
	return runGuardedIn(t, t.TempDir(), argv...)
}

func runGuardedIn(t *testing.T, state string, argv ...string) (code int, stdout, stderr string, took time.Duration) {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", state)
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	began := time.Now()
	go func() { done <- Run(context.Background(), argv, &out, &errb) }()
	select {
	case code = <-done:
	case <-time.After(hangGuard):
		t.Fatalf("mcpscope %v still running after %s (a hang)", argv, hangGuard)
	}
	return code, out.String(), errb.String(), time.Since(began)
}

// taskForeverHTTP is a 2025-11-25 Streamable HTTP server whose tools/call
// with params.task makes a task that stays "working" for ever (the id
// needs shell quoting); its tasks/result never answers.
func taskForeverHTTP(t *testing.T) string {
	task := `{"taskId":"job 1's","status":"working","createdAt":"` + time.Now().UTC().Format(time.RFC3339) + `","ttl":null,"pollInterval":60000}`
	s := testservers.StartScripted(t, func(w http.ResponseWriter, r *http.Request, id json.RawMessage, method string) {
		w.Header().Set("Content-Type", "application/json")
		switch method {
		case "tools/call":
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"task":` + task + `}}`))
		case "tasks/get":
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + task + `}`))
		case "tasks/result":
			<-r.Context().Done() // the task never ends
		default:
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{}}`))
		}
	})
	return s.URL
}

// A task that never ends is given up at --timeout with no status change, or
// at --max-timeout from the call's start, with exit 4, saying which limit
// and naming the task (shell-quoted) and how to come back to it: headless
// call --task, --json and task result, 2025-11-25 tasks and the 2026 tasks
// extension, stdio and HTTP. The servers suggest polling every 60 s, longer
// than any limit: the wait is cut to the limit. (Before: polled for ever.)
func TestTaskFollowIsBounded(t *testing.T) {
	quotedID := shell.Quote("job 1's")
	stdio := func(mode string) []string {
		return []string{"--no-journal", "--", testservers.BuildHostile(t), "-mode", mode}
	}
	cases := []struct {
		name  string
		argv  func(t *testing.T) []string
		limit string // which limit must be named
		want  []string
	}{
		{"2025 stdio idle", func(t *testing.T) []string {
			return append([]string{"call", "echo", "--task", "--timeout", "2s", "--max-timeout", "4s"}, stdio("task-forever")...)
		}, "idle limit", []string{"ends with the stdio server"}},
		{"2025 stdio hard", func(t *testing.T) []string {
			return append([]string{"call", "echo", "--task", "--timeout", "30s", "--max-timeout", "3s"}, stdio("task-forever")...)
		}, "hard limit", nil},
		{"2026 stdio idle", func(t *testing.T) []string {
			return append([]string{"call", "echo", "--task", "--timeout", "2s", "--max-timeout", "4s"}, stdio("modern-task-forever")...)
		}, "idle limit", nil},
		{"2026 stdio idle, a new message every poll", func(t *testing.T) []string {
			return append([]string{"call", "echo", "--task", "--timeout", "2s", "--max-timeout", "20s"}, stdio("modern-task-chatty")...)
		}, "idle limit", []string{"only a new status resets it"}},
		{"2026 stdio hard", func(t *testing.T) []string {
			return append([]string{"call", "echo", "--timeout", "30s", "--max-timeout", "3s"}, stdio("modern-task-forever")...)
		}, "hard limit", nil},
		{"2025 HTTP", func(t *testing.T) []string {
			return []string{"call", "x", "--task", "--timeout", "2s", "--max-timeout", "4s", "--no-journal", taskForeverHTTP(t)}
		}, "idle limit", []string{"pick it up again with: mcpscope"}},
		{"2025 HTTP task result", func(t *testing.T) []string {
			return []string{"task", "result", "job 1's", "--timeout", "30s", "--max-timeout", "3s", "--no-journal", taskForeverHTTP(t)}
		}, "hard limit", []string{"mcpscope task result " + quotedID}},
		{"2026 HTTP", func(t *testing.T) []string {
			url := peers.StartTSv2Tasks(t)
			return []string{"call", "report", "steps=1000", "intervalMs=60000", "--task", "--timeout", "2s", "--max-timeout", "4s", "--no-journal", url}
		}, "idle limit", []string{"pick it up again with: mcpscope"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			argv := c.argv(t)
			code, out, errb, took := runGuarded(t, argv...)
			if code != exitTimeout {
				t.Fatalf("exit %d, want %d (timeout)\nstdout: %s\nstderr: %s", code, exitTimeout, out, errb)
			}
			want := append([]string{c.limit}, c.want...)
			if strings.Contains(c.name, "2025") || strings.Contains(c.name, "stdio") {
				want = append(want, quotedID)
			}
			for _, w := range want {
				if !strings.Contains(errb, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errb)
				}
			}
			t.Logf("ended after %s", took.Round(100*time.Millisecond))
		})
	}
}

// With --json the bound is a JSON error on stdout: exit 4, kind timeout,
// and the hint names the task to come back to.
func TestTaskFollowBoundJSON(t *testing.T) {
	code, out, errb, _ := runGuarded(t, "call", "x", "--task", "--json", "--timeout", "2s", "--max-timeout", "4s", "--no-journal", taskForeverHTTP(t))
	var e struct {
		Error struct {
			Message string `json:"message"`
			Exit    int    `json:"exit"`
			Kind    string `json:"kind"`
			Hint    string `json:"hint"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &e); err != nil || code != exitTimeout || e.Error.Exit != exitTimeout || e.Error.Kind != "timeout" {
		t.Fatalf("exit %d, stdout %q (%v), stderr %s", code, out, err, errb)
	}
	// The 2025 HTTP task has a rejoin record (the session's id is kept), so
	// the way back is mcpscope rejoin.
	if !strings.Contains(e.Error.Message, "idle limit") || !strings.Contains(e.Error.Hint, "task "+shell.Quote("job 1's")) ||
		!strings.Contains(e.Error.Hint, "pick it up again with: mcpscope rejoin task-") {
		t.Fatalf("error %+v", e.Error)
	}
}

// A task past the ttl its server gave it is gone: following it stops there,
// long before the limits, with exit 4.
func TestTaskFollowHonoursTTL(t *testing.T) {
	code, out, errb, took := runGuarded(t, "call", "echo", "--timeout", "40s", "--max-timeout", "50s", "--no-journal", "--",
		testservers.BuildHostile(t), "-mode", "modern-task-ttl")
	if code != exitTimeout || !strings.Contains(errb, "outlived the ttl") || strings.Contains(errb, "pick it up again") {
		t.Fatalf("exit %d after %s\nstdout: %s\nstderr: %s", code, took, out, errb)
	}
	if took > 30*time.Second {
		t.Fatalf("took %s: the ttl was 1.5 s", took)
	}
}

// An unknown resultType (2026-07-28) is an invalid result: exit 1 with the
// resultType named, sanitised, while the journal keeps the frame as it came
// and a note saying why the call failed (before: no note).
func TestUnknownResultTypeFails(t *testing.T) {
	journal := filepath.Join(t.TempDir(), "j.jsonl")
	code, out, errb, _ := runGuarded(t, "call", "echo", "--journal", journal, "--", testservers.BuildHostile(t), "-mode", "modern-bad-resulttype")
	if code != exitServerErr || !strings.Contains(errb, "invalid result: unknown resultType") || strings.Contains(out, "what is this") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %q", code, out, errb)
	}
	if strings.ContainsRune(errb, 0x1b) {
		t.Fatalf("stderr carries a raw escape: %q", errb)
	}
	b, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	kept := false
	for _, line := range bytes.Split(b, []byte("\n")) {
		var f struct {
			Raw string `json:"raw"`
		}
		kept = kept || json.Unmarshal(line, &f) == nil && strings.Contains(f.Raw, `"resultType":"bogus\u001b[2J"`)
	}
	if !kept {
		t.Fatalf("the journal lacks the frame as it came:\n%s", b)
	}
	noted := false
	for _, line := range bytes.Split(b, []byte("\n")) {
		var f struct {
			Meta struct {
				Event, Detail string
			} `json:"meta"`
		}
		noted = noted || json.Unmarshal(line, &f) == nil && f.Meta.Event == "note" &&
			strings.Contains(f.Meta.Detail, "tools/call") && strings.Contains(f.Meta.Detail, `unknown resultType "bogus\x1b[2J"`)
	}
	if !noted {
		t.Fatalf("the journal has no note saying why the call failed:\n%s", b)
	}
}

// A task that reports completed without its result: tasks/get is asked
// again at once, and what it says decides, never how soon a poll came.
func TestTaskCompletedWithoutResult(t *testing.T) {
	bin := testservers.BuildHostile(t)
	code, out, errb, _ := runGuarded(t, "call", "echo", "--no-journal", "--", bin, "-mode", "modern-task-bare")
	if code != exitOK || !strings.Contains(out, "fetched again") {
		t.Fatalf("bare once: exit %d\nstdout: %s\nstderr: %s", code, out, errb)
	}
	code, out, errb, _ = runGuarded(t, "call", "echo", "--no-journal", "--", bin, "-mode", "modern-task-empty")
	if code != exitServerErr || !strings.Contains(errb, "carried no result") {
		t.Fatalf("never a result: exit %d\nstdout: %s\nstderr: %s", code, out, errb)
	}
}

// mcpscope rejoin of a task that never ends is bounded the same way, and
// says again how to come back.
func TestTaskRejoinIsBounded(t *testing.T) {
	url, state := taskForeverHTTP(t), t.TempDir()
	if code, out, errb, _ := runGuardedIn(t, state, "call", "x", "--task", "--timeout", "30s", "--max-timeout", "2s", "--no-journal", url); code != exitTimeout {
		t.Fatalf("call: exit %d\n%s\n%s", code, out, errb)
	}
	code, out, errb, _ := runGuardedIn(t, state, "rejoin", "task-job_1_s", "--timeout", "2s", "--max-timeout", "30s", "--no-journal")
	if code != exitTimeout || !strings.Contains(errb, "idle limit") || !strings.Contains(errb, "mcpscope rejoin task-job_1_s") {
		t.Fatalf("rejoin: exit %d\nstdout: %s\nstderr: %s", code, out, errb)
	}
}
