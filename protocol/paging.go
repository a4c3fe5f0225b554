package protocol

import (
	"encoding/json"
)

// RecordedPage is one answered page of a list method, as recorded.
type RecordedPage struct {
	Cursor string          // the cursor its request carried, "" for a first page
	Result json.RawMessage // the page (its NextCursor is all LastListing reads)
}

// LastListing is the one way a listing is rebuilt from a recording (an
// offline session's catalog, diff's catalog of a journal): out of the
// answered pages of one list method, in the order they were asked, the last
// first page and the pages its NextCursor chain asked for after it. It
// returns their indexes in pages, none when no first page was answered.
// Only a first page answered after it replaces a listing, so a caller
// streaming a journal may keep just the pages from the last first page on.
func LastListing(pages []RecordedPage) []int {
	first := -1
	for i := len(pages) - 1; i >= 0; i-- {
		if pages[i].Cursor == "" {
			first = i
			break
		}
	}
	if first < 0 {
		return nil
	}
	run := []int{first}
	cursor := NextCursor(pages[first].Result)
	for j := first + 1; j < len(pages) && cursor != ""; j++ {
		if pages[j].Cursor == cursor {
			run = append(run, j)
			cursor = NextCursor(pages[j].Result)
		}
	}
	return run
}

func NextCursor(result json.RawMessage) string {
	var p struct {
		Next string `json:"nextCursor"`
	}
	_ = json.Unmarshal(result, &p)
	return p.Next
}

// ParamsCursor is the cursor a list request's params carry ("" for a
// first page).
func ParamsCursor(params json.RawMessage) string {
	var p struct {
		Cursor string `json:"cursor"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Cursor
}
