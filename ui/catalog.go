package ui

import (
	"encoding/json"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/internal/termsafe"
	"mcpscope/session"
)

// catEntry is one tool, resource, template or prompt.
type catEntry struct {
	name, title, desc, uri string
	schema                 json.RawMessage // tools: inputSchema
	outSchema              json.RawMessage // tools: outputSchema
	annotations            json.RawMessage // tools: annotations
	taskSupport            string          // tools: execution.taskSupport ("", "forbidden", "optional", "required")
	args                   []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Required    bool   `json:"required"`
	}
}

type catSection struct {
	label, method, field, capability string
	entries                          []catEntry
	view                             []catHit // the find's rows, best first (nil: no find)
	sel                              int      // the selected row (of view when finding)
	pending                          *session.Listing
	err                              string
	seen                             int // list_changed count at the last fetch
	fetched                          bool
}

// catalog is the server's tools, resources, templates and prompts,
// fetched with ordinary calls (visible in the requests pane) and fetched
// again when the server says a list changed.
type catalog struct {
	secs []*catSection
	cur  int
	find string // the find's query (catfind.go)
}

func newCatalog() *catalog {
	return &catalog{secs: []*catSection{
		{label: "tools", method: "tools/list", field: "tools", capability: "tools"},
		{label: "resources", method: "resources/list", field: "resources", capability: "resources"},
		{label: "templates", method: "resources/templates/list", field: "resourceTemplates", capability: "resources"},
		{label: "prompts", method: "prompts/list", field: "prompts", capability: "prompts"},
	}}
}

// refresh lists every section the server has (force: even if fetched).
func (c *catalog) refresh(m *Model, force bool) {
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(m.info.Capabilities, &caps)
	for _, s := range c.secs {
		if s.pending != nil || (s.fetched && !force) {
			continue
		}
		if _, ok := caps[s.capability]; !ok && m.info.Capabilities != nil {
			s.err = "the server did not declare " + s.capability
			s.fetched = true
			continue
		}
		s.seen = m.info.ListChanged[s.label]
		if s.label == "templates" {
			s.seen = m.info.ListChanged["resources"]
		}
		s.pending = m.s.List(s.method, s.field)
		s.fetched = true
	}
}

// poll collects finished list calls and refetches lists the server
// changed.
func (c *catalog) poll(m *Model) {
	for _, s := range c.secs {
		changed := m.info.ListChanged[s.label]
		if s.label == "templates" {
			changed = m.info.ListChanged["resources"]
		}
		if s.fetched && s.pending == nil && changed != s.seen {
			s.fetched = false
		}
		if s.pending == nil {
			continue
		}
		if !s.pending.Step() {
			continue
		}
		items, err := s.pending.Result()
		s.pending = nil
		if err != nil {
			s.err = termsafe.Line(err.Error())
			continue
		}
		s.entries, s.err = parseEntries(items), ""
		c.filterSection(s)
	}
	// Lists the server changed are fetched again once the catalog is open
	// or was fetched before (the user wants them current).
	if m.s.Transport() != nil {
		for _, s := range c.secs {
			if !s.fetched && s.entries != nil {
				c.refresh(m, false)
				break
			}
		}
	}
}

func (c *catalog) key(m *Model, name string) tea.Cmd {
	s := c.secs[c.cur]
	switch name {
	case "catalog-close", "catalog":
		if c.find != "" && name == "catalog-close" {
			c.setFind("")
			return nil
		}
		m.inCat = false
		c.setFind("") // a catalog opened again starts whole
	case "catalog-find", "filter":
		// A new find starts empty (typing replaces the last one, never
		// appends to it); esc brings the last one back.
		m.find.prompt = newFilterPrompt(m, targetCatalog, "")
		m.find.prompt.EscRestores(c.find)
	case "info":
		m.openInfo()
	case "quit":
		m.quit = true
	case "help":
		m.push(newHelp(m))
	case "section-next", "focus-next":
		c.cur = (c.cur + 1) % len(c.secs)
	case "section-prev":
		c.cur = (c.cur + len(c.secs) - 1) % len(c.secs)
	case "up":
		c.move(-1)
	case "down":
		c.move(1)
	case "page-up":
		c.move(-10)
	case "page-down":
		c.move(10)
	case "top":
		s.sel = 0
	case "follow":
		s.sel = max(0, s.n()-1)
	case "refresh":
		c.refresh(m, true)
		m.setFlash("refreshing the catalog")
	case "send-raw":
		return m.openRawSend()
	case "log-level":
		m.openLogLevel()
	case "theme":
		m.nextTheme()
	case "reconnect":
		m.reconnectNow()
	case "tasks":
		m.openTasks()
	case "rejoinable":
		m.openRejoin()
	case "subscribe":
		if s.label != "resources" || s.n() == 0 {
			m.setFlash("subscribe works on resources")
			return nil
		}
		if m.cannotChange("subscribe") {
			return nil
		}
		e, _ := s.at(clamp(s.sel, 0, s.n()-1))
		uri := e.uri
		for _, u := range m.info.Subscriptions {
			if u == uri {
				m.s.Unsubscribe(uri)
				m.setFlash("unsubscribing from " + termsafe.Line(uri))
				return nil
			}
		}
		m.s.Subscribe(uri)
		m.setFlash("subscribing to " + termsafe.Line(uri))
	case "open":
		if s.n() == 0 {
			return nil
		}
		e, _ := s.at(clamp(s.sel, 0, s.n()-1))
		return c.open(m, s, e)
	}
	return nil
}

// open acts on an entry: a form for a tool or prompt, a read for a
// resource, a URI form for a template.
func (c *catalog) open(m *Model, s *catSection, e catEntry) tea.Cmd {
	// send makes the call in the session shown; when that session cannot
	// send, a recording refuses (saying why) and an attached HTTP proxy's
	// calls go to a live session of mcpscope's own.
	send := func(m *Model, mk func(s *session.Session) *session.Call) tea.Cmd {
		sent := func(m *Model) tea.Cmd {
			call := mk(m.s)
			m.inCat, m.focus = false, paneRequests
			c.setFind("")
			m.setFlash("sent " + call.Method + " " + termsafe.Line(call.Name) + " (call " + call.Key + ")")
			m.landOn(call) // its answer shows there when it comes
			return nil
		}
		why := m.cannotSend()
		switch {
		case why == "":
			return sent(m)
		case m.recording():
			m.refuse("call", why+" — "+m.keyOf("replay")+" on a recorded call replays it against a live server")
			return nil
		}
		m.inCat = false // the call lands in the live session's panes
		return m.goLive("call", why, sent)
	}
	switch s.label {
	case "tools":
		fields, err := fieldsFromSchema(e.schema)
		f := &form{title: "Call tool " + termsafe.Line(e.name) + " — enter sends, ctrl+r raw JSON, ctrl+e $EDITOR, esc cancels", message: e.desc, fields: fields,
			callOpts: true, taskSupport: e.taskSupport, asTask: e.taskSupport == "required"}
		if err != nil {
			f.raw, f.rawText, f.err = true, newArea("{}", m.th), "inputSchema unreadable ("+err.Error()+"): raw JSON only"
		}
		f.onSubmit = func(m *Model, args json.RawMessage) tea.Cmd {
			params := map[string]any{"name": e.name, "arguments": args}
			if f.asTask {
				return send(m, func(s *session.Session) *session.Call { return s.CallAsTask("tools/call", params, 0) })
			}
			timeout := timeouts[f.timeout].d
			return send(m, func(s *session.Session) *session.Call {
				return s.CallWith("tools/call", params, session.CallOptions{Timeout: timeout})
			})
		}
		m.push(f)
	case "resources":
		return send(m, func(s *session.Session) *session.Call {
			return s.Call("resources/read", map[string]string{"uri": e.uri})
		})
	case "templates":
		f := &form{title: "Read from template " + termsafe.Line(e.uri), message: e.desc,
			fields: []*field{newTextField("uri", "URI", e.uri, true)}}
		f.onSubmit = func(m *Model, args json.RawMessage) tea.Cmd {
			var a struct {
				URI string `json:"uri"`
			}
			_ = json.Unmarshal(args, &a)
			return send(m, func(s *session.Session) *session.Call {
				return s.Call("resources/read", map[string]string{"uri": a.URI})
			})
		}
		m.push(f)
	case "prompts":
		var fields []*field
		for _, a := range e.args {
			fields = append(fields, withDesc(newTextField(a.Name, "", "", a.Required), a.Description))
		}
		f := &form{title: "Get prompt " + termsafe.Line(e.name), message: e.desc, fields: fields}
		f.onSubmit = func(m *Model, args json.RawMessage) tea.Cmd {
			return send(m, func(s *session.Session) *session.Call {
				return s.Call("prompts/get", map[string]any{"name": e.name, "arguments": args})
			})
		}
		m.push(f)
	}
	return nil
}

func (c *catalog) render(m *Model, w, h int) string {
	var tabs []string
	for i, s := range c.secs {
		lb := fmt.Sprintf(" %s (%d) ", s.label, len(s.entries))
		if c.find != "" {
			lb = fmt.Sprintf(" %s (%d/%d) ", s.label, s.n(), len(s.entries))
		}
		if i == c.cur {
			tabs = append(tabs, m.th.Selected.Render(lb))
		} else {
			tabs = append(tabs, m.th.Faint.Render(lb))
		}
	}
	head := m.th.Title.Render(" Catalog ")
	if c.find != "" {
		head += m.th.Accent.Render(" find “" + termsafe.Line(shorten(c.find, 24)) + "” ")
	}
	l := []string{head + strings.Join(tabs, "│")}
	s := c.secs[c.cur]
	// A tool's schemas and annotations: beside the list when the terminal
	// is wide, else under the entry's description (a third of the height).
	full := w
	var side, under []string
	if s.label == "tools" && s.n() > 0 && s.pending == nil {
		e, _ := s.at(clamp(s.sel, 0, s.n()-1))
		if w >= wideCatalog {
			w = full * 11 / 20
			side = m.schemaLines(e, full-w-2)
		} else {
			under = append([]string{""}, m.schemaLines(e, w-2)...)
			for i := range under {
				under[i] = " " + under[i]
			}
		}
	}
	switch {
	case s.pending != nil:
		l = append(l, m.th.Faint.Render("   loading…"))
	case s.err != "":
		l = append(l, m.th.Error.Render("   "+s.err))
	case len(s.entries) == 0:
		l = append(l, m.th.Faint.Render("   (empty)"))
	case s.n() == 0:
		l = append(l, m.th.Faint.Render("   nothing here matches “"+termsafe.Line(c.find)+"” — "+m.keyOf("catalog-close")+" clears the find"))
	}
	subs := map[string]bool{}
	for _, u := range m.info.Subscriptions {
		subs[u] = true
	}
	uris := s.label == "resources" || s.label == "templates"
	// The name column is as wide as the widest name, up to two fifths of
	// the width (three for URIs, which say more than titles); the selected
	// entry is spelled out whole below the list when its column cut it.
	nameW := 8
	for _, e := range s.entries {
		nameW = max(nameW, ansi.StringWidth(catName(s.label, e)))
	}
	limit := w * 2 / 5
	if uris {
		limit = w * 3 / 5
	}
	nameW = min(nameW, max(12, limit))
	var about []string
	if s.n() > 0 {
		e, _ := s.at(clamp(s.sel, 0, s.n()-1))
		about = append(about, "")
		if ansi.StringWidth(catName(s.label, e)) > nameW {
			about = append(about, indentWrap(catName(s.label, e), 1, w, 3)...)
		}
		if e.title != "" && uris {
			about = append(about, indentWrap(termsafe.Line(e.title), 1, w, 2)...)
		}
		for _, dl := range indentWrap(termsafe.Line(e.desc), 1, w, 4) {
			about = append(about, m.th.Faint.Render(dl))
		}
	}
	// The list keeps a third of the height (all of a shorter list); the
	// schemas get what is left, cut with a word of where the rest is.
	if avail := h - len(l) - len(about) - min(s.n(), max(3, (h-1)/3)); len(under) > max(2, avail) {
		under = append(under[:max(1, avail-1)], m.th.Faint.Render(fit("  … (from "+itoa(wideCatalog)+" columns the schemas show beside the list)", w)))
	}
	about = append(about, under...)
	room := max(1, h-len(l)-len(about))
	top := clamp(s.sel-room+1, 0, max(0, s.n()-room))
	for i := top; i < s.n() && i < top+room; i++ {
		e, hit := s.at(i)
		mark := " "
		if subs[e.uri] && s.label == "resources" {
			mark = "●"
		}
		// The find's matched letters are marked in the field they matched.
		var nameIdx, restIdx []int
		if hit != nil {
			switch {
			case hit.field == fieldName:
				nameIdx = hit.idx
			case hit.field == fieldTitle && e.title != "", hit.field == fieldDesc && e.title == "":
				restIdx = hit.idx
			}
		}
		rest := termsafe.Line(firstNonEmpty(e.title, e.desc))
		if restIdx != nil {
			rest = marked(rest, restIdx, m.th.Match, ansi.StringWidth(rest))
		}
		row := mark + " " + marked(catName(s.label, e), nameIdx, m.th.Match, nameW) + " " + rest
		if i == s.sel {
			l = append(l, m.th.Selected.Render(pad("▸"+ansi.Strip(row), w)))
		} else {
			l = append(l, " "+row)
		}
	}
	l = append(l, about...)
	if side != nil {
		rows := l[1:]
		for len(rows) < h-1 {
			rows = append(rows, "")
		}
		l = append(l[:1], besides(rows, side, w, m.th.Faint.Render("│")+" ")...)
		if len(l) > h {
			l = l[:h]
		}
	}
	return strings.Join(l, "\n")
}

// wrapLines breaks one line of text into at most n lines of w columns,
// the last one cut.
func wrapLines(s string, w, n int) []string {
	if w < 4 || strings.TrimSpace(s) == "" {
		return nil
	}
	ls := strings.Split(ansi.Hardwrap(ansi.Wrap(s, w, ""), w, true), "\n")
	if len(ls) > n {
		ls = ls[:n]
		ls[n-1] = fit(ls[n-1]+" …", w)
	}
	return ls
}

// indentWrap is wrapLines with every line indented, the second and later
// ones too (issue 23: a description's second line lost its indent).
func indentWrap(s string, indent, w, n int) []string {
	ls := wrapLines(s, w-indent, n)
	for i := range ls {
		ls[i] = strings.Repeat(" ", indent) + ls[i]
	}
	return ls
}

// parseEntries reads the items of a list (tools, resources, templates or prompts).
func parseEntries(items []json.RawMessage) []catEntry {
	var out []catEntry
	for _, it := range items {
		var r struct {
			Name         string          `json:"name"`
			Title        string          `json:"title"`
			Description  string          `json:"description"`
			URI          string          `json:"uri"`
			URITemplate  string          `json:"uriTemplate"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
			Annotations  json.RawMessage `json:"annotations"`
			Arguments    json.RawMessage `json:"arguments"`
			Execution    struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		}
		_ = json.Unmarshal(it, &r)
		e := catEntry{name: r.Name, title: r.Title, desc: r.Description, uri: firstNonEmpty(r.URI, r.URITemplate), schema: r.InputSchema,
			taskSupport: r.Execution.TaskSupport, outSchema: r.OutputSchema, annotations: r.Annotations}
		_ = json.Unmarshal(r.Arguments, &e.args)
		out = append(out, e)
	}
	return out
}

// outputSchema is a listed tool's outputSchema (nil when the catalog has
// not listed it or it declares none).
func (c *catalog) outputSchema(tool string) json.RawMessage {
	for _, e := range c.secs[0].entries {
		if e.name == tool {
			return e.outSchema
		}
	}
	return nil
}
