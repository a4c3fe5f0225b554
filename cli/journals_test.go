package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	journalsum "mcpscope/artifact/journals"
	"mcpscope/testkit/testservers"
)

// journals lists what real sessions saved, newest first, with their calls
// and errors; a journal that changed is read again, the others come from
// the cache.
func TestJournalsListsSavedSessions(t *testing.T) {
	bin := testservers.BuildStdio(t)
	state := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	if code, _, errb := runIn(t, state, "journals"); code != exitOK || !strings.Contains(errb, "no journals yet") {
		t.Fatalf("before any session: exit %d, %q", code, errb)
	}
	if code, _, errb := runIn(t, state, "call", "echo", "message=hi", "--", bin); code != exitOK {
		t.Fatalf("call echo: exit %d: %s", code, errb)
	}
	if code, _, errb := runIn(t, state, "call", "fail", "--", bin); code != exitServerErr {
		t.Fatalf("call fail: exit %d: %s", code, errb)
	}
	list := func() []journalsum.Summary {
		t.Helper()
		code, out, errb := runIn(t, state, "journals", "--json")
		if code != exitOK {
			t.Fatalf("journals --json: exit %d: %s", code, errb)
		}
		var all []journalsum.Summary
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var s journalsum.Summary
			if err := json.Unmarshal([]byte(line), &s); err != nil {
				t.Fatalf("not a JSON line %q: %v", line, err)
			}
			all = append(all, s)
		}
		return all
	}
	all := list()
	if len(all) != 2 {
		t.Fatalf("want the 2 sessions' journals, got %d: %+v", len(all), all)
	}
	failed, ok := all[0], all[1] // newest first
	if failed.Errors != 1 || ok.Errors != 0 || failed.Calls < 2 || ok.Calls < 2 || failed.Era == "" ||
		!strings.Contains(failed.Target, "goserver") || failed.Server == "" || failed.Problem != "" {
		t.Fatalf("want the fail session (1 error) before the echo session (none), both with their calls and era: %+v", all)
	}
	for _, s := range all { // each session left its index beside its journal, and the listing counts it
		if st, err := os.Stat(s.Path + ".idx"); err != nil || s.IndexSize != st.Size() || s.IndexSize == 0 {
			t.Fatalf("%s: index_size %d, the index file: %v %v", s.Path, s.IndexSize, st, err)
		}
	}
	cache := filepath.Join(os.Getenv("XDG_CACHE_HOME"), "mcpscope", "journals.json")
	b, err := os.ReadFile(cache)
	if err != nil {
		t.Fatalf("the summaries were not cached: %v", err)
	}
	// Mark the cached summary, to see it is what the next listing shows.
	if err := os.WriteFile(cache, []byte(strings.Replace(string(b), `"server":"`+failed.Server, `"server":"from the cache`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	failed.Server = "from the cache"

	// A changed journal is read again; an unchanged one comes from the cache.
	f, err := os.OpenFile(ok.Path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("not a record\n")
	f.Close()
	again := list()
	if again[1].Path != ok.Path || !strings.Contains(again[1].Problem, "not a record") || again[1].Calls != ok.Calls {
		t.Fatalf("the damaged journal was not read again: %+v", again[1])
	}
	if again[0] != failed {
		t.Fatalf("the unchanged journal's summary changed: %+v, was %+v", again[0], failed)
	}

	code, out, _ := runIn(t, state, "journals", "-n", "1")
	if code != exitOK || !strings.Contains(out, "STARTED") || strings.Count(strings.TrimSpace(out), "\n") != 1 {
		t.Fatalf("journals -n 1: exit %d, want a header and one row:\n%s", code, out)
	}
}
