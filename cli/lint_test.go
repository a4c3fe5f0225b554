package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gomcp "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/lint"
	"mcpscope/testkit/peers"
	"mcpscope/testkit/testservers"
)

type lintOut struct {
	Target   string         `json:"target"`
	Profiles []string       `json:"profiles"`
	Errors   int            `json:"errors"`
	Warnings int            `json:"warnings"`
	Findings []lint.Finding `json:"findings"`
	Checked  lint.Counts    `json:"checked"`
}

func lintJSON(t *testing.T, wantCode int, argv ...string) lintOut {
	t.Helper()
	code, out, errs := run(t, append([]string{"lint", "--json", "--no-journal"}, argv...)...)
	if code != wantCode {
		t.Fatalf("lint %q: exit %d, want %d\n%s\n%s", argv, code, wantCode, out, errs)
	}
	var o lintOut
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	return o
}

// ruleNames are the findings as "rule name pointer severity", sorted.
func ruleNames(fs []lint.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s %s %s", f.Rule, f.Name, f.Pointer, f.Severity))
	}
	slices.Sort(out)
	return out
}

// TestLintDemoClean: the embedded demo lints clean, in both eras and
// for every profile, and says so.
func TestLintDemoClean(t *testing.T) {
	demo := []string{"--", testservers.BuildMCPScope(t), "demo"}
	for _, era := range []string{"legacy", "modern"} {
		o := lintJSON(t, exitOK, append([]string{"--era", era}, demo...)...)
		if len(o.Findings) != 0 || o.Checked.Tools == 0 || len(o.Profiles) != 4 {
			t.Errorf("%s: %+v", era, o)
		}
	}
	code, out, _ := run(t, append([]string{"lint", "--no-journal"}, demo...)...)
	if code != exitOK || !strings.Contains(out, "no findings") || !strings.Contains(out, "claude-code, openai, gemini, strict") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

type anyArgs struct {
	Data any    `json:"data"`
	Name string `json:"name"`
}

// TestLintInterfaceField: a Go struct with an interface{} field, as
// mcp-go and the Go SDK publish it (a bare true property schema), is an
// error for Claude Code (inspector#1005), over HTTP and in both SDKs.
func TestLintInterfaceField(t *testing.T) {
	mg := mcpgoserver.NewMCPServer("mcp-go-any", "1.0.0", mcpgoserver.WithToolCapabilities(true))
	mg.AddTool(gomcp.NewTool("store", gomcp.WithDescription("stores data"), gomcp.WithInputSchema[anyArgs]()),
		func(context.Context, gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
			return gomcp.NewToolResultText("ok"), nil
		})
	mgts := httptest.NewServer(mcpgoserver.NewStreamableHTTPServer(mg, mcpgoserver.WithEndpointPath("/mcp")))
	t.Cleanup(func() { mgts.CloseClientConnections(); mgts.Close() })

	sdk := mcp.NewServer(&mcp.Implementation{Name: "go-sdk-any", Version: "1.0.0"}, nil)
	mcp.AddTool(sdk, &mcp.Tool{Name: "store", Description: "stores data"},
		func(context.Context, *mcp.CallToolRequest, anyArgs) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	sdkts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sdk }, nil))
	t.Cleanup(func() { sdkts.CloseClientConnections(); sdkts.Close() })

	for _, url := range []string{mgts.URL + "/mcp", sdkts.URL} {
		o := lintJSON(t, exitServerErr, url)
		var hit *lint.Finding
		for i, f := range o.Findings {
			if f.Rule == lint.BoolSchema {
				hit = &o.Findings[i]
			}
		}
		if hit == nil || hit.Severity != lint.Error || hit.Name != "store" || hit.Pointer != "/inputSchema/properties/data" ||
			!slices.Contains(hit.Hosts, "claude-code") || o.Errors == 0 {
			t.Errorf("%s: %+v", url, o.Findings)
		}
		// Gemini reads it unevenly, no more: a warning there.
		g := lintJSON(t, exitOK, "--profile", "gemini", url)
		if g.Errors != 0 || g.Warnings == 0 {
			t.Errorf("%s --profile gemini: %+v", url, g)
		}
	}
}

// TestLintServerEverything: the pinned server-everything's findings, each
// justified: gzip-file-as-resource takes its data as z.string().url(),
// format "uri", which OpenAI models refuse; zod 4's JSON Schema leaves
// additionalProperties open, which strict modes refuse and others accept.
func TestLintServerEverything(t *testing.T) {
	cmd, args := peers.EverythingStdio(t)
	o := lintJSON(t, exitServerErr, append([]string{"--"}, append([]string{cmd}, args...)...)...)
	var got []string
	for _, f := range o.Findings {
		switch {
		case f.Rule == lint.Format && f.Name == "gzip-file-as-resource" && f.Pointer == "/inputSchema/properties/data/format" && f.Severity == lint.Error:
		case f.Rule == lint.AdditionalProperties && f.Pointer == "/inputSchema" && f.Severity == lint.Warning &&
			slices.Equal(f.Hosts, []string{"openai", "strict"}):
		default:
			got = append(got, fmt.Sprintf("%+v", f))
		}
	}
	if len(got) > 0 || o.Errors != 1 || o.Warnings == 0 {
		t.Errorf("findings not accounted for: %s\n(all: %s)", strings.Join(got, "\n"), ruleNames(o.Findings))
	}
	// For Claude Code alone it is clean.
	if c := lintJSON(t, exitOK, append([]string{"--profile", "claude-code", "--"}, append([]string{cmd}, args...)...)...); len(c.Findings) != 0 {
		t.Errorf("claude-code: %s", ruleNames(c.Findings))
	}
}

// TestLintJUnit: a case per tool, resource, template and prompt; only
// errors fail, warnings too with --strict; the file is JUnit XML
// (valid for Jenkins, its suite named after the server).
func TestLintJUnit(t *testing.T) {
	cmd, args := peers.EverythingStdio(t)
	target := append([]string{"--"}, append([]string{cmd}, args...)...)
	dir := t.TempDir()
	for _, strict := range []bool{false, true} {
		report := filepath.Join(dir, fmt.Sprintf("lint-%v.xml", strict))
		argv := []string{"--junit", report}
		if strict {
			argv = append(argv, "--strict")
		}
		o := lintJSON(t, exitServerErr, append(argv, target...)...)
		xmllintSchema(t, report)
		j := readJUnit(t, report)
		if want := "mcpscope lint " + junitTarget("stdio: "+strings.Join(target[1:], " ")); j.Name != want || j.Suites[0].Name != want {
			t.Errorf("suite names %q, %q; want %q", j.Name, j.Suites[0].Name, want)
		}
		items := o.Checked.Tools + o.Checked.Resources + o.Checked.Templates + o.Checked.Prompts
		failing := map[string]bool{}
		for _, f := range o.Findings {
			if f.Severity == lint.Error || strict {
				failing[f.Kind+" "+f.Name] = true
			}
		}
		if j.Tests != items || j.Failures != len(failing) {
			t.Errorf("strict %v: %d cases (want %d), %d failures (want %d)", strict, j.Tests, items, j.Failures, len(failing))
		}
		for _, c := range j.Suites[0].Cases {
			kind := strings.TrimPrefix(c.Classname, "mcpscope.lint.")
			if (c.Failure != nil) != failing[kind+" "+c.Name] {
				t.Errorf("strict %v: case %s %s failure %+v", strict, kind, c.Name, c.Failure)
			}
		}
	}
}

// TestLintFiles: a journal (its listings and recorded results) and a
// --baseline snapshot lint as the live server does.
func TestLintFiles(t *testing.T) {
	dir := t.TempDir()
	demo := []string{"--", testservers.BuildMCPScope(t), "demo"}
	journal := filepath.Join(dir, "s.jsonl")
	if code, _, errs := run(t, append([]string{"tools", "--journal", journal}, demo...)...); code != exitOK {
		t.Fatalf("tools: exit %d\n%s", code, errs)
	}
	if o := lintJSON(t, exitOK, journal); len(o.Findings) != 0 || o.Checked.Tools == 0 {
		t.Errorf("journal: %+v", o)
	}
	base := filepath.Join(dir, "catalog.json")
	if code, _, errs := run(t, append([]string{"diff", "--baseline", base}, demo...)...); code != exitOK {
		t.Fatalf("baseline: exit %d\n%s", code, errs)
	}
	if o := lintJSON(t, exitOK, "--baseline", base); len(o.Findings) != 0 || o.Checked.Tools == 0 {
		t.Errorf("baseline: %+v", o)
	}
	// A snapshot whose tool lost its schema: an error, exit 1; its name,
	// with an escape in it, printed inert.
	var snap map[string]any
	b, _ := os.ReadFile(base)
	_ = json.Unmarshal(b, &snap)
	snap["tools"] = append(snap["tools"].([]any), map[string]any{"name": "lost\x1b[31m", "description": "x",
		"inputSchema": map[string]any{"$schema": "http://json-schema.org/draft-07/schema#"}})
	b, _ = json.Marshal(snap)
	if err := os.WriteFile(base, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := run(t, "lint", base)
	if code != exitServerErr || !strings.Contains(out, "empty-schema") || strings.ContainsRune(out, 0x1b) {
		t.Errorf("exit %d:\n%q", code, out)
	}
}

// TestLintUsage: mistakes are usage errors (2); a server that is not
// there is a connection error (3).
func TestLintUsage(t *testing.T) {
	for _, argv := range [][]string{
		{"lint", "--profile", "claude"},
		{"lint", "a.jsonl", "b.jsonl"},
		{"lint", "--baseline", "x.json", "http://127.0.0.1:1/mcp"},
		{"lint", "no-such-file.jsonl"},
	} {
		if code, _, errs := run(t, argv...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d\n%s", argv, code, exitUsage, errs)
		}
	}
	if code, _, errs := run(t, "lint", "--no-journal", "--no-oauth", "http://127.0.0.1:1/mcp"); code != exitTransport {
		t.Errorf("nothing listening: exit %d\n%s", code, errs)
	}
	code, out, _ := run(t, "lint", "--rules")
	for _, r := range lint.Rules {
		if code != exitOK || !strings.Contains(out, r.ID+" (") {
			t.Errorf("--rules: exit %d, no %s", code, r.ID)
		}
	}
	if strings.Contains(out, "http") {
		t.Errorf("--rules has a link:\n%s", out)
	}
}
