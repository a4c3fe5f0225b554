package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/testkit/testservers"
)

// Piped, tools prints each description whole, on its tool's one line: its
// line breaks become spaces, and what it carries for a terminal is made
// inert.
func TestToolsPipedWhole(t *testing.T) {
	long := strings.Repeat("a word or two, ", 12) + "the end"
	desc := "First line.\n\n  " + long + "\r\nlast line \x1b]52;c;aGk=\x07here"
	srv := mcp.NewServer(&mcp.Implementation{Name: "long", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "wordy", Description: desc},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "terse", Description: "short"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	url := testservers.StartHTTP(t, testservers.HTTPOpts{Server: srv})

	code, out, errs := run(t, "tools", "--no-journal", url)
	if code != exitOK {
		t.Fatalf("tools: exit %d\n%s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want one line per tool, got %d:\n%s", len(lines), out)
	}
	var wordy string
	for _, l := range lines {
		if strings.HasPrefix(l, "wordy ") {
			wordy = l
		}
	}
	want := "First line. " + long + " last line ␛]52;c;aGk=␇here"
	if got := strings.TrimSpace(strings.TrimPrefix(wordy, "wordy")); got != want {
		t.Errorf("wordy is listed as\n%q\nwant\n%q", got, want)
	}
	if strings.ContainsAny(out, "\x1b\x07\r") {
		t.Errorf("raw control characters reached the output: %q", out)
	}
}
