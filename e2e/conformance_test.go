package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/testkit/peers"
)

// confCheck is one entry of the suite's checks.json.
type confCheck struct {
	ID           string         `json:"id"`
	Status       string         `json:"status"`
	Description  string         `json:"description"`
	ErrorMessage string         `json:"errorMessage"`
	Details      map[string]any `json:"details"`
}

// runConformance runs one client scenario of the suite against the mcpscope
// binary and returns its checks; it fails the test on a non-zero exit or on
// any FAILURE or WARNING check (the suite's own pass rule).
func runConformance(t *testing.T, next bool, scenario, spec string) []confCheck {
	t.Helper()
	return runConformanceWith(t, next, scenario, spec, "", nil)
}

// runConformanceWith is runConformance with extra client flags and
// environment.
func runConformanceWith(t *testing.T, next bool, scenario, spec, flags string, env []string) []confCheck {
	t.Helper()
	node, cli := peers.Conformance(t, next)
	bin := binary(t)
	if strings.Contains(bin, " ") {
		t.Fatalf("the mcpscope binary's path %q has a space; the suite splits --command on spaces: set TMPDIR to a folder without one", bin)
	}
	out := t.TempDir()
	args := []string{cli, "client", "--command", bin + " client" + flags, "--scenario", scenario, "-o", out}
	if spec != "" {
		args = append(args, "--spec-version", spec)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Env = append(append(os.Environ(), "XDG_STATE_HOME="+t.TempDir()), env...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	err := cmd.Run()
	matches, _ := filepath.Glob(filepath.Join(out, scenario+"-*", "checks.json"))
	if err != nil || len(matches) != 1 {
		t.Fatalf("conformance %s (next=%v): %v; the suite's report:\n%s", scenario, next, err, log.String())
	}
	raw, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatalf("read the suite's checks for %s: %v", scenario, err)
	}
	var checks []confCheck
	if err := json.Unmarshal(raw, &checks); err != nil {
		t.Fatalf("%s is not the suite's checks.json: %v", matches[0], err)
	}
	for _, c := range checks {
		if c.Status == "FAILURE" || c.Status == "WARNING" {
			t.Errorf("conformance %s: check %s is %s: %s %s", scenario, c.ID, c.Status, c.Description, c.ErrorMessage)
		}
	}
	if t.Failed() {
		t.Logf("the suite's report:\n%s", log.String())
	}
	return checks
}

func TestConformanceClient(t *testing.T) {
	peers.Require(t)
	cases := []struct {
		suite, scenario, spec string
		next                  bool
	}{
		{"0.1.16", "initialize", "", false},
		{"0.1.16", "tools_call", "", false},
		{"0.1.16", "elicitation-sep1034-client-defaults", "", false},
		{"0.1.16", "sse-retry", "", false},
		{"0.2.0", "tools_call", "2026-07-28", true},
		{"0.2.0", "request-metadata", "2026-07-28", true},
		{"0.2.0", "sep-2322-client-request-state", "2026-07-28", true},
		{"0.2.0", "http-standard-headers", "2026-07-28", true},
		{"0.2.0", "http-custom-headers", "2026-07-28", true},
		{"0.2.0", "http-invalid-tool-headers", "2026-07-28", true},
		{"0.2.0", "json-schema-ref-no-deref", "2026-07-28", true},
		{"0.2.0", "json-schema-2020-12-preservation", "2026-07-28", true},
	}
	// One at a time: sse-retry measures our reconnect timing, and the
	// machine is shared.
	for _, tc := range cases {
		t.Run(tc.suite+"/"+tc.scenario, func(t *testing.T) {
			checks := runConformance(t, tc.next, tc.scenario, tc.spec)
			if tc.scenario == "sse-retry" {
				checkRetryTiming(t, checks)
			}
		})
	}
}

// checkRetryTiming holds our reconnect to a tighter window than the suite
// (which only rejects early ones): no sooner than retry (500 ms) minus its
// 50 ms tolerance, and promptly after, by 700 ms.
func checkRetryTiming(t *testing.T, checks []confCheck) {
	t.Helper()
	for _, c := range checks {
		if c.ID != "client-sse-retry-timing" {
			continue
		}
		d, ok := c.Details["actualDelayMs"].(float64)
		if !ok {
			t.Fatalf("sse-retry: the timing check carries no actualDelayMs: %+v", c)
		}
		if d < 450 || d > 700 {
			t.Errorf("sse-retry: reconnected %v ms after the server closed the stream; want 450–700 ms (retry: 500)", d)
		}
		t.Logf("sse-retry: reconnected after %v ms", d)
		return
	}
	t.Fatal("sse-retry: the suite reported no client-sse-retry-timing check")
}

// OAuth against the suite's authorization servers: a 403 insufficient_scope
// leads to a second authorization asking for the union of the scopes, and
// a person's path (loopback redirect, $BROWSER) works as the fetch does.
func TestConformanceOAuth(t *testing.T) {
	node, _ := peers.Conformance(t, true)
	browser := "BROWSER=" + node + " " + peers.Script(t, "fake-browser.mjs")
	cases := []struct {
		scenario, flags string
		env             []string
		want            []string // checks that must be there, SUCCESS
	}{
		{"auth/scope-step-up", "", nil, []string{"scope-step-up-escalation", "sep-2350-scope-union-on-reauth"}},
		{"auth/iss-wrong-issuer", "", nil, nil},
		{"auth/metadata-default", " --browser-login", []string{browser}, []string{"authorization-request", "token-request"}},
	}
	for _, tc := range cases {
		t.Run(tc.scenario+tc.flags, func(t *testing.T) {
			checks := runConformanceWith(t, true, tc.scenario, "2026-07-28", tc.flags, tc.env)
			for _, id := range tc.want {
				found := false
				for _, c := range checks {
					found = found || (c.ID == id && c.Status == "SUCCESS")
				}
				if !found {
					t.Errorf("no SUCCESS check %s in %+v", id, checks)
				}
			}
		})
	}
}
