package protocol

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// headerSafe reports whether v can travel as a plain header value (SEP-2243).
func headerSafe(v string) bool {
	if v == "" {
		return true
	}
	if v[0] == ' ' || v[0] == '\t' || v[len(v)-1] == ' ' || v[len(v)-1] == '\t' {
		return false
	}
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c != '\t' && (c < 0x20 || c > 0x7e) {
			return false
		}
	}
	return true
}

// HeaderValue encodes v for Mcp-Name / Mcp-Param-*: as is when safe, else
// the =?base64?…?= sentinel form.
func HeaderValue(v string) string {
	if headerSafe(v) {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// ToolHeader is one x-mcp-header annotation of a tool's inputSchema.
type ToolHeader struct {
	Path []string // properties chain from the schema root
	Name string   // the header is Mcp-Param-<Name>
}

// ToolHeaders reads the x-mcp-header annotations of one inputSchema. An
// invalid annotation makes the tool invalid (the spec says drop it).
func ToolHeaders(schema json.RawMessage) ([]ToolHeader, error) {
	var out []ToolHeader
	seen := map[string]bool{}
	var walk func(raw json.RawMessage, path []string, reachable bool) error
	walk = func(raw json.RawMessage, path []string, reachable bool) error {
		var node map[string]json.RawMessage
		if json.Unmarshal(raw, &node) != nil {
			return nil
		}
		if h, ok := node["x-mcp-header"]; ok {
			var name string
			if json.Unmarshal(h, &name) != nil || name == "" || !isToken(name) {
				return fmt.Errorf("x-mcp-header %s is not a header name token", h)
			}
			if !reachable || len(path) == 0 {
				return fmt.Errorf("x-mcp-header %q is not statically reachable through properties", name)
			}
			var typ string
			_ = json.Unmarshal(node["type"], &typ)
			if typ != "string" && typ != "integer" && typ != "boolean" {
				return fmt.Errorf("x-mcp-header %q is on a %q property (only string, integer, boolean)", name, typ)
			}
			if seen[strings.ToLower(name)] {
				return fmt.Errorf("x-mcp-header %q appears twice", name)
			}
			seen[strings.ToLower(name)] = true
			out = append(out, ToolHeader{Path: append([]string(nil), path...), Name: name})
		}
		for k, v := range node {
			switch k {
			case "properties":
				var props map[string]json.RawMessage
				if json.Unmarshal(v, &props) == nil {
					for name, sub := range props {
						if err := walk(sub, append(path, name), reachable); err != nil {
							return err
						}
					}
				}
			case "items", "oneOf", "anyOf", "allOf", "not", "if", "then", "else", "$defs", "definitions",
				"additionalProperties", "prefixItems", "patternProperties", "dependentSchemas":
				// Anything below here is not statically reachable; an
				// annotation found there invalidates the tool.
				var subs []json.RawMessage
				if json.Unmarshal(v, &subs) != nil {
					subs = []json.RawMessage{v}
				}
				for _, sub := range subs {
					if err := walk(sub, path, false); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	if err := walk(schema, nil, true); err != nil {
		return nil, err
	}
	return out, nil
}

func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// LookupPath reads a primitive at a properties path as header text.
func LookupPath(raw json.RawMessage, path []string) (string, bool) {
	for _, k := range path {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return "", false
		}
		v, ok := m[k]
		if !ok {
			return "", false
		}
		raw = v
	}
	var x any
	if json.Unmarshal(raw, &x) != nil {
		return "", false
	}
	switch v := x.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		return strings.TrimSuffix(string(raw), ".0"), true
	}
	return "", false
}
