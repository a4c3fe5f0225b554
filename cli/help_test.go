package cli

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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

// Help shows what was written: a word of a command's help is never broken
// across lines (the formatter's own wrapping breaks at hyphens: --host,
// bash-completion), and a flag's or a command's description keeps its
// first word as written but for its first letter (the formatter title-cases
// every part of it: notifications/tools/list_changed).
func TestHelpKeepsWords(t *testing.T) {
	var all []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		all = append(all, c)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRoot())
	upperFirst := func(s string) string {
		r := []rune(s)
		return strings.ToUpper(string(r[:1])) + string(r[1:])
	}
	firstWord := func(s string) string {
		f := strings.Fields(strings.SplitN(s, "\n", 2)[0])
		if len(f) == 0 {
			return ""
		}
		return f[0]
	}
	for _, c := range all {
		argv := append(strings.Fields(c.CommandPath())[1:], "--help")
		code, out, errb := run(t, argv...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s", argv, code, errb)
		}
		words := map[string]bool{}
		for _, w := range strings.Fields(out) {
			words[w] = true
		}
		text := c.Long
		if text == "" {
			text = c.Short
		}
		for _, w := range strings.Fields(text) {
			if !words[w] {
				t.Errorf("%s --help: the word %q of its help is not shown whole", c.CommandPath(), w)
			}
		}
		lines := strings.Split(out, "\n")
		// The description that follows key on its row, or under it.
		desc := func(key string) string {
			for i, l := range lines {
				rest, ok := strings.CutPrefix(strings.TrimSpace(l), key)
				if !ok || rest != "" && !strings.HasPrefix(rest, "  ") {
					continue
				}
				if rest = strings.TrimSpace(rest); rest == "" && i+1 < len(lines) {
					rest = strings.TrimSpace(lines[i+1])
				}
				return rest
			}
			return ""
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || f.Usage == "" {
				return
			}
			key := "--" + f.Name
			if f.Shorthand != "" {
				key = "-" + f.Shorthand + " " + key
			}
			if got, want := firstWord(desc(key)), upperFirst(firstWord(f.Usage)); got != want {
				t.Errorf("%s --help: %s is described as %q..., want %q... (usage %q)", c.CommandPath(), key, got, want, f.Usage)
			}
		})
		for _, s := range c.Commands() {
			if s.Hidden || s.Short == "" {
				continue
			}
			if got, want := firstWord(desc(strings.Fields(s.Use)[0])), upperFirst(firstWord(s.Short)); !strings.Contains(out, " "+want) || got != "" && got != want && !strings.HasPrefix(got, "[") {
				t.Errorf("%s --help: subcommand %s is described as %q..., want %q...", c.CommandPath(), s.Name(), got, want)
			}
		}
	}
}
