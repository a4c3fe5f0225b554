package ui

import (
	"sort"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/sahilm/fuzzy"

	"mcpscope/internal/termsafe"
)

// The catalog's find: one query over every section, fuzzy (sahilm/fuzzy:
// the letters in order, runs and word starts ranked first). An entry
// matches by its name (a resource's URI) or its title; failing both, by
// its description, when the letters come close together there: a fuzzy
// match scattered over a long description matches almost anything.
// Name and title matches come first, best first; description matches
// follow.

// catHit is one entry the find kept, with where it matched.
type catHit struct {
	i     int   // index in the section's entries
	field uint8 // fieldName, fieldTitle or fieldDesc
	idx   []int // byte offsets of the matched characters in that field
}

const (
	fieldName uint8 = iota
	fieldTitle
	fieldDesc
)

// catName is what the catalog shows as an entry's name: the URI for
// resources and templates, else the name.
func catName(label string, e catEntry) string {
	if label == "resources" || label == "templates" {
		return termsafe.Line(e.uri)
	}
	return termsafe.Line(firstNonEmpty(e.name, e.uri))
}

// findEntries ranks a section's entries against q.
func findEntries(q, label string, es []catEntry) []catHit {
	names, titles, descs := make([]string, len(es)), make([]string, len(es)), make([]string, len(es))
	for i, e := range es {
		names[i], titles[i], descs[i] = catName(label, e), termsafe.Line(e.title), termsafe.Line(e.desc)
	}
	type scored struct {
		catHit
		score int
	}
	best := make([]*scored, len(es))
	for f, src := range [][]string{names, titles} {
		for _, mt := range fuzzy.FindNoSort(q, src) {
			if b := best[mt.Index]; b == nil || mt.Score > b.score {
				best[mt.Index] = &scored{catHit{mt.Index, uint8(f), mt.MatchedIndexes}, mt.Score}
			}
		}
	}
	var out, byDesc []scored
	for _, b := range best {
		if b != nil {
			out = append(out, *b)
		}
	}
	for _, mt := range fuzzy.FindNoSort(q, descs) {
		if best[mt.Index] != nil || len(mt.MatchedIndexes) == 0 {
			continue
		}
		// Close together: the matched letters span at most twice the query.
		if span := mt.MatchedIndexes[len(mt.MatchedIndexes)-1] - mt.MatchedIndexes[0] + 1; span <= 2*len(q) {
			byDesc = append(byDesc, scored{catHit{mt.Index, fieldDesc, mt.MatchedIndexes}, mt.Score})
		}
	}
	rank := func(s []scored) {
		sort.SliceStable(s, func(a, b int) bool { return s[a].score > s[b].score })
	}
	rank(out)
	rank(byDesc)
	hits := make([]catHit, 0, len(out)+len(byDesc))
	for _, s := range append(out, byDesc...) {
		hits = append(hits, s.catHit)
	}
	return hits
}

// setFind sets the find's query ("" shows everything again).
func (c *catalog) setFind(q string) {
	c.find = strings.TrimSpace(q)
	for _, s := range c.secs {
		c.filterSection(s)
		s.sel = 0
	}
}

// filterSection ranks a section's entries against the find again (after
// the find changed or the list was fetched again).
func (c *catalog) filterSection(s *catSection) {
	s.view = nil
	if c.find != "" {
		s.view = findEntries(c.find, s.label, s.entries)
	}
	s.sel = clamp(s.sel, 0, s.n()-1)
}

// n is how many rows the section shows.
func (s *catSection) n() int {
	if s.view != nil {
		return len(s.view)
	}
	return len(s.entries)
}

// at is row k's entry, and where the find matched it (nil: no find).
func (s *catSection) at(k int) (catEntry, *catHit) {
	if s.view != nil {
		return s.entries[s.view[k].i], &s.view[k]
	}
	return s.entries[k], nil
}

// move moves the current section's selection.
func (c *catalog) move(d int) {
	s := c.secs[c.cur]
	s.sel = clamp(s.sel+d, 0, s.n()-1)
}

// findCount says how many entries the find keeps, in every section.
func (c *catalog) findCount() string {
	if c.find == "" {
		return "every entry"
	}
	n, all := 0, 0
	for _, s := range c.secs {
		n += s.n()
		all += len(s.entries)
	}
	if all == 1 {
		return itoa(n) + " of 1 entry matches"
	}
	return itoa(n) + " of " + counted(all, "entry", "entries") + " match"
}

// marked fits s to w columns, padded, with the characters at the byte
// offsets idx in st.
func marked(s string, idx []int, st lipgloss.Style, w int) string {
	s = shorten(s, w)
	if len(idx) == 0 {
		return pad(s, w)
	}
	on := map[int]bool{}
	for _, i := range idx {
		on[i] = true
	}
	var b strings.Builder
	for i, r := range s {
		if on[i] {
			b.WriteString(st.Render(string(r)))
		} else {
			b.WriteRune(r)
		}
	}
	return pad(b.String(), w)
}

// counted is "1 match", "2 matches": n and the noun in its number.
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return itoa(n) + " " + many
}
