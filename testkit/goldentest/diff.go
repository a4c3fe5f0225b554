package goldentest

import (
	"fmt"
	"strconv"
	"strings"
)

// context is how many unchanged lines a hunk shows around a change.
const context = 3

// unifiedDiff returns a unified line diff from want to got ("-" lines are
// the golden file's, "+" lines what the test drew), or "" when they are
// equal. Lines holding control characters are shown quoted, so an escape
// sequence cannot redraw the terminal that reads the failure.
func unifiedDiff(wantName, gotName, want, got string) string {
	if want == got {
		return ""
	}
	a, b := splitLines(want), splitLines(got)
	ops := diffLines(a, b)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", wantName, gotName)
	for i := 0; i < len(ops); {
		// Find the next change; a hunk runs from context lines before it to
		// context lines after its last change closer than 2*context apart.
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(i-context, 0)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j + 1
			} else if j-end >= 2*context {
				break
			}
		}
		end = min(end+context, len(ops))
		aStart, bStart, aLen, bLen := ops[start].a, ops[start].b, 0, 0
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				aLen++
			}
			if op.kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		for _, op := range ops[start:end] {
			out.WriteByte(op.kind)
			out.WriteString(visible(op.text))
			out.WriteByte('\n')
		}
		i = end
	}
	if want != "" && got != "" && strings.HasSuffix(want, "\n") != strings.HasSuffix(got, "\n") {
		fmt.Fprintf(&out, "(one ends with a newline and the other does not: %s %v, %s %v)\n",
			wantName, strings.HasSuffix(want, "\n"), gotName, strings.HasSuffix(got, "\n"))
	}
	return out.String()
}

// hunkRange is a hunk header's "line,count" (line counted from 1; for an
// empty range, the line before it).
func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func visible(line string) string {
	for _, r := range line {
		if (r < 0x20 && r != '\t') || r == 0x7f {
			q := strconv.Quote(line)
			return q[1 : len(q)-1]
		}
	}
	return line
}

type diffOp struct {
	kind byte // ' ', '-' or '+'
	text string
	a, b int // the line's index (or the next line's) in want and in got
}

// diffLines is a longest-common-subsequence line diff: goldens are screens
// of at most a few hundred lines, so the quadratic table is small.
func diffLines(a, b []string) []diffOp {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []diffOp
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i], i, j})
			i++
			j++
		case j == m || (i < n && lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, diffOp{'-', a[i], i, j})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j], i, j})
			j++
		}
	}
	return ops
}
