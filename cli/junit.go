package cli

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"

	"mcpscope/artifact/diff"
	"mcpscope/artifact/replay"
	"mcpscope/internal/termsafe"
	"mcpscope/internal/userfile"
)

// JUnit XML, the report format every CI system reads: diff, replay and
// lint write one with --junit FILE. The shape keeps to Jenkins xUnit's
// junit-10.xsd (test/junit): no skipped count on <testsuites>, an errors
// count on every <testsuite>.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"` // always 0: a check that could not run ends the command instead
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr,omitempty"`
	Failure   *junitFailure `xml:"failure"`
	Skipped   *junitSkipped `xml:"skipped"`
	// SystemOut says what a passing case still noticed (a diff's
	// non-breaking change).
	SystemOut string `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

// newJUnit is an empty report of a command ("diff", "replay", "lint") run
// against a target, which its suite is named after: reports of several
// servers merged in one CI run stay apart.
func newJUnit(command, target string) *junitSuites {
	name := "mcpscope " + command
	if t := junitTarget(target); t != "" {
		name += " " + t
	}
	return &junitSuites{Name: name, Suites: []junitSuite{{Name: name}}}
}

// junitTarget is a target (a URL, a command, a file) as a suite name holds
// it: one inert line of at most 60 runes, cut in the middle when longer so
// that both a URL's host and a path's file name stay.
func junitTarget(target string) string {
	r := []rune(strings.Join(strings.Fields(termsafe.Line(target)), " "))
	if len(r) <= 60 {
		return string(r)
	}
	return string(r[:30]) + "…" + string(r[len(r)-29:])
}

// add appends a case to the suite and counts it (and the totals).
func (j *junitSuites) add(c junitCase) {
	s := &j.Suites[0]
	s.Cases = append(s.Cases, c)
	s.Tests++
	j.Tests++
	switch {
	case c.Failure != nil:
		s.Failures++
		j.Failures++
	case c.Skipped != nil:
		s.Skipped++
	}
}

// writeJUnit writes a JUnit report to the file the user named, as a shell
// redirect would (userfile: a FIFO or device is written through).
func writeJUnit(path string, j *junitSuites) error {
	err := userfile.Write(path, 0o644, func(w io.Writer) error {
		if _, err := io.WriteString(w, xml.Header); err != nil {
			return err
		}
		enc := xml.NewEncoder(w)
		enc.Indent("", "  ")
		if err := enc.Encode(j); err != nil {
			return err
		}
		_, err := io.WriteString(w, "\n")
		return err
	})
	if err != nil {
		return fmt.Errorf("--junit %s: %w", termsafe.Line(path), err)
	}
	return nil
}

// diffJUnit is a diff report as test cases: one per item of the lists
// compared (tool, resource, template, prompt), one per other change
// (server info, protocol version, capabilities, instructions). A breaking
// change, or a riskier one (a tool's hints now say it writes or destroys),
// fails its case; any other change passes, named in the case's
// <system-out>, unless driftFails (--junit-drift-fails) fails it too. The
// suite is named after B, the side checked.
func diffJUnit(r *diff.Report, a, b *diff.Snapshot, driftFails bool) *junitSuites {
	j := newJUnit("diff", r.B.Source)
	byItem := map[diff.Item]diff.Change{}
	for _, c := range r.Changes {
		if c.Name == "" {
			tc := junitCase{Name: c.Kind, Classname: "mcpscope.diff." + c.Kind}
			changeCase(&tc, c, driftFails)
			j.add(tc)
			continue
		}
		byItem[diff.Item{Kind: c.Kind, Name: c.Name}] = c
	}
	for _, it := range diff.Items(a, b) {
		tc := junitCase{Name: termsafe.Line(it.Name), Classname: "mcpscope.diff." + it.Kind}
		if c, ok := byItem[it]; ok {
			changeCase(&tc, c, driftFails)
		}
		j.add(tc)
	}
	return j
}

// changeCase puts a change in its case: a failure when it is breaking or
// riskier (or when every drift fails), else the case's output.
func changeCase(tc *junitCase, c diff.Change, driftFails bool) {
	lines := c.Lines()
	if !c.Breaking && !c.Riskier && !driftFails {
		tc.SystemOut = "drift (not breaking): " + strings.Join(lines, "\n")
		return
	}
	typ := "drift"
	switch {
	case c.Breaking:
		typ = "breaking"
	case c.Riskier:
		typ = "riskier"
	}
	tc.Failure = &junitFailure{Message: lines[0], Type: typ, Text: strings.Join(lines, "\n")}
}

// replayJUnit is a replay as test cases, one per replayed call: a call
// that differs fails with its differences; a skipped one is skipped. The
// suite is named after the live target.
func replayJUnit(sum *replay.Summary, target string) *junitSuites {
	j := newJUnit("replay", target)
	for _, r := range sum.Results {
		name := fmt.Sprintf("#%d %s", r.Seq, termsafe.Line(strings.TrimSpace(r.Method+" "+r.Name)))
		tc := junitCase{Name: name, Classname: "mcpscope.replay." + termsafe.Line(r.Method),
			Time: fmt.Sprintf("%.3f", time.Duration(r.Live).Seconds())}
		switch r.Status {
		case "skipped":
			tc.Skipped = &junitSkipped{Message: termsafe.Line(r.Reason)}
		case "same":
		default:
			lines := replayLines(r)
			msg := r.Status
			if len(lines) > 0 {
				msg = lines[0]
			}
			tc.Failure = &junitFailure{Message: msg, Type: r.Status, Text: strings.Join(lines, "\n")}
		}
		j.add(tc)
	}
	return j
}
