package catalog

import (
	"sort"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/sahilm/fuzzy"

	"mcpscope/internal/termsafe"
	"mcpscope/ui/widget"
)

// The catalog's find: one query over every section, fuzzy (sahilm/fuzzy:
// the letters in order, runs and word starts ranked first). An entry
// matches by its name (a resource's URI) or its title; failing both, by
// its description, when the letters come close together there: a fuzzy
// match scattered over a long description matches almost anything.
// Name and title matches come first, best first; description matches
// follow.

// hit is one entry the find kept, with where it matched.
type hit struct {
	i     int   // index in the section's entries
	field uint8 // fieldName, fieldTitle or fieldDesc
	idx   []int // byte offsets of the matched characters in that field
}

const (
	fieldName uint8 = iota
	fieldTitle
	fieldDesc
)

// entryName is what the catalog shows as an entry's name: the URI for
// resources and templates, else the name.
func entryName(label string, e entry) string {
	if label == "resources" || label == "templates" {
		return termsafe.Line(e.uri)
	}
	return termsafe.Line(widget.FirstNonEmpty(e.name, e.uri))
}

// findEntries ranks a section's entries against q.
func findEntries(q, label string, es []entry) []hit {
	names, titles, descs := make([]string, len(es)), make([]string, len(es)), make([]string, len(es))
	for i, e := range es {
		names[i], titles[i], descs[i] = entryName(label, e), termsafe.Line(e.title), termsafe.Line(e.desc)
	}
	type scored struct {
		hit
		score int
	}
	best := make([]*scored, len(es))
	for f, src := range [][]string{names, titles} {
		for _, mt := range fuzzy.FindNoSort(q, src) {
			if b := best[mt.Index]; b == nil || mt.Score > b.score {
				best[mt.Index] = &scored{hit{mt.Index, uint8(f), mt.MatchedIndexes}, mt.Score}
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
			byDesc = append(byDesc, scored{hit{mt.Index, fieldDesc, mt.MatchedIndexes}, mt.Score})
		}
	}
	rank := func(s []scored) {
		sort.SliceStable(s, func(a, b int) bool { return s[a].score > s[b].score })
	}
	rank(out)
	rank(byDesc)
	hits := make([]hit, 0, len(out)+len(byDesc))
	for _, s := range append(out, byDesc...) {
		hits = append(hits, s.hit)
	}
	return hits
}

// SetFind sets the find's query ("" shows everything again).
func (c *View) SetFind(q string) {
	c.find = strings.TrimSpace(q)
	for _, s := range c.secs {
		c.filterSection(s)
		s.sel = 0
	}
}

// filterSection ranks a section's entries against the find again (after
// the find changed or the list was fetched again).
func (c *View) filterSection(s *section) {
	s.view = nil
	if c.find != "" {
		s.view = findEntries(c.find, s.label, s.entries)
	}
	s.sel = widget.Clamp(s.sel, 0, s.n()-1)
}

// n is how many rows the section shows.
func (s *section) n() int {
	if s.view != nil {
		return len(s.view)
	}
	return len(s.entries)
}

// at is row k's entry, and where the find matched it (nil: no find).
func (s *section) at(k int) (entry, *hit) {
	if s.view != nil {
		return s.entries[s.view[k].i], &s.view[k]
	}
	return s.entries[k], nil
}

// Move moves the current section's selection.
func (c *View) Move(d int) {
	s := c.secs[c.cur]
	s.sel = widget.Clamp(s.sel+d, 0, s.n()-1)
}

// Count says how many entries the find keeps, in every section.
func (c *View) Count() string {
	if c.find == "" {
		return "every entry"
	}
	n, all := 0, 0
	for _, s := range c.secs {
		n += s.n()
		all += len(s.entries)
	}
	if all == 1 {
		return strconv.Itoa(n) + " of 1 entry matches"
	}
	return strconv.Itoa(n) + " of " + widget.Counted(all, "entry", "entries") + " match"
}

// marked fits s to w columns, padded, with the characters at the byte
// offsets idx in st.
func marked(s string, idx []int, st lipgloss.Style, w int) string {
	s = widget.Shorten(s, w)
	if len(idx) == 0 {
		return widget.Pad(s, w)
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
	return widget.Pad(b.String(), w)
}
