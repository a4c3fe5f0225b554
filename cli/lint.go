package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"

	"mcpscope/artifact/diff"
	"mcpscope/artifact/scan"
	"mcpscope/connect"
	"mcpscope/internal/render"
	"mcpscope/internal/termsafe"
	"mcpscope/lint"
	"mcpscope/transport"
)

func newLintCmd() *cobra.Command {
	var (
		f        connFlags
		asJSON   bool
		baseline string
		junit    string
		strict   bool
		rules    bool
		profiles []string
	)
	cmd := &cobra.Command{
		Use:   "lint [FILE] [target]",
		Short: "Will hosts accept it? Check a server's catalog as Claude Code, OpenAI, Gemini read it; exit 1 on an error",
		Long: "Check what a server offers the way hosts will read it: each input and output schema against its dialect " +
			"(2020-12, or draft-07 when $schema says so), what Claude Code, OpenAI models and Gemini refuse or read " +
			"unevenly (bare true/false property schemas, formats, type arrays, untyped anyOf/oneOf branches, $ref, " +
			"discriminator, strict modes' additionalProperties, schemas an SDK conversion emptied), tool names and " +
			"descriptions, duplicates, outputSchema, annotations, and behaviour: tools/list in another order the second " +
			"time, paging that repeats or loops, resource templates that are not RFC 6570, a recorded structuredContent " +
			"that does not keep to its outputSchema.\n\n" +
			"The target is a live server (a URL, the command after --, --server NAME; none: the embedded demo), a journal " +
			"(its last listings and the tool results it recorded), or a snapshot written by diff --baseline (FILE, or " +
			"--baseline FILE).\n\n" +
			"An error is something some host refuses: exit 1. A warning is handled unevenly: exit 0, unless --strict. " +
			"--profile picks the hosts (claude-code, openai, gemini, strict; repeatable or comma-separated; default all); " +
			"--rules explains every rule.",
		GroupID: groupHeadless,
		Example: "  mcpscope lint -- npx -y @modelcontextprotocol/server-everything\n" +
			"  mcpscope lint --profile gemini http://127.0.0.1:3001/mcp\n" +
			"  mcpscope lint session.jsonl --junit lint.xml\n" +
			"  mcpscope lint --baseline catalog.json --strict\n" +
			"  mcpscope lint --rules",
		Args: func(cmd *cobra.Command, args []string) error {
			own, url, command := split(cmd, args)
			if rules {
				return nil
			}
			if len(own) > 1 {
				return usagef(cmd.CommandPath(), "lint takes one journal or snapshot file, or a target; got %d files", len(own))
			}
			if len(own) == 1 && (baseline != "" || url != "" || len(command) > 0) {
				return usagef(cmd.CommandPath(), "lint checks one thing: %s, or --baseline, or a live target; not both", own[0])
			}
			if baseline != "" && (url != "" || len(command) > 0) {
				return usagef(cmd.CommandPath(), "lint checks one thing: --baseline %s or a live target, not both", baseline)
			}
			if _, err := lint.SelectProfiles(profileNames(profiles)); err != nil {
				return usagef(cmd.CommandPath(), "--profile: %v", err)
			}
			if junit != "" {
				return checkOutput(cmd, "--junit", junit)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if rules {
				printRules(out)
				return nil
			}
			ps, _ := lint.SelectProfiles(profileNames(profiles))
			own, url, command := split(cmd, args)
			file := baseline
			if len(own) == 1 {
				file = own[0]
			}
			var (
				cat    *lint.Catalog
				source string
			)
			if file != "" {
				c, err := lintFile(cmd, file)
				if err != nil {
					return err
				}
				cat, source = c, file
			} else {
				sp, err := f.spec(cmd, url, command)
				if err != nil {
					return err
				}
				sp.Grace, sp.Notes = oneShotGrace, cmd.ErrOrStderr()
				sp.Auth.Interactive = isTerminal(cmd.ErrOrStderr())
				live, err := f.otlp.start(cmd, &sp)
				if err != nil {
					return err
				}
				defer live.finish()
				s, err := connect.Connect(cmd.Context(), sp)
				if err != nil {
					return err
				}
				defer s.Close()
				source = s.Info().Target
				if url == "" && len(command) == 0 && f.server.server == "" && f.server.url == "" {
					source = "the embedded demo server"
				}
				source = transport.RedactTarget(source)
				if cat, err = lint.FromSession(cmd.Context(), s); err != nil {
					return err
				}
			}
			r := lint.Check(cat, ps)
			if asJSON {
				if err := render.Line(out, map[string]any{"target": source, "profiles": r.Profiles, "checked": r.Checked,
					"errors": r.Errors(), "warnings": r.Warnings(), "findings": r.Findings}); err != nil {
					return err
				}
			} else {
				printLint(out, r, source)
			}
			if junit != "" {
				if err := writeJUnit(junit, lintJUnit(cat, r, strict, source)); err != nil {
					return err
				}
			}
			if r.Errors() > 0 || (strict && len(r.Findings) > 0) {
				return shown{&lintError{errors: r.Errors(), warnings: r.Warnings(), strict: strict}}
			}
			return nil
		},
	}
	f.add(cmd.Flags())
	f.otlp.add(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the findings as one JSON object for programs")
	cmd.Flags().StringVar(&baseline, "baseline", "", "lint the catalog snapshot in this file (written by diff --baseline)")
	cmd.Flags().StringVar(&junit, "junit", "", "also write JUnit XML to this file, a test case per tool, resource, template and prompt, for CI")
	cmd.Flags().BoolVar(&strict, "strict", false, "fail (exit 1) on warnings too")
	cmd.Flags().BoolVar(&rules, "rules", false, "explain every rule and profile, then exit")
	cmd.Flags().StringSliceVar(&profiles, "profile", nil, "the hosts to check for: "+strings.Join(lint.ProfileNames(), ", ")+" or all (default all)")
	return cmd
}

// profileNames splits comma-separated values (StringSlice does) and trims them.
func profileNames(v []string) []string {
	var out []string
	for _, n := range v {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// lintFile reads a journal (its last listings and its tool results) or a
// snapshot file.
func lintFile(cmd *cobra.Command, path string) (*lint.Catalog, error) {
	if _, err := os.Stat(path); err != nil {
		if h := schemeHint(path); h != "" {
			return nil, usagef(cmd.CommandPath(), "%s", h)
		}
		return nil, usagef(cmd.CommandPath(), "%v", err)
	}
	snap, err := diff.Load(path)
	if err != nil {
		if _, jerr := journalHeader(cmd.CommandPath(), path); jerr != nil {
			return nil, jerr // not a journal, nor a snapshot: the command line's mistake
		}
		return nil, err
	}
	for _, n := range snap.Notes {
		fmt.Fprintf(cmd.ErrOrStderr(), "mcpscope: %s\n", termsafe.Line(n))
	}
	cat := lint.FromSnapshot(snap)
	if _, err := scan.Header(path); err == nil {
		if cat.Results, err = lint.JournalResults(path); err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "mcpscope: %s: reading the tool results: %s\n", termsafe.Line(path), termsafe.Line(err.Error()))
		}
	}
	return cat, nil
}

// printLint writes the report for people: the findings item by item,
// then a line of counts. Every word a server chose goes through termsafe.
func printLint(w io.Writer, r *lint.Report, source string) {
	last := ""
	for _, f := range r.Findings {
		item := f.Kind + " " + termsafe.Line(f.Name)
		if f.Name == "" && f.Kind == "tool" {
			item = "tool (no name)"
		}
		if item != last {
			fmt.Fprintln(w, item)
			last = item
		}
		where := termsafe.Line(f.Pointer)
		if where == "" {
			where = "-"
		}
		fmt.Fprintf(w, "  %-7s  %-21s  %-40s  %s\n", f.Severity, f.Rule, where, strings.Join(f.Hosts, ", "))
		why := f.Reason
		if f.Detail != "" {
			why += ": " + termsafe.Line(f.Detail)
		}
		fmt.Fprintf(w, "  %-7s  %s\n", "", why)
	}
	c := r.Checked
	head := fmt.Sprintf("%s: %s, %s, %s, %s, for %s", termsafe.Line(source), countOf(c.Tools, "tool"),
		countOf(c.Resources, "resource"), countOf(c.Templates, "template"), countOf(c.Prompts, "prompt"), strings.Join(r.Profiles, ", "))
	if len(r.Findings) == 0 {
		fmt.Fprintf(w, "%s: no findings\n", head)
		return
	}
	fmt.Fprintf(w, "%s: %s, %s\n", head, countOf(r.Errors(), "error"), countOf(r.Warnings(), "warning"))
}

// printRules is --rules: every rule with its severity, the hosts it is
// about and why, then the profiles.
func printRules(w io.Writer) {
	for _, r := range lint.Rules {
		fmt.Fprintf(w, "%s (%s)\n", r.ID, ruleSeverity(r))
		for _, l := range strings.Split(ansi.Wordwrap(r.Explain, 96, ""), "\n") {
			fmt.Fprintf(w, "    %s\n", l)
		}
		fmt.Fprintf(w, "    from: %s\n\n", r.Source)
	}
	fmt.Fprintln(w, "profiles (--profile; default all):")
	for _, p := range lint.Profiles {
		fmt.Fprintf(w, "  %-12s %s", p.Name, p.About)
		if p.Formats != nil {
			fmt.Fprintf(w, "; formats: %s", strings.Join(p.Formats, ", "))
		}
		fmt.Fprintln(w)
	}
}

// ruleSeverity says how hard a rule is: its own severity, or per profile.
func ruleSeverity(r lint.Rule) string {
	if !r.Portable {
		return string(r.Severity) + ", every host"
	}
	by := map[lint.Severity][]string{}
	for _, p := range lint.Profiles {
		if s, ok := p.Rules[r.ID]; ok {
			by[s] = append(by[s], p.Name)
		}
	}
	var parts []string
	for _, s := range []lint.Severity{lint.Error, lint.Warning} {
		if len(by[s]) > 0 {
			parts = append(parts, string(s)+" for "+strings.Join(by[s], ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// lintJUnit is a lint report as test cases: one per tool, resource,
// template and prompt, and one per list whose behaviour was found wrong.
// A case fails on an error finding, or on any with --strict. The suite is
// named after the target linted.
func lintJUnit(c *lint.Catalog, r *lint.Report, strict bool, target string) *junitSuites {
	j := newJUnit("lint", target)
	kinds := []struct {
		kind  string
		items []jsonItem
	}{
		{"tool", names(c.Tools, "name")},
		{"resource", names(c.Resources, "uri")},
		{"template", names(c.Templates, "uriTemplate")},
		{"prompt", names(c.Prompts, "name")},
	}
	done := map[string]bool{}
	one := func(kind, name string) {
		if done[kind+"\x00"+name] {
			return // a duplicate name: one case
		}
		done[kind+"\x00"+name] = true
		tc := junitCase{Name: termsafe.Line(name), Classname: "mcpscope.lint." + kind}
		var lines []string
		var first *lint.Finding
		for _, f := range r.For(kind, name) {
			line := fmt.Sprintf("%s %s %s: %s", f.Severity, f.Rule, termsafe.Line(f.Pointer), f.Reason)
			if f.Detail != "" {
				line += ": " + termsafe.Line(f.Detail)
			}
			lines = append(lines, line+" ("+strings.Join(f.Hosts, ", ")+")")
			if (f.Severity == lint.Error || strict) && first == nil {
				first = &f
			}
		}
		if first != nil {
			tc.Failure = &junitFailure{Message: lines[0], Type: first.Rule, Text: strings.Join(lines, "\n")}
		}
		j.add(tc)
	}
	for _, k := range kinds {
		for _, it := range k.items {
			one(k.kind, string(it))
		}
	}
	for _, f := range r.Findings {
		if f.Kind == "list" {
			one(f.Kind, f.Name)
		}
	}
	return j
}

type jsonItem string

// names are the items' keys, in the order listed.
func names(items []json.RawMessage, key string) []jsonItem {
	var out []jsonItem
	for _, raw := range items {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(raw, &m)
		var n string
		_ = json.Unmarshal(m[key], &n)
		out = append(out, jsonItem(n))
	}
	return out
}

// lintError is a lint that found what fails it: exit 1, so it gates CI.
type lintError struct {
	errors, warnings int
	strict           bool
}

func (e *lintError) Error() string {
	if e.errors == 0 {
		return fmt.Sprintf("lint: %s (--strict fails on warnings)", countOf(e.warnings, "warning"))
	}
	return fmt.Sprintf("lint: %s that some host refuses, %s", countOf(e.errors, "error"), countOf(e.warnings, "warning"))
}

func (e *lintError) Is(target error) bool { return target == errServerState }

// countOf is "1 error", "2 warnings".
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
