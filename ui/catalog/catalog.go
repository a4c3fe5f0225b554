// Package catalog is the server's tools, resources, templates and prompts:
// fetched with ordinary list calls (they show in the requests pane) and
// fetched again when the server says a list changed; a find over them all
// (find.go); a tool's schemas beside or under the list (schema.go). Opening
// an entry opens its form (ui/form) or reads the resource; the call goes
// through the root (Host), which knows which session can send it.
package catalog

import (
	"encoding/json"

	tea "charm.land/bubbletea/v2"

	"mcpscope/internal/termsafe"
	"mcpscope/lint"
	"mcpscope/session"
	"mcpscope/ui/form"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
	"mcpscope/ui/widget"
)

// Scope is where the catalog's keys are looked up.
const Scope = keys.Catalog

// The sections, in the order the tabs show them.
const (
	Tools = iota
	Resources
	Templates
	Prompts
)

// Host is what the catalog may ask of the session and the root.
type Host interface {
	Info() session.Info
	// Connected: the session has a transport (a recording has none).
	Connected() bool
	// List starts a list call.
	List(method, field string) *session.Listing
	// WhyNoChange is why the session cannot be changed now ("" when it can).
	WhyNoChange() string
	Subscribe(uri string)
	Unsubscribe(uri string)
	// Send makes the call mk makes in the session that can send it (this
	// one, or the live one replays go to) and shows it, or says why no
	// session can.
	Send(mk func(s *session.Session) *session.Call) view.Action
	// Find opens the find's input line over the catalog, empty; esc there
	// brings last back.
	Find(last string) view.Action
}

// Passed are the global bindings the catalog gives no meaning of its own:
// over the catalog they do what they do over the panes.
var Passed = []string{"info", "send-raw", "log-level", "theme", "reconnect", "tasks", "rejoinable"}

// entry is one tool, resource, template or prompt.
type entry struct {
	name, title, desc, uri string
	schema                 json.RawMessage // tools: inputSchema
	outSchema              json.RawMessage // tools: outputSchema
	annotations            json.RawMessage // tools: annotations
	taskSupport            string          // tools: execution.taskSupport ("", "forbidden", "optional", "required")
	findings               []lint.Finding  // tools: what hosts will refuse or read unevenly (mcpscope lint)
	args                   []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Required    bool   `json:"required"`
	}
}

type section struct {
	label, method, field, capability string
	entries                          []entry
	view                             []hit // the find's rows, best first (nil: no find)
	sel                              int   // the selected row (of view when finding)
	pending                          *session.Listing
	err                              string
	seen                             int // list_changed count at the last fetch
	fetched                          bool
}

// View is the catalog.
type View struct {
	host Host
	secs []*section
	cur  int
	find string // the find's query (find.go)
}

// New is an empty catalog over host; Fetch fills it.
func New(host Host) *View {
	return &View{host: host, secs: []*section{
		{label: "tools", method: "tools/list", field: "tools", capability: "tools"},
		{label: "resources", method: "resources/list", field: "resources", capability: "resources"},
		{label: "templates", method: "resources/templates/list", field: "resourceTemplates", capability: "resources"},
		{label: "prompts", method: "prompts/list", field: "prompts", capability: "prompts"},
	}}
}

// Fetch lists every section the server has (force: even if fetched).
func (v *View) Fetch(force bool) {
	info := v.host.Info()
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(info.Capabilities, &caps)
	for _, s := range v.secs {
		if s.pending != nil || (s.fetched && !force) {
			continue
		}
		if _, ok := caps[s.capability]; !ok && info.Capabilities != nil {
			s.err = "the server did not declare " + s.capability
			s.fetched = true
			continue
		}
		s.seen = s.changed(info)
		s.pending = v.host.List(s.method, s.field)
		s.fetched = true
	}
}

// changed is how many list_changed the server sent for the section.
func (s *section) changed(info session.Info) int {
	if s.label == "templates" {
		return info.ListChanged["resources"]
	}
	return info.ListChanged[s.label]
}

// Poll collects finished list calls and refetches lists the server
// changed.
func (v *View) Poll() {
	info := v.host.Info()
	for _, s := range v.secs {
		if s.fetched && s.pending == nil && s.changed(info) != s.seen {
			s.fetched = false
		}
		if s.pending == nil || !s.pending.Step() {
			continue
		}
		items, err := s.pending.Result()
		s.pending = nil
		if err != nil {
			s.err = termsafe.Line(err.Error())
			continue
		}
		s.entries, s.err = parseEntries(items), ""
		v.lint(s, items)
		v.filterSection(s)
	}
	// Lists the server changed are fetched again once the catalog is open
	// or was fetched before (the user wants them current).
	if v.host.Connected() {
		for _, s := range v.secs {
			if !s.fetched && s.entries != nil {
				v.Fetch(false)
				break
			}
		}
	}
}

// Load fills section sec with items as if its list call had answered.
func (v *View) Load(sec int, items []json.RawMessage) {
	s := v.secs[sec]
	s.entries, s.fetched, s.err = parseEntries(items), true, ""
	v.lint(s, items)
	v.filterSection(s)
}

// Absent marks section sec fetched with nothing, saying why.
func (v *View) Absent(sec int, why string) {
	s := v.secs[sec]
	s.fetched, s.err = true, why
}

// Field is the name of the member of a list result that holds section
// sec's items ("tools", "resourceTemplates"…).
func (v *View) Field(sec int) string { return v.secs[sec].field }

// Names are the names (URIs for resources and templates) of the rows
// section sec shows now, in order.
func (v *View) Names(sec int) []string {
	s := v.secs[sec]
	out := make([]string, s.n())
	for i := range out {
		e, _ := s.at(i)
		out[i] = widget.FirstNonEmpty(e.name, e.uri)
	}
	return out
}

// Query is the find's query ("" when not finding).
func (v *View) Query() string { return v.find }

// OutputSchema is a listed tool's outputSchema (nil when the catalog has
// not listed it or it declares none).
func (v *View) OutputSchema(tool string) json.RawMessage {
	for _, e := range v.secs[Tools].entries {
		if e.name == tool {
			return e.outSchema
		}
	}
	return nil
}

// Keys is the catalog's part of the keymap.
var Keys = view.Group{Scope: Scope, Bindings: bindings.Keys(),
	Footer: []string{"open", "catalog-find", "section-next", "subscribe", "refresh", "catalog-close", "help"}}

var bindings = view.Bindings[*View]{
	{Binding: keys.Binding{Name: "catalog-close", Scope: Scope, Keys: []string{"esc"}, Help: "clear the find, else back to the session", Short: "back"},
		Run: func(v *View, _ view.Context) view.Action {
			if v.find != "" {
				v.SetFind("")
				return view.Action{}
			}
			return v.close()
		}},
	{Binding: keys.Binding{Name: "catalog-find", Scope: Scope, Keys: []string{"/", "f"}, Help: "find (fuzzy: names and titles, then descriptions), as you type"},
		Run: (*View).openFind},
	{Binding: keys.Binding{Name: "section-next", Scope: Scope, Keys: []string{"right", "l"}, Help: "next section", Short: "section"},
		Run: nextSection},
	{Binding: keys.Binding{Name: "section-prev", Scope: Scope, Keys: []string{"left", "h"}, Help: "previous section"},
		Run: func(v *View, _ view.Context) view.Action {
			v.cur = (v.cur + len(v.secs) - 1) % len(v.secs)
			return view.Action{}
		}},
	{Binding: keys.Binding{Name: "subscribe", Scope: Scope, Keys: []string{"s"}, Help: "subscribe / unsubscribe the resource", Short: "subscribe"},
		Run: (*View).subscribe,
		Disabled: func(v *View, _ view.Context) string {
			if s := v.secs[v.cur]; s.label != "resources" || s.n() == 0 {
				return "works on resources"
			}
			return v.host.WhyNoChange()
		}},
	{Binding: keys.Binding{Name: "refresh", Scope: Scope, Keys: []string{"R"}, Help: "refresh the lists", Short: "refresh"},
		Run: func(v *View, _ view.Context) view.Action { v.Fetch(true); return view.Flash("refreshing the catalog") }},

	// Global bindings the catalog gives a meaning of its own.
	{Binding: keys.Binding{Name: "catalog"}, Run: func(v *View, _ view.Context) view.Action { return v.close() }},
	{Binding: keys.Binding{Name: "filter"}, Run: (*View).openFind},
	{Binding: keys.Binding{Name: "focus-next"}, Run: nextSection},
	{Binding: keys.Binding{Name: "quit"}, Run: func(*View, view.Context) view.Action { return view.Action{Quit: true} }},
	{Binding: keys.Binding{Name: "help"}, Run: func(*View, view.Context) view.Action { return view.Action{Help: true} }},
	{Binding: keys.Binding{Name: "up"}, Run: move(-1)},
	{Binding: keys.Binding{Name: "down"}, Run: move(1)},
	{Binding: keys.Binding{Name: "page-up"}, Run: move(-10)},
	{Binding: keys.Binding{Name: "page-down"}, Run: move(10)},
	{Binding: keys.Binding{Name: "top"}, Run: func(v *View, _ view.Context) view.Action { v.secs[v.cur].sel = 0; return view.Action{} }},
	{Binding: keys.Binding{Name: "follow"}, Run: func(v *View, _ view.Context) view.Action {
		s := v.secs[v.cur]
		s.sel = max(0, s.n()-1)
		return view.Action{}
	}},
	{Binding: keys.Binding{Name: "open"}, Run: (*View).open},
}

func nextSection(v *View, _ view.Context) view.Action {
	v.cur = (v.cur + 1) % len(v.secs)
	return view.Action{}
}

func move(d int) func(*View, view.Context) view.Action {
	return func(v *View, _ view.Context) view.Action { v.Move(d); return view.Action{} }
}

// close leaves the catalog; opened again, it starts whole.
func (v *View) close() view.Action {
	v.SetFind("")
	return view.Close()
}

// openFind starts a new find: it starts empty (typing replaces the last
// one, never appends to it); esc brings the last one back.
func (v *View) openFind(view.Context) view.Action { return v.host.Find(v.find) }

func (v *View) subscribe(view.Context) view.Action {
	s := v.secs[v.cur]
	e, _ := s.at(widget.Clamp(s.sel, 0, s.n()-1))
	for _, u := range v.host.Info().Subscriptions {
		if u == e.uri {
			v.host.Unsubscribe(e.uri)
			return view.Flash("unsubscribing from " + termsafe.Line(e.uri))
		}
	}
	v.host.Subscribe(e.uri)
	return view.Flash("subscribing to " + termsafe.Line(e.uri))
}

func (v *View) Scope() keys.Scope { return Scope }

// Disabled is why a binding cannot run now.
func (v *View) Disabled(c view.Context, name string) string { return bindings.Why(v, c, name) }

// Takes reports whether the catalog gives the binding called name a
// meaning (else the root does what Passed says).
func (v *View) Takes(name string) bool {
	for _, b := range bindings {
		if b.Name == name {
			return true
		}
	}
	return false
}

func (v *View) Key(c view.Context, name string, _ tea.KeyPressMsg) view.Action {
	a, _ := bindings.Do(v, c, name)
	return a
}

// open acts on the selected entry: a form for a tool or prompt, a read
// for a resource, a URI form for a template.
func (v *View) open(c view.Context) view.Action {
	s := v.secs[v.cur]
	if s.n() == 0 {
		return view.Action{}
	}
	e, _ := s.at(widget.Clamp(s.sel, 0, s.n()-1))
	send := v.host.Send
	switch s.label {
	case "tools":
		fields, err := form.FromSchema(e.schema)
		f := form.New("Call tool "+termsafe.Line(e.name)+" — enter sends, ctrl+r raw JSON, ctrl+e $EDITOR, esc cancels", e.desc, fields,
			func(args json.RawMessage, call form.Call) view.Action {
				params := map[string]any{"name": e.name, "arguments": args}
				if call.AsTask {
					return send(func(s *session.Session) *session.Call { return s.CallAsTask("tools/call", params, 0) })
				}
				return send(func(s *session.Session) *session.Call {
					return s.CallWith("tools/call", params, session.CallOptions{Timeout: call.Timeout})
				})
			}).ForTool(e.taskSupport)
		if err != nil {
			f.RawOnly(c, "inputSchema unreadable ("+err.Error()+"): raw JSON only")
		}
		return view.Action{Open: f}
	case "resources":
		return send(func(s *session.Session) *session.Call {
			return s.Call("resources/read", map[string]string{"uri": e.uri})
		})
	case "templates":
		return view.Action{Open: form.New("Read from template "+termsafe.Line(e.uri), e.desc,
			[]*form.Field{form.Text("uri", "URI", e.uri, true)},
			func(args json.RawMessage, _ form.Call) view.Action {
				var a struct {
					URI string `json:"uri"`
				}
				_ = json.Unmarshal(args, &a)
				return send(func(s *session.Session) *session.Call {
					return s.Call("resources/read", map[string]string{"uri": a.URI})
				})
			})}
	case "prompts":
		var fields []*form.Field
		for _, a := range e.args {
			fields = append(fields, form.Text(a.Name, "", "", a.Required).WithDesc(a.Description))
		}
		return view.Action{Open: form.New("Get prompt "+termsafe.Line(e.name), e.desc, fields,
			func(args json.RawMessage, _ form.Call) view.Action {
				return send(func(s *session.Session) *session.Call {
					return s.Call("prompts/get", map[string]any{"name": e.name, "arguments": args})
				})
			})}
	}
	return view.Action{}
}

// lint gives each tool of a tools section its findings (every host
// profile), as mcpscope lint would report them.
func (v *View) lint(s *section, items []json.RawMessage) {
	if s.label != "tools" {
		return
	}
	r := lint.Check(&lint.Catalog{ProtocolVersion: v.host.Info().ProtocolVersion, Tools: items}, nil)
	for i := range s.entries {
		s.entries[i].findings = r.For("tool", s.entries[i].name)
	}
}

// parseEntries reads the items of a list (tools, resources, templates or prompts).
func parseEntries(items []json.RawMessage) []entry {
	var out []entry
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
		e := entry{name: r.Name, title: r.Title, desc: r.Description, uri: widget.FirstNonEmpty(r.URI, r.URITemplate), schema: r.InputSchema,
			taskSupport: r.Execution.TaskSupport, outSchema: r.OutputSchema, annotations: r.Annotations}
		_ = json.Unmarshal(r.Arguments, &e.args)
		out = append(out, e)
	}
	return out
}
