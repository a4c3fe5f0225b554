package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"mcpscope/conformance"
	"mcpscope/testkit/testservers"
)

// runT runs mcpscope in-process with argv against the Go SDK test server.
func runT(t *testing.T, argv ...string) (code int, stdout, stderr string) {
	t.Helper()
	bin := testservers.BuildStdio(t)
	return runIn(t, t.TempDir(), append(append([]string{}, argv...), "--no-journal", "--", bin)...)
}

func TestHeadlessExitCodes(t *testing.T) {
	cases := []struct {
		name string
		argv []string
		code int
		want string // in stdout or stderr
	}{
		{"tools json", []string{"tools", "--json"}, exitOK, `"name":"echo"`},
		{"call typed args", []string{"call", "echo", "message=42"}, exitOK, "42"},
		{"tool isError", []string{"call", "fail", "message=nope"}, exitServerErr, "isError"},
		{"unknown tool, server says", []string{"call", "no-such-tool", "--no-check"}, exitServerErr, "unknown tool"},
		{"unknown tool", []string{"call", "no-such-tool"}, exitUsage, "lists no tool named"},
		{"unknown tool, typed args", []string{"call", "no-such-tool", "a=1"}, exitUsage, "no tool named"},
		{"unknown tool, near one", []string{"call", "ech", "message=x"}, exitUsage, `"ech"; did you mean echo?`},
		{"required argument missing", []string{"call", "echo"}, exitUsage, "echo needs the required argument message (string), which the call does not give; pass it as message=VALUE (or in --args '{\"message\":\"…\"}'), or send the call as it is with --no-check"},
		{"required argument missing, sent anyway", []string{"call", "echo", "--no-check"}, exitServerErr, "message"},
		{"required argument in --args", []string{"call", "echo", "--args", `{"message":"hi"}`}, exitOK, "hi"},
		{"wrong type in --args", []string{"call", "echo", "--args", `{"message":5}`}, exitUsage, "argument message of echo is a number, and its inputSchema allows string"},
		{"wrong type in --args, sent anyway", []string{"call", "echo", "--args", `{"message":5}`, "--no-check"}, exitServerErr, "message"},
		{"bad argument type, sent anyway", []string{"call", "slow", "seconds=soon", "--no-check"}, exitServerErr, "seconds"},
		{"bad argument type", []string{"call", "slow", "seconds=soon"}, exitUsage, "not a number"},
		{"read", []string{"read", "demo://readme"}, exitOK, "demo server"},
		{"prompt", []string{"prompt", "greeting", "name=Ada"}, exitOK, "Ada"},
		{"ping", []string{"ping"}, exitOK, "pong"},
		{"elicitation answered by flag", []string{"call", "ask", "message=hi", "--answer",
			`elicitation/create={"action":"accept","content":{"name":"Ada","age":36,"colour":"green"}}`}, exitOK, `"name":"Ada"`},
		{"elicitation without an answer", []string{"call", "ask", "message=hi"}, exitServerErr, "elicitation"},
		{"idle timeout", []string{"call", "delay", "ms=5000", "--timeout", "200ms"}, exitTimeout, "timed out"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runT(t, c.argv...)
			if code != c.code || !strings.Contains(out+errs, c.want) {
				t.Fatalf("exit %d (want %d), want %q in output\nstdout: %.400s\nstderr: %.400s", code, c.code, c.want, out, errs)
			}
		})
	}
}

func TestHeadlessUsageAndTransportErrors(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	var out, errb bytes.Buffer
	if code := Run(context.Background(), []string{"tools", "--bogus"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "unknown flag: --bogus") {
		t.Fatalf("unknown flag: exit %d, %s", code, errb.String())
	}
	errb.Reset()
	if code := Run(context.Background(), []string{"tools", "--no-journal", "http://127.0.0.1:1/mcp"}, &out, &errb); code != exitTransport ||
		!strings.Contains(errb.String(), "127.0.0.1:1") {
		t.Fatalf("unreachable server: exit %d, %s", code, errb.String())
	}
	errb.Reset()
	if code := Run(context.Background(), []string{"tools", "--no-journal", "--", "/no/such/server"}, &out, &errb); code != exitTransport ||
		!strings.Contains(errb.String(), "/no/such/server") {
		t.Fatalf("missing command: exit %d, %s", code, errb.String())
	}
}

// runIn runs mcpscope in-process with argv and the given state dir.
func runIn(t *testing.T, state string, argv ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", state)
	var out, errb bytes.Buffer
	code = Run(context.Background(), argv, &out, &errb)
	return code, out.String(), errb.String()
}

func TestConformanceUsage(t *testing.T) {
	t.Setenv(conformance.EnvScenario, "")
	var out, errOut bytes.Buffer
	if code := Run(context.Background(), []string{"client", "http://127.0.0.1:1/mcp"}, &out, &errOut); code != exitUsage ||
		!strings.Contains(errOut.String(), conformance.EnvScenario) {
		t.Fatalf("without a scenario: exit %d, stderr %q; want a usage error naming %s", code, errOut.String(), conformance.EnvScenario)
	}
	if code := Run(context.Background(), []string{"client"}, &out, &errOut); code != exitUsage {
		t.Fatalf("without a URL: exit %d, want %d", code, exitUsage)
	}
}

// With --json, errors are JSON on stdout too, with the same exit codes.
func TestJSONErrors(t *testing.T) {
	code, out, _ := runT(t, "call", "no-such-tool", "--no-check", "--json")
	var e struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Exit    int    `json:"exit"`
			Kind    string `json:"kind"`
		} `json:"error"`
	}
	if code != exitServerErr || json.Unmarshal([]byte(out), &e) != nil || e.Error.Exit != exitServerErr || e.Error.Kind != "server" ||
		e.Error.Code >= 0 || !strings.Contains(e.Error.Message, "no-such-tool") {
		t.Fatalf("a server error with --json: exit %d, stdout %q", code, out)
	}
	// A tool's isError result is the output: one JSON document, exit 1.
	code, out, _ = runT(t, "call", "fail", "--json")
	var res struct {
		IsError bool `json:"isError"`
	}
	if code != exitServerErr || json.Unmarshal([]byte(out), &res) != nil || !res.IsError {
		t.Fatalf("a tool error with --json: exit %d, want %d and the result alone on stdout: %q", code, exitServerErr, out)
	}
	code, out, _ = runT(t, "call", "delay", "ms=5000", "--timeout", "200ms", "--json")
	if code != exitTimeout || json.Unmarshal([]byte(out), &e) != nil || e.Error.Code != exitTimeout || e.Error.Kind != "timeout" {
		t.Fatalf("a timeout with --json: exit %d, stdout %q", code, out)
	}
}
