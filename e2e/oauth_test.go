package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcpscope/testkit/peers"
)

// OAuth as a person meets it, against the TypeScript SDK's own OAuth
// example (its demo authorization server approves at once): the first
// command logs in through the loopback redirect and $BROWSER, and journals
// each step without the token; the second one uses the saved login and
// needs no browser at all.
func TestOAuthLoginAgainstTSExample(t *testing.T) {
	url := peers.StartTSv1OAuth(t)
	node := peers.Node(t)
	state := t.TempDir()
	run := func(browser, journal string) (string, string, error) {
		cmd := mcpscope(t, state, "tools", "--journal", journal, url)
		cmd.Env = append(cmd.Env, "BROWSER="+browser)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), err
	}
	j1 := filepath.Join(t.TempDir(), "first.jsonl")
	out, errs, err := run(node+" "+peers.Script(t, "fake-browser.mjs"), j1)
	if err != nil || !strings.Contains(out, "greet") || !strings.Contains(errs, "wants authorization") {
		t.Fatalf("first login: %v\n%s\n%s", err, out, errs)
	}
	journal, _ := os.ReadFile(j1)
	for _, step := range []string{"401 from", "protected resource metadata from", "registered as client", "token from"} {
		if !bytes.Contains(journal, []byte("oauth: "+step)) {
			t.Errorf("the journal lacks the step %q", step)
		}
	}
	login, _ := filepath.Glob(filepath.Join(state, "mcpscope", "oauth", "*.json"))
	if len(login) != 1 {
		t.Fatalf("want one saved login, got %v", login)
	}
	saved, _ := os.ReadFile(login[0])
	if tok := savedToken(t, saved); tok == "" || bytes.Contains(journal, []byte(tok)) {
		t.Fatalf("the token is missing from the saved login or present in the journal (token %q)", tok)
	}

	j2 := filepath.Join(t.TempDir(), "second.jsonl")
	out, errs, err = run("false", j2) // no browser: the saved login must do
	if err != nil || !strings.Contains(out, "greet") || strings.Contains(errs, "wants authorization") {
		t.Fatalf("second run: %v\n%s\n%s", err, out, errs)
	}
	if journal, _ := os.ReadFile(j2); !bytes.Contains(journal, []byte("oauth: using the registration and token saved")) {
		t.Fatalf("the second run did not say it used the saved login:\n%s", journal)
	}
}

func savedToken(t *testing.T, b []byte) string {
	t.Helper()
	var c struct {
		AccessToken string `json:"accessToken"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("the saved login is not JSON: %v", err)
	}
	return c.AccessToken
}
