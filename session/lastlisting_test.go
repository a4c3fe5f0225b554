package session

import (
	"encoding/json"
	"slices"
	"testing"

	"mcpscope/protocol"
)

// LastListing takes the last first page and its NextCursor chain, skipping
// pages of other listings in between; an unanswered next page ends it.
func TestLastListing(t *testing.T) {
	page := func(cursor, next string) protocol.RecordedPage {
		res, _ := json.Marshal(map[string]any{"tools": []any{}, "protocol.NextCursor": next})
		return protocol.RecordedPage{Cursor: cursor, Result: res}
	}
	for _, c := range []struct {
		name  string
		pages []protocol.RecordedPage
		want  []int
	}{
		{"none", nil, nil},
		{"no first page", []protocol.RecordedPage{page("c1", "")}, nil},
		{"one page", []protocol.RecordedPage{page("", "")}, []int{0}},
		{"the last first page wins", []protocol.RecordedPage{page("", ""), page("", "c1"), page("c1", "")}, []int{1, 2}},
		{"a stray page is skipped", []protocol.RecordedPage{page("", "c1"), page("zz", ""), page("c1", "c2"), page("c2", "")}, []int{0, 2, 3}},
		{"a missing page ends it", []protocol.RecordedPage{page("", "c1"), page("c9", "")}, []int{0}},
	} {
		if got := protocol.LastListing(c.pages); !slices.Equal(got, c.want) {
			t.Errorf("%s: protocol.LastListing = %v, want %v", c.name, got, c.want)
		}
	}
}
