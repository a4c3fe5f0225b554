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

// JUnit XML, the report format every CI system reads: diff and replay
// write one with --junit FILE.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr,omitempty"`
	Failure   *junitFailure `xml:"failure"`
	Skipped   *junitSkipped `xml:"skipped"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

// add appends a case to the suite and counts it (and the totals).
func (j *junitSuites) add(c junitCase) {
	if len(j.Suites) == 0 {
		j.Suites = append(j.Suites, junitSuite{Name: j.Name})
	}
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
		j.Skipped++
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
// (server info, protocol version, capabilities, instructions). A change
// fails its case; every change is drift, as the exit code says.
func diffJUnit(r *diff.Report, a, b *diff.Snapshot) *junitSuites {
	j := &junitSuites{Name: "mcpscope diff"}
	byItem := map[diff.Item]diff.Change{}
	for _, c := range r.Changes {
		if c.Name == "" {
			j.add(junitCase{Name: c.Kind, Classname: "mcpscope.diff." + c.Kind, Failure: changeFailure(c)})
			continue
		}
		byItem[diff.Item{Kind: c.Kind, Name: c.Name}] = c
	}
	for _, it := range diff.Items(a, b) {
		tc := junitCase{Name: termsafe.Line(it.Name), Classname: "mcpscope.diff." + it.Kind}
		if c, ok := byItem[it]; ok {
			tc.Failure = changeFailure(c)
		}
		j.add(tc)
	}
	return j
}

func changeFailure(c diff.Change) *junitFailure {
	lines := c.Lines()
	typ := "drift"
	if c.Breaking {
		typ = "breaking"
	}
	return &junitFailure{Message: lines[0], Type: typ, Text: strings.Join(lines, "\n")}
}

// replayJUnit is a replay as test cases, one per replayed call: a call
// that differs fails with its differences; a skipped one is skipped.
func replayJUnit(sum *replay.Summary) *junitSuites {
	j := &junitSuites{Name: "mcpscope replay"}
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
