package lint

import (
	"embed"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// The dialects' meta-schemas, as github.com/google/jsonschema-go ships them
// (the JSON Schema project's own files): a schema is valid when it
// validates against its dialect's meta-schema, by that library.
//
//go:embed metaschema
var metaFS embed.FS

const (
	draft2020 = "https://json-schema.org/draft/2020-12/schema"
	draft7    = "http://json-schema.org/draft-07/schema#"
)

var (
	metaOnce sync.Once
	metas    map[string]*jsonschema.Resolved // by dialect URI
	metaErr  error
)

// metaFile maps a meta-schema URI to its embedded file.
func metaFile(u string) (string, bool) {
	if after, ok := strings.CutPrefix(u, "https://json-schema.org/draft/2020-12/"); ok {
		return "metaschema/draft2020-12/" + after + ".json", true
	}
	for _, p := range []string{"http://json-schema.org/draft-07/", "https://json-schema.org/draft-07/"} {
		if after, ok := strings.CutPrefix(strings.TrimSuffix(u, "#"), p); ok {
			return "metaschema/draft7/" + after + ".json", true
		}
	}
	return "", false
}

func loadMeta(u *url.URL) (*jsonschema.Schema, error) {
	name, ok := metaFile(u.String())
	if !ok {
		return nil, fmt.Errorf("no meta-schema %s", u)
	}
	b, err := metaFS.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("meta-schema %s: %w", name, err)
	}
	return &s, nil
}

func metaSchemas() (map[string]*jsonschema.Resolved, error) {
	metaOnce.Do(func() {
		metas = map[string]*jsonschema.Resolved{}
		for _, d := range []string{draft2020, draft7} {
			u, _ := url.Parse(d)
			s, err := loadMeta(u)
			if err != nil {
				metaErr = err
				return
			}
			r, err := s.Resolve(&jsonschema.ResolveOptions{BaseURI: strings.TrimSuffix(d, "#"), Loader: loadMeta})
			if err != nil {
				metaErr = fmt.Errorf("meta-schema %s: %w", d, err)
				return
			}
			metas[d] = r
		}
	})
	return metas, metaErr
}

// dialect is the meta-schema URI a schema's $schema names ("" when lint
// does not know it); no $schema is 2020-12, as MCP says.
func dialect(m map[string]any) (string, string) {
	s, ok := m["$schema"].(string)
	if !ok {
		return draft2020, ""
	}
	switch strings.TrimSuffix(s, "#") {
	case draft2020, strings.TrimSuffix(draft2020, "/schema") + "/schema#":
		return draft2020, s
	case "http://json-schema.org/draft-07/schema", "https://json-schema.org/draft-07/schema":
		return draft7, s
	}
	return "", s
}

// validSchema says what makes raw (decoded as m) not a valid schema of
// its dialect ("" when nothing does); known is false when $schema names a
// dialect lint cannot check (why then names it).
func validSchema(raw json.RawMessage, m map[string]any) (why string, known bool) {
	d, named := dialect(m)
	if d == "" {
		return fmt.Sprintf("$schema %q", named), false
	}
	metas, err := metaSchemas()
	if err != nil {
		return "the meta-schemas did not load: " + err.Error(), true
	}
	var inst any
	if err := json.Unmarshal(raw, &inst); err != nil {
		return err.Error(), true
	}
	if err := metas[d].Validate(inst); err != nil {
		return short(err), true
	}
	// The meta-schema passed: the library itself must be able to use it
	// (patterns compile, local references resolve).
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return short(err), true
	}
	if _, err := s.Resolve(&jsonschema.ResolveOptions{Loader: remote}); err != nil {
		return short(err), true
	}
	return "", true
}

// remote stands in for a schema a $ref names on another host: lint does
// not fetch it, and takes it as accepting anything.
func remote(*url.URL) (*jsonschema.Schema, error) { return &jsonschema.Schema{}, nil }

// conforms says how instance fails schema ("" when it keeps to it, or
// when the schema cannot be used: the validity rule says so).
func conforms(schema, instance json.RawMessage) string {
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return ""
	}
	rs, err := s.Resolve(&jsonschema.ResolveOptions{Loader: remote})
	if err != nil {
		return ""
	}
	var v any
	if err := json.Unmarshal(instance, &v); err != nil {
		return "structuredContent is not JSON"
	}
	if err := rs.Validate(v); err != nil {
		return short(err)
	}
	return ""
}

// short is the library's message on one line, without its package name.
func short(err error) string {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	msg = strings.ReplaceAll(msg, "jsonschema.Schema: ", "")
	msg = strings.ReplaceAll(msg, "jsonschema: ", "")
	if len(msg) > 300 {
		msg = msg[:297] + "..."
	}
	return msg
}
