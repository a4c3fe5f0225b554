package cli

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"mcpscope/artifact/diff"
	"mcpscope/artifact/replay"
	"mcpscope/testkit/peers"
	"mcpscope/testkit/testservers"
)

// readJUnit parses a JUnit file back, as a CI system would.
func readJUnit(t *testing.T, path string) junitSuites {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var j junitSuites
	if err := xml.Unmarshal(b, &j); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b)
	}
	if j.XMLName.Local != "testsuites" || len(j.Suites) != 1 || len(j.Suites[0].Cases) != j.Tests {
		t.Fatalf("shape: %+v", j)
	}
	return j
}

// xmllintSchema checks a JUnit file as Jenkins' xUnit plugin would: valid
// against its junit-10.xsd (test/junit), with xmllint. Without xmllint the
// test skips here, after its other checks (fails under
// MCPSCOPE_REQUIRE_PEERS=1).
func xmllintSchema(t *testing.T, path string) {
	t.Helper()
	root, ok := peers.ModuleRoot()
	if !ok {
		t.Fatal("the module root (for test/junit/junit-10.xsd) not found from the working directory")
	}
	xsd := filepath.Join(root, "test", "junit", "junit-10.xsd")
	bin := peers.Tool(t, "xmllint")
	if out, err := exec.Command(bin, "--noout", "--schema", xsd, path).CombinedOutput(); err != nil {
		b, _ := os.ReadFile(path)
		t.Errorf("xmllint --schema %s %s: %v\n%s\n%s", xsd, path, err, out, b)
	}
}

// TestDiffJUnit: diff --junit writes a test case per tool, resource,
// template and prompt: a breaking change fails its case, a change that is
// not breaking passes and says what changed in its output, and
// --junit-drift-fails fails every change. The report is valid for Jenkins
// and its suite names the server.
func TestDiffJUnit(t *testing.T) {
	bin := testservers.BuildStdio(t)
	dir := t.TempDir()
	base := filepath.Join(dir, "catalog.json")
	if code, _, errs := run(t, "diff", "--baseline", base, "--", bin); code != exitOK {
		t.Fatalf("writing the baseline: exit %d\n%s", code, errs)
	}
	// The baseline had a tool the demo lacks now (named with a terminal
	// escape): breaking. It lacked a tool the demo has now, and another
	// tool's description differed: drift that breaks nothing.
	var snap map[string]any
	b, _ := os.ReadFile(base)
	if err := json.Unmarshal(b, &snap); err != nil {
		t.Fatal(err)
	}
	items := 0
	for _, k := range []string{"tools", "resources", "resourceTemplates", "prompts"} {
		if l, ok := snap[k].([]any); ok {
			items += len(l)
		}
	}
	tools := snap["tools"].([]any)
	if len(tools) < 3 {
		t.Fatalf("the test server lists %d tools, the test needs 3", len(tools))
	}
	added := tools[0].(map[string]any)["name"].(string)
	edited := tools[1].(map[string]any)
	edited["description"] = "what it said before\x1b[31m"
	snap["tools"] = append(tools[1:], map[string]any{"name": "gone\x1b[31m", "inputSchema": map[string]any{"type": "object"}})
	b, _ = json.Marshal(snap)
	if err := os.WriteFile(base, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, driftFails := range []bool{false, true} {
		report := filepath.Join(dir, fmt.Sprintf("junit-%v.xml", driftFails))
		argv := []string{"diff", "--baseline", base, "--junit", report}
		if driftFails {
			argv = append(argv, "--junit-drift-fails")
		}
		code, out, errs := run(t, append(argv, "--", bin)...)
		if code != exitServerErr {
			t.Fatalf("drift: exit %d\n%s\n%s", code, out, errs)
		}
		xmllintSchema(t, report)
		j := readJUnit(t, report)
		wantFailures := 1
		if driftFails {
			wantFailures = 3
		}
		if j.Tests != items+1 || j.Failures != wantFailures || j.Suites[0].Failures != wantFailures {
			t.Fatalf("drift fails %v: tests %d (want %d), failures %d (want %d)", driftFails, j.Tests, items+1, j.Failures, wantFailures)
		}
		if want := "mcpscope diff " + junitTarget("stdio: "+bin); j.Name != want || j.Suites[0].Name != want {
			t.Errorf("suite names %q, %q; want %q", j.Name, j.Suites[0].Name, want)
		}
		seen := map[string]bool{}
		for _, c := range j.Suites[0].Cases {
			text := c.Name + c.SystemOut
			if c.Failure != nil {
				text += c.Failure.Message + c.Failure.Text
			}
			if strings.ContainsRune(text, 0x1b) {
				t.Errorf("an escape in case %q: %+v", c.Name, c)
			}
			switch {
			case strings.HasPrefix(c.Name, "gone"):
				seen["gone"] = true
				if c.Classname != "mcpscope.diff.tool" || c.Failure == nil || c.Failure.Type != "breaking" ||
					!strings.Contains(c.Failure.Message, "removed tool gone") {
					t.Errorf("the removed tool: %+v %+v", c, c.Failure)
				}
			case c.Name == added || c.Name == edited["name"]:
				seen[c.Name] = true
				op := map[bool]string{true: "added tool ", false: "changed tool "}[c.Name == added]
				switch {
				case driftFails && (c.Failure == nil || c.Failure.Type != "drift" || !strings.HasPrefix(c.Failure.Message, op+c.Name)):
					t.Errorf("with --junit-drift-fails, %s: %+v %+v", c.Name, c, c.Failure)
				case !driftFails && (c.Failure != nil || !strings.Contains(c.SystemOut, "drift (not breaking): "+op+c.Name)):
					t.Errorf("a change that breaks nothing, %s, must pass and say so: %+v %+v", c.Name, c, c.Failure)
				}
			case c.Failure != nil || c.SystemOut != "":
				t.Errorf("an unchanged item: %+v %+v", c, c.Failure)
			}
		}
		if len(seen) != 3 {
			t.Errorf("cases for the changes: %v", seen)
		}
	}
	if code, _, errs := run(t, "diff", "--baseline", base, "--junit-drift-fails", "--", bin); code != exitUsage ||
		!strings.Contains(errs, "give --junit FILE") {
		t.Errorf("--junit-drift-fails without --junit: exit %d\n%s", code, errs)
	}
}

// TestDiffJUnitRiskier: a tool whose hints now say it destroys fails its
// case as riskier, though nothing in it breaks; a description edit passes.
func TestDiffJUnitRiskier(t *testing.T) {
	snap := func(tools ...string) *diff.Snapshot {
		s := &diff.Snapshot{Source: "stdio: node server.js", Capabilities: json.RawMessage(`{"tools":{}}`)}
		for _, tl := range tools {
			s.Tools = append(s.Tools, json.RawMessage(tl))
		}
		return s
	}
	a := snap(`{"name":"wipe","inputSchema":{"type":"object"},"annotations":{"destructiveHint":false}}`,
		`{"name":"read","description":"old","inputSchema":{"type":"object"}}`)
	b := snap(`{"name":"wipe","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}`,
		`{"name":"read","description":"new","inputSchema":{"type":"object"}}`)
	r := diff.Compare(a, b)
	path := filepath.Join(t.TempDir(), "riskier.xml")
	if err := writeJUnit(path, diffJUnit(r, a, b, false)); err != nil {
		t.Fatal(err)
	}
	xmllintSchema(t, path)
	j := readJUnit(t, path)
	if j.Tests != 2 || j.Failures != 1 || j.Name != "mcpscope diff stdio: node server.js" {
		t.Fatalf("counts: %+v", j)
	}
	for _, c := range j.Suites[0].Cases {
		switch c.Name {
		case "wipe":
			if c.Failure == nil || c.Failure.Type != "riskier" || !strings.Contains(c.Failure.Message, "changed tool wipe (riskier)") ||
				!strings.Contains(c.Failure.Text, "/annotations/destructiveHint false → true  (riskier)") {
				t.Errorf("the riskier tool: %+v %+v", c, c.Failure)
			}
		case "read":
			if c.Failure != nil || !strings.Contains(c.SystemOut, "changed tool read") {
				t.Errorf("the edited description: %+v %+v", c, c.Failure)
			}
		}
	}
}

// TestJUnitTarget: a suite name holds the target on one inert line, cut in
// the middle when long.
func TestJUnitTarget(t *testing.T) {
	long := "http://very-long-host-name.example.internal:8443/" + strings.Repeat("x", 80) + "/server.js"
	for in, want := range map[string]string{
		"http://127.0.0.1:3001/mcp":    "http://127.0.0.1:3001/mcp",
		"node  server.js\n--x\x1b[31m": "node server.js⏎--x␛[31m",
		long:                           long[:30] + "…" + long[len(long)-29:],
		"":                             "",
	} {
		got := junitTarget(in)
		if got != want {
			t.Errorf("junitTarget(%q) = %q, want %q", in, got, want)
		}
	}
	if n := newJUnit("lint", "").Name; n != "mcpscope lint" {
		t.Errorf("no target: %q", n)
	}
}

// TestReplayJUnit: replay --junit writes a case per replayed call: the
// same pass, a skipped one is skipped, one that differs fails with its
// differences, server text sanitised.
func TestReplayJUnit(t *testing.T) {
	sum := &replay.Summary{Results: []replay.Result{
		{Seq: 1, Method: "initialize", Status: "skipped", Reason: "the handshake"},
		{Seq: 3, Method: "tools/call", Name: "echo", Status: "same"},
		{Seq: 5, Method: "tools/call", Name: "add\x1b]0;x\x07", Status: "differs", Differences: []replay.Difference{
			{What: "error", Detail: "now -32602: bad\x1b[2J input"},
			{What: "result", Fields: []diff.Field{{Path: "/content/0/text", Op: "changed", Before: []byte(`"3"`), After: []byte(`"4"`)}}},
		}},
	}}
	path := filepath.Join(t.TempDir(), "replay.xml")
	if err := writeJUnit(path, replayJUnit(sum, "http://127.0.0.1:3001/mcp")); err != nil {
		t.Fatal(err)
	}
	xmllintSchema(t, path)
	j := readJUnit(t, path)
	if j.Tests != 3 || j.Failures != 1 || j.Suites[0].Skipped != 1 || j.Name != "mcpscope replay http://127.0.0.1:3001/mcp" {
		t.Fatalf("counts: %+v", j)
	}
	f := j.Suites[0].Cases[2].Failure
	if f == nil || !strings.Contains(f.Message, "error: now -32602: bad") ||
		!strings.Contains(f.Text, `result: ~ /content/0/text "3" → "4"`) ||
		strings.ContainsAny(j.Suites[0].Cases[2].Name+f.Message+f.Text, "\x1b\x07") {
		t.Fatalf("failure: %+v", f)
	}
	if j.Suites[0].Cases[0].Skipped == nil || j.Suites[0].Cases[1].Failure != nil {
		t.Fatalf("cases: %+v", j.Suites[0].Cases)
	}
	if err := writeJUnit(filepath.Join(t.TempDir(), "no", "such", "dir.xml"), replayJUnit(sum, "")); err == nil ||
		!strings.Contains(err.Error(), "--junit") {
		t.Fatalf("an unwritable path: %v", err)
	}
}
