package cli

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"
)

// Help is written as paragraphs (the formatter wraps them), and printed
// wrapped to 80 columns when stdout is not a terminal, with no trailing
// spaces.
func TestHelpParagraphsWrapped(t *testing.T) {
	var all []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		all = append(all, c)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRoot())
	for _, c := range all {
		for _, para := range strings.Split(c.Long, "\n\n") {
			if strings.Contains(para, "\n") {
				t.Errorf("%s: its help has a hand-wrapped paragraph (write paragraphs, the formatter wraps them):\n%s", c.CommandPath(), para)
			}
		}
	}
	for _, argv := range [][]string{{"--help"}, {"bench", "--help"}, {"call", "-h"}, {"help", "proxy"}, {"rejoin", "--help"}} {
		code, out, errb := run(t, argv...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s", argv, code, errb)
		}
		for i, line := range strings.Split(out, "\n") {
			if strings.HasSuffix(line, " ") {
				t.Errorf("%v: line %d ends in spaces: %q", argv, i+1, line)
			}
			if w := ansi.StringWidth(line); w > 80 {
				t.Errorf("%v: line %d is %d columns wide, want at most 80: %q", argv, i+1, w, line)
			}
		}
	}
	_, out, _ := run(t, "bench", "--help")
	if !strings.Contains(out, "  at N frames: whole processes under a flood of N notifications (--sizes):\n  mcpscope record") {
		t.Errorf("bench --help is not wrapped as paragraphs:\n%s", out)
	}
	_, out, _ = run(t, "call", "--help")
	if !strings.Contains(out, "    --ttl                  How long the server should keep the task (with\n                           --task)") {
		t.Errorf("call --help: a long flag row is not wrapped under its description:\n%s", out)
	}
}

// The man page has one roff paragraph per paragraph of help, and the
// EXIT STATUS, FILES and ENVIRONMENT sections, naming what the code reads.
func TestManSections(t *testing.T) {
	code, out, errb := run(t, "man")
	if code != exitOK {
		t.Fatalf("man: exit %d\n%s", code, errb)
	}
	desc := out[strings.Index(out, ".SH DESCRIPTION\n"):strings.Index(out, ".SH OPTIONS")]
	if n, want := strings.Count(desc, "\n.PP\n"), strings.Count(newRoot().Long, "\n\n"); n != want {
		t.Errorf("DESCRIPTION has %d paragraph breaks, want %d (one per paragraph of help):\n%s", n, want, desc)
	}
	if strings.Contains(out, ".PP\n.PP") {
		t.Error("the man page has empty paragraphs")
	}
	for _, want := range []string{
		".SH EXIT STATUS", "2: usage", "3: connection or transport", "4: timeout", "1: the server said no",
		".SH FILES", "$XDG_STATE_HOME/mcpscope/journal/", "$XDG_STATE_HOME/mcpscope/calls/", "servers\\&.json",
		".SH ENVIRONMENT", "MCPSCOPE_STATE", "REDISCLI_AUTH", "MCPSCOPE_BEARER", "MCPSCOPE_THEME", "XDG_RUNTIME_DIR", "NO_COLOR", "EDITOR", "BROWSER",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the man page lacks %q", want)
		}
	}
}
