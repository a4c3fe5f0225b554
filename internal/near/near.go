// Package near finds the names close to a name nothing answers to: the
// tool a user meant when they mistyped it, the recording a request came
// closest to.
package near

import (
	"slices"
	"strings"
)

// Distance is the Levenshtein distance of two short strings, by bytes
// (longer ones are compared by their first 256 bytes).
func Distance(a, b string) int {
	a, b = a[:min(len(a), 256)], b[:min(len(b), 256)]
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Names are the at most max names of names that name is likely a slip
// for, nearest first: within two edits of it, or beginning with it (ignoring
// case either way). A name equal to name is not near it.
func Names(name string, names []string, max int) []string {
	type cand struct {
		name string
		d    int
	}
	var cands []cand
	l := strings.ToLower(name)
	for _, n := range names {
		if n == name {
			continue
		}
		ln := strings.ToLower(n)
		d := Distance(l, ln)
		if d <= 2 || l != "" && strings.HasPrefix(ln, l) {
			cands = append(cands, cand{n, d})
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.name, b.name)
	})
	out := make([]string, 0, min(len(cands), max))
	for _, c := range cands[:min(len(cands), max)] {
		if !slices.Contains(out, c.name) {
			out = append(out, c.name)
		}
	}
	return out
}
