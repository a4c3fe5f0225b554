// Package diff compares what two MCP servers (or one server at two times)
// offer: server info, protocol version, capabilities, instructions, and
// every tool, resource, resource template and prompt, field by field, with
// a structural diff of JSON Schemas and annotations. A side is a journal
// (the last lists it recorded), a live session (lists fetched now) or a
// snapshot file written earlier (a baseline).
package diff

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"mcpscope/artifact/scan"
	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/transport"
)

// Format names the snapshot file format (its "format" field).
const Format = "mcpscope-catalog/1"

// Snapshot is a server's catalog, normalized: items sorted by their key,
// JSON objects with sorted keys, numbers as written. It is also the
// baseline file's content.
type Snapshot struct {
	Format string `json:"format"`
	// Source says where it came from (a journal path, a target); it is
	// never compared.
	Source          string                  `json:"source"`
	Server          protocol.Implementation `json:"server"`
	ProtocolVersion string                  `json:"protocolVersion"`
	Capabilities    json.RawMessage         `json:"capabilities"`
	Instructions    string                  `json:"instructions,omitempty"`
	// The lists; nil (null in the file) when the side never listed them
	// (a journal without tools/list), which is not the same as empty.
	Tools             []json.RawMessage `json:"tools"`
	Resources         []json.RawMessage `json:"resources"`
	ResourceTemplates []json.RawMessage `json:"resourceTemplates"`
	Prompts           []json.RawMessage `json:"prompts"`
	// Notes are what a reader should know (a list that failed).
	Notes []string `json:"notes,omitempty"`
}

// list describes one of the four lists.
type list struct {
	Kind   string // singular, for people: tool, resource, template, prompt
	Method string
	Field  string // the result's field, and the snapshot's
	Key    string // the item field that names it
	Cap    string // the capability that declares it
}

var lists = []list{
	{"tool", "tools/list", "tools", "name", "tools"},
	{"resource", "resources/list", "resources", "uri", "resources"},
	{"template", "resources/templates/list", "resourceTemplates", "uriTemplate", "resources"},
	{"prompt", "prompts/list", "prompts", "name", "prompts"},
}

func (s *Snapshot) items(l list) *[]json.RawMessage {
	switch l.Field {
	case "tools":
		return &s.Tools
	case "resources":
		return &s.Resources
	case "resourceTemplates":
		return &s.ResourceTemplates
	}
	return &s.Prompts
}

// normalize sorts the lists by key and rewrites every JSON value with
// sorted object keys and no blanks, so equal catalogs are equal bytes.
func (s *Snapshot) normalize() {
	s.Format = Format
	s.Capabilities = canonical(s.Capabilities)
	for _, l := range lists {
		p := s.items(l)
		if *p == nil {
			continue
		}
		for i, it := range *p {
			(*p)[i] = canonical(it)
		}
		sort.SliceStable(*p, func(i, j int) bool { return keyOf(l, (*p)[i]) < keyOf(l, (*p)[j]) })
	}
}

// canonical re-encodes raw with sorted keys (numbers kept as written).
func canonical(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	v, err := decode(raw)
	if err != nil {
		return raw
	}
	b, err := marshal(v)
	if err != nil {
		return raw
	}
	return b
}

func decode(raw json.RawMessage) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// keyOf is an item's name in its list.
func keyOf(l list, item json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(item, &m) != nil {
		return ""
	}
	var k string
	_ = json.Unmarshal(m[l.Key], &k)
	return k
}

// FromSession lists everything a live session's server declares (every
// page) and takes its info from the handshake.
func FromSession(ctx context.Context, s *session.Session, source string) *Snapshot {
	in := s.Info()
	snap := &Snapshot{Source: source, Server: in.ServerInfo, ProtocolVersion: in.ProtocolVersion,
		Capabilities: in.Capabilities, Instructions: in.Instructions}
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(in.Capabilities, &caps)
	for _, l := range lists {
		p := snap.items(l)
		*p = []json.RawMessage{}
		if _, ok := caps[l.Cap]; !ok {
			continue // not declared: nothing to list
		}
		items, err := s.ListAll(ctx, l.Method, l.Field)
		if err != nil {
			snap.Notes = append(snap.Notes, fmt.Sprintf("%s: %v", l.Method, err))
			if ctx.Err() != nil {
				break
			}
		}
		*p = append(*p, items...)
	}
	snap.normalize()
	return snap
}

// FromJournal reads a journal's catalog: the server's info from its
// handshake, and for each list the last listing it recorded, rebuilt as an
// offline session rebuilds it (protocol.LastListing). Lists it never
// recorded whole are nil.
func FromJournal(path string) (*Snapshot, error) {
	var (
		in    scan.Info
		asked = map[int]string{}                     // call index → the cursor of a list request
		pages = map[string][]protocol.RecordedPage{} // method → its answered pages from the last first page on
	)
	methods := map[string]list{}
	for _, l := range lists {
		methods[l.Method] = l
	}
	// What is kept is copied; a call's params are never read (the cursor
	// comes from the request frame itself), so a huge request costs nothing.
	_, err := scan.File(path, scan.Options{Borrow: true, NoParams: true}, func(fr *scan.Frame) error {
		in.Observe(fr)
		if fr.Call == nil || fr.Env == nil || fr.Late {
			return nil
		}
		l, ok := methods[fr.Call.Method]
		if !ok {
			return nil
		}
		switch {
		case fr.Dir == transport.Out && fr.Env.Class() == journal.ClassRequest:
			asked[fr.CallIndex] = protocol.ParamsCursor(fr.Env.Params)
		case fr.Dir == transport.In && (fr.Env.Result != nil || fr.Env.Error != nil):
			cursor, ok := asked[fr.CallIndex]
			delete(asked, fr.CallIndex)
			if !ok || fr.Env.Error != nil {
				return nil
			}
			p := protocol.RecordedPage{Cursor: cursor, Result: bytes.Clone(fr.Env.Result)}
			if cursor == "" {
				pages[l.Method] = []protocol.RecordedPage{p}
			} else if len(pages[l.Method]) > 0 {
				pages[l.Method] = append(pages[l.Method], p)
			}
		}
		return nil
	})
	if err != nil && in.Frames == 0 {
		return nil, err
	}
	snap := &Snapshot{Source: path, Server: in.ServerInfo, ProtocolVersion: in.ProtocolVersion,
		Capabilities: in.Capabilities, Instructions: in.Instructions}
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(in.Capabilities, &caps)
	for _, l := range lists {
		p := snap.items(l)
		if items, why := recordedItems(l, pages[l.Method]); why == "" {
			*p = items
		} else if why != "none" {
			snap.Notes = append(snap.Notes, fmt.Sprintf("%s: the last listing recorded %s; not compared", l.Method, why))
		} else if _, declared := caps[l.Cap]; !declared && in.Capabilities != nil {
			*p = []json.RawMessage{} // the server declares none: known empty
		}
	}
	if err != nil {
		snap.Notes = append(snap.Notes, err.Error())
	}
	snap.normalize()
	return snap, nil
}

// recordedItems are the items of the listing LastListing picks from pages;
// why says why there are none: "none" when no first page was answered, else
// what is wrong with the listing (a page unreadable, pages missing).
func recordedItems(l list, pages []protocol.RecordedPage) (items []json.RawMessage, why string) {
	run := protocol.LastListing(pages)
	if len(run) == 0 {
		return nil, "none"
	}
	items = []json.RawMessage{}
	var cursor string
	for _, i := range run {
		var page map[string]json.RawMessage
		var got []json.RawMessage
		if json.Unmarshal(pages[i].Result, &page) != nil ||
			(len(page[l.Field]) > 0 && json.Unmarshal(page[l.Field], &got) != nil) {
			return nil, "has an unreadable page"
		}
		items = append(items, got...)
		cursor = ""
		_ = json.Unmarshal(page["nextCursor"], &cursor)
	}
	if cursor != "" {
		return nil, fmt.Sprintf("is incomplete (%d pages, then no answer to the next)", len(run))
	}
	return items, ""
}

// Load reads a side from a file: a journal, or a snapshot written by Write.
func Load(path string) (*Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	head, _ := bufio.NewReader(f).Peek(4096)
	f.Close()
	var probe struct {
		Format string `json:"format"`
	}
	line, _, _ := bytes.Cut(head, []byte("\n"))
	if json.Unmarshal(line, &probe) == nil && len(probe.Format) > 17 && probe.Format[:17] == "mcpscope-journal/" {
		return FromJournal(path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Snapshot
	if err := json.Unmarshal(b, &s); err != nil || s.Format != Format {
		return nil, fmt.Errorf("%s is neither a journal nor a catalog snapshot (%s)", path, Format)
	}
	s.Source = transport.RedactTarget(s.Source) // a target, as the build that wrote the file named it
	s.normalize()
	return &s, nil
}

// Write writes the snapshot as indented JSON, the baseline file's form.
func (s *Snapshot) Write(w io.Writer) error {
	s.normalize()
	e := json.NewEncoder(w)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	return e.Encode(s)
}

// Counts says how much a snapshot holds, for people ("12 tools, 7
// resources…"); a list never recorded shows as "tools not recorded".
func (s *Snapshot) Counts() string {
	var out []string
	for _, l := range lists {
		p := *s.items(l)
		if p == nil {
			out = append(out, l.Field+" not recorded")
			continue
		}
		out = append(out, fmt.Sprintf("%d %s", len(p), l.Field))
	}
	return strings.Join(out, ", ")
}
