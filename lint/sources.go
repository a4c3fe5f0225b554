package lint

import (
	"context"
	"encoding/json"
	"fmt"

	"mcpscope/artifact/diff"
	"mcpscope/artifact/scan"
	"mcpscope/session"
)

// MaxPages bounds how many pages of one list lint follows.
const MaxPages = session.MaxListPages

// The four lists: method, the result's field, the key naming an item,
// the capability that declares them.
var lists = []struct{ method, field, key, capability string }{
	{"tools/list", "tools", "name", "tools"},
	{"resources/list", "resources", "uri", "resources"},
	{"resources/templates/list", "resourceTemplates", "uriTemplate", "resources"},
	{"prompts/list", "prompts", "name", "prompts"},
}

func (c *Catalog) list(field string) *[]json.RawMessage {
	switch field {
	case "tools":
		return &c.Tools
	case "resources":
		return &c.Resources
	case "resourceTemplates":
		return &c.Templates
	}
	return &c.Prompts
}

// Follow lists every page of one list, fetch asking for the page after
// cursor ("" the first), and says where the paging repeated itself: a
// nextCursor seen before (following it would loop), an item on two pages
// (kept once), more than MaxPages pages.
func Follow(fetch func(cursor string) (json.RawMessage, error), field, key string) (items []json.RawMessage, problems []string, err error) {
	cursors := map[string]bool{}
	pageOf := map[string]int{}
	cursor := ""
	for page := 1; ; page++ {
		res, err := fetch(cursor)
		if err != nil {
			return items, problems, err
		}
		var p struct {
			Items      []json.RawMessage
			NextCursor string `json:"nextCursor"`
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(res, &m); err != nil {
			return items, problems, fmt.Errorf("page %d is not an object: %w", page, err)
		}
		if raw, ok := m[field]; ok && string(raw) != "null" {
			if err := json.Unmarshal(raw, &p.Items); err != nil {
				return items, problems, fmt.Errorf("page %d: %q is not a list: %w", page, field, err)
			}
		}
		_ = json.Unmarshal(m["nextCursor"], &p.NextCursor)
		repeated := 0
		for _, it := range p.Items {
			var named map[string]json.RawMessage
			_ = json.Unmarshal(it, &named)
			k := string(named[key])
			if first, ok := pageOf[k]; ok && first != page {
				if repeated == 0 {
					problems = append(problems, fmt.Sprintf("page %d repeats %s from page %d", page, k, first))
				}
				repeated++
				continue
			}
			pageOf[k] = page
			items = append(items, it)
		}
		switch {
		case p.NextCursor == "":
			return items, problems, nil
		case cursors[p.NextCursor] || p.NextCursor == cursor:
			problems = append(problems, fmt.Sprintf("page %d's nextCursor %q was given before: following it loops", page, p.NextCursor))
			return items, problems, nil
		case page >= MaxPages:
			problems = append(problems, fmt.Sprintf("still a nextCursor after %d pages; stopped there", page))
			return items, problems, nil
		}
		cursors[p.NextCursor] = true
		cursor = p.NextCursor
	}
}

// FromSession reads a live server's catalog: every list its capabilities
// declare, page by page, and tools/list a second time to compare the
// order. An error is a list that could not be had (the server said no,
// the connection failed, the time ran out).
func FromSession(ctx context.Context, s *session.Session) (*Catalog, error) {
	in := s.Info()
	c := &Catalog{ProtocolVersion: in.ProtocolVersion}
	fetcher := func(method string) func(string) (json.RawMessage, error) {
		return func(cursor string) (json.RawMessage, error) {
			var params any
			if cursor != "" {
				params = map[string]any{"cursor": cursor}
			}
			return s.Call(method, params).Await(ctx)
		}
	}
	for _, l := range lists {
		p := c.list(l.field)
		*p = []json.RawMessage{}
		if len(in.Capabilities) > 0 && !s.HasCapability(l.capability) {
			continue
		}
		items, problems, err := Follow(fetcher(l.method), l.field, l.key)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.method, err)
		}
		*p = items
		for _, pr := range problems {
			c.Paging = append(c.Paging, PagingProblem{Method: l.method, Detail: pr})
		}
		if l.field == "tools" {
			again, _, err := Follow(fetcher(l.method), l.field, l.key)
			if err != nil {
				return nil, fmt.Errorf("%s (the second time): %w", l.method, err)
			}
			c.ToolsAgain = again
		}
	}
	return c, nil
}

// FromSnapshot reads a catalog diff read or wrote: a journal's last
// listings, or a --baseline snapshot file. A list it never recorded stays
// nil.
func FromSnapshot(s *diff.Snapshot) *Catalog {
	return &Catalog{ProtocolVersion: s.ProtocolVersion, Tools: s.Tools, Resources: s.Resources,
		Templates: s.ResourceTemplates, Prompts: s.Prompts}
}

// JournalResults are the tools/call results a journal recorded (a result
// too large to be held is left out).
func JournalResults(path string) ([]Result, error) {
	var out []Result
	_, err := scan.File(path, scan.Options{CallEnded: func(_ int, c *session.CallSnapshot) {
		if c.Method != "tools/call" || len(c.Result) == 0 || c.ResultType == "input_required" || c.ResultType == "task" {
			return
		}
		var r struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
			IsError           bool            `json:"isError"`
		}
		if json.Unmarshal(c.Result, &r) != nil {
			return
		}
		out = append(out, Result{Tool: c.Name, Structured: append(json.RawMessage(nil), r.StructuredContent...), IsError: r.IsError})
	}}, func(*scan.Frame) error { return nil })
	return out, err
}
