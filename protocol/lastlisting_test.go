package protocol

import (
	"encoding/json"
	"slices"
	"testing"
)

// LastListing takes the last first page and its NextCursor chain, skipping
// pages of other listings in between; an unanswered next page ends it.
func TestLastListing(t *testing.T) {
	page := func(cursor, next string) RecordedPage {
		res, _ := json.Marshal(map[string]any{"tools": []any{}, "nextCursor": next})
		return RecordedPage{Cursor: cursor, Result: res}
	}
	for _, c := range []struct {
		name  string
		pages []RecordedPage
		want  []int
	}{
		{"none", nil, nil},
		{"no first page", []RecordedPage{page("c1", "")}, nil},
		{"one page", []RecordedPage{page("", "")}, []int{0}},
		{"the last first page wins", []RecordedPage{page("", ""), page("", "c1"), page("c1", "")}, []int{1, 2}},
		{"a stray page is skipped", []RecordedPage{page("", "c1"), page("zz", ""), page("c1", "c2"), page("c2", "")}, []int{0, 2, 3}},
		{"a missing page ends it", []RecordedPage{page("", "c1"), page("c9", "")}, []int{0}},
	} {
		if got := LastListing(c.pages); !slices.Equal(got, c.want) {
			t.Errorf("%s: LastListing = %v, want %v", c.name, got, c.want)
		}
	}
}
