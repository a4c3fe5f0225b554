// Command testreport turns `go test -json` on stdin into a short report:
// one line per package, the full output of failed and skipped tests, build
// errors, and a closing "N passed, N failed, N skipped" line. It exits 1 when
// anything failed. scripts/test.sh pipes the test run through it.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string // build events
	FailedBuild string
}

type key struct{ pkg, test string }

func main() {
	os.Exit(report(os.Stdin, os.Stdout))
}

func report(in io.Reader, out io.Writer) int {
	buf := map[key]*strings.Builder{}
	var passed, failed, skipped, badPkgs int
	var failures []string
	pkgHadFailedTest := map[string]bool{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(out, "%s\n", line) // not JSON: go's own early errors
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "build-output":
			fmt.Fprint(out, e.Output)
		case "build-fail":
			fmt.Fprintf(out, "BUILD FAILED: %s\n", e.ImportPath)
		case "output":
			b := buf[k]
			if b == nil {
				b = &strings.Builder{}
				buf[k] = b
			}
			b.WriteString(e.Output)
		case "pass", "fail", "skip":
			text := ""
			if b := buf[k]; b != nil {
				text = b.String()
				delete(buf, k)
			}
			if e.Test == "" { // the package as a whole
				switch {
				case e.Action == "fail":
					badPkgs++
					if !pkgHadFailedTest[e.Package] {
						// A build failure, or a crash outside any test:
						// count it as one failure so the closing line shows it.
						failed++
						failures = append(failures, e.Package+" (package: "+pkgFailure(e)+")")
					}
					fmt.Fprint(out, text)
					// Tests that never reported (a hang ended by -timeout, a
					// crash) still hold their output: it names the culprit.
					for k, b := range buf {
						if k.pkg == e.Package && k.test != "" {
							fmt.Fprintf(out, "--- still running when %s failed: %s\n%s", e.Package, k.test, b.String())
							delete(buf, k)
						}
					}
					if !strings.Contains(text, "FAIL\t"+e.Package) {
						fmt.Fprintf(out, "FAIL\t%s\n", e.Package)
					}
				default:
					fmt.Fprint(out, lastLine(text))
				}
				continue
			}
			switch e.Action {
			case "pass":
				passed++
			case "fail":
				failed++
				pkgHadFailedTest[e.Package] = true
				failures = append(failures, e.Package+" "+e.Test)
				fmt.Fprintf(out, "--- FAIL: %s %s\n%s", e.Package, e.Test, body(text))
			case "skip":
				skipped++
				fmt.Fprintf(out, "--- SKIP: %s %s\n%s", e.Package, e.Test, body(text))
			}
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(out, "testreport: reading go test output: %v\n", err)
		badPkgs++
	}
	if len(failures) > 0 {
		sort.Strings(failures)
		fmt.Fprintf(out, "\nFailed tests:\n  %s\n", strings.Join(failures, "\n  "))
	}
	if badPkgs > 0 {
		fmt.Fprintf(out, "\n%d package(s) failed\n", badPkgs)
	}
	fmt.Fprintf(out, "\n%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	if failed > 0 || badPkgs > 0 {
		return 1
	}
	return 0
}

func pkgFailure(e event) string {
	if e.FailedBuild != "" {
		return "build failed"
	}
	return "failed outside a test"
}

// lastLine keeps the package's result line ("ok  \tpkg\t1.2s", "?   \tpkg\t[no test files]").
func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return ""
	}
	return s + "\n"
}

// body drops the runner's own "=== RUN/PAUSE/CONT" and "--- PASS/FAIL/SKIP"
// lines from a test's output, keeping what the test itself printed.
func body(s string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		t := strings.TrimLeft(line, " ")
		if line == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}
