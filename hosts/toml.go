package hosts

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Codex CLI keeps its servers in TOML (config.toml), one table each:
//
//	[mcp_servers.docs]
//	command = "npx"
//	args = ["-y", "docs-mcp"]
//	env = { API_KEY = "…" }
//
// or url = "https://…" with bearer_token_env_var, http_headers and
// env_http_headers for Streamable HTTP. The values are read with go-toml;
// wrap edits the file as text (the parser's byte ranges), as it does JSONC,
// so comments and layout stay.

// readTOML adds the servers of a Codex CLI config.toml to c.
func (c *Catalog) readTOML(src source, b []byte) {
	var doc map[string]any
	if err := toml.Unmarshal(b, &doc); err != nil {
		c.problem(src, "", fmt.Errorf("cannot parse it: %v", tomlError(err)))
		return
	}
	raw, ok := doc["mcp_servers"]
	if !ok {
		return
	}
	servers, ok := raw.(map[string]any)
	if !ok {
		c.problem(src, "", errors.New("mcp_servers is not a table of servers"))
		return
	}
	for _, name := range tomlOrder(b, servers) {
		s, err := codexEntry(servers[name])
		if err != nil {
			c.problem(src, name, err)
			continue
		}
		s.Name, s.Host, s.File = name, src.host, src.file
		s.Scope, s.Project = src.scope, src.project
		s.path = []string{"mcp_servers", name}
		c.Servers = append(c.Servers, s)
	}
}

// tomlError says where a TOML file is wrong, as parseJSONC does.
func tomlError(err error) error {
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		return fmt.Errorf("line %d column %d: %s", row, col, de.Error())
	}
	return err
}

// tomlOrder is the servers' names in the order the file has them (then
// any the walk did not place, sorted), so listings follow the file.
func tomlOrder(src []byte, servers map[string]any) []string {
	var order []string
	seen := map[string]bool{}
	note := func(path []string) {
		if len(path) >= 2 && path[0] == "mcp_servers" && !seen[path[1]] && servers[path[1]] != nil {
			seen[path[1]] = true
			order = append(order, path[1])
		}
	}
	var p unstable.Parser
	p.Reset(src)
	var table []string
	for p.NextExpression() {
		n := p.Expression()
		switch n.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keyParts(n.Key())
			note(table)
		case unstable.KeyValue:
			note(append(slices.Clone(table), keyParts(n.Key())...))
		}
	}
	rest := slices.Collect(maps.Keys(servers))
	sort.Strings(rest)
	for _, name := range rest {
		if !seen[name] {
			order = append(order, name)
		}
	}
	return order
}

func keyParts(it unstable.Iterator) []string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}

// codexEntry reads one [mcp_servers.NAME] table. Credentials taken from
// the environment become ${env:VAR}, which Target resolves.
func codexEntry(v any) (Server, error) {
	t, ok := v.(map[string]any)
	if !ok {
		return Server{}, errors.New("the entry is not a table")
	}
	var s Server
	var err error
	str := func(key string) string {
		x, ok := t[key]
		if !ok || err != nil {
			return ""
		}
		v, ok := x.(string)
		if !ok {
			err = fmt.Errorf("%q holds %s where a string belongs", key, tomlKind(x))
		}
		return v
	}
	strs := func(key string) []string {
		x, ok := t[key]
		if !ok || err != nil {
			return nil
		}
		l, ok := x.([]any)
		out := make([]string, 0, len(l))
		for _, e := range l {
			v, isStr := e.(string)
			ok = ok && isStr
			out = append(out, v)
		}
		if !ok {
			err = fmt.Errorf("%q holds %s where a list of strings belongs", key, tomlKind(x))
		}
		return out
	}
	table := func(key string) map[string]string {
		x, ok := t[key]
		if !ok || err != nil {
			return nil
		}
		m, ok := x.(map[string]any)
		out := make(map[string]string, len(m))
		for k, e := range m {
			v, isStr := e.(string)
			ok = ok && isStr
			out[k] = v
		}
		if !ok {
			err = fmt.Errorf("%q holds %s where a table of strings belongs", key, tomlKind(x))
		}
		return out
	}
	s.Command, s.Args, s.Env, s.Dir = str("command"), strs("args"), table("env"), str("cwd")
	s.URL = str("url")
	headers := table("http_headers")
	for k, name := range table("env_http_headers") {
		if headers == nil {
			headers = map[string]string{}
		}
		headers[k] = "${env:" + name + "}"
	}
	if name := str("bearer_token_env_var"); name != "" {
		if headers == nil {
			headers = map[string]string{}
		}
		headers["Authorization"] = "Bearer ${env:" + name + "}"
	}
	s.Headers = headers
	if x, ok := t["enabled"]; ok && err == nil {
		on, isBool := x.(bool)
		if !isBool {
			err = fmt.Errorf(`"enabled" holds %s where true or false belongs`, tomlKind(x))
		}
		s.Disabled = !on
	}
	if err != nil {
		return Server{}, fmt.Errorf("cannot read the entry: %w", err)
	}
	switch {
	case s.Command != "" && s.URL != "":
		return s, errors.New(`it has both "command" and "url": Codex CLI takes one`)
	case s.Command != "":
		s.Kind = "stdio"
	case s.URL != "":
		s.Kind = "http" // Codex CLI speaks Streamable HTTP
	default:
		return s, errors.New(`it has neither "command" nor "url"`)
	}
	return s, nil
}

func tomlKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("a %T", v)
}

// findTOMLEntry finds the table at path ([mcp_servers.NAME]) in a TOML
// file's text for wrap: the entry runs from its header to the end of its
// last key.
func findTOMLEntry(src []byte, path []string) (*entryText, error) {
	// Two reads on purpose: the unstable parser gives byte offsets but
	// accepts a key defined twice, which Unmarshal refuses; an edit must
	// not go into a file Codex itself would not read. (Small files, and
	// only wrap and servers pay.)
	var doc map[string]any
	if err := toml.Unmarshal(src, &doc); err != nil {
		return nil, tomlError(err)
	}
	var p unstable.Parser
	p.Reset(src)
	var e *entryText
	in := false
	for p.NextExpression() {
		n := p.Expression()
		switch n.Kind {
		case unstable.Table, unstable.ArrayTable:
			it := n.Key()
			parts := keyParts(it)
			in = n.Kind == unstable.Table && slices.Equal(parts, path) && e == nil
			if in {
				first := n.Key()
				first.Next()
				at := int(first.Node().Raw.Offset)
				for at > 0 && src[at] != '[' {
					at--
				}
				e = &entryText{span: span{at, at}, layout: src}
				e.end = lineEnd(src, at)
			}
		case unstable.KeyValue:
			if !in {
				continue
			}
			kv := span{int(n.Raw.Offset), int(n.Raw.Offset + n.Raw.Length)}
			e.end = kv.end
			key := keyParts(n.Key())
			if len(key) != 1 {
				continue
			}
			v := n.Value()
			switch key[0] {
			case "command":
				if v.Kind != unstable.String {
					e.decodeErr = errors.New(`its "command" is not a string`)
					continue
				}
				e.command = string(v.Data)
				e.cmd = &span{int(v.Raw.Offset), int(v.Raw.Offset + v.Raw.Length)}
				e.addArgs = func(list string) edit {
					at := lineEnd(src, kv.end)
					return edit{at, at, lineBreak(src, kv.start) + "args = [" + list + "]"}
				}
			case "args":
				if v.Kind != unstable.Array {
					e.argsErr = errors.New(`its "args" is not an array`)
					e.decodeErr = e.argsErr
					continue
				}
				open := kv.start
				for open < kv.end && src[open] != '=' {
					open++
				}
				for open < kv.end && src[open] != '[' {
					open++
				}
				e.argsAt = &span{open, kv.end}
				e.args = []string{}
				for it := v.Children(); it.Next(); {
					el := it.Node()
					if el.Kind != unstable.String {
						e.argsErr = errors.New(`its "args" holds something other than strings`)
						e.decodeErr = e.argsErr
						break
					}
					e.args = append(e.args, string(el.Data))
					e.elems = append(e.elems, span{int(el.Raw.Offset), int(el.Raw.Offset + el.Raw.Length)})
				}
			}
		}
	}
	if err := p.Error(); err != nil {
		return nil, err
	}
	if e != nil && e.cmd == nil && e.decodeErr == nil {
		e.decodeErr = errors.New(`it has no "command"`)
	}
	return e, nil
}

// lineEnd is where the line holding offset at ends: before its newline
// (and a carriage return before it), or at the end of the text.
func lineEnd(src []byte, at int) int {
	i := at
	for i < len(src) && src[i] != '\n' {
		i++
	}
	if i > at && src[i-1] == '\r' {
		i--
	}
	return i
}
