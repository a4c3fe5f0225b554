package diff_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/artifact/diff"
	"mcpscope/connect"
	"mcpscope/internal/demo"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/testkit/peers"
	"mcpscope/testkit/recordtest"
	"mcpscope/testkit/testservers"
)

func TestMain(m *testing.M) { recordtest.Main(m) }

func snap(t *testing.T, tools ...string) *diff.Snapshot {
	t.Helper()
	s := &diff.Snapshot{Source: "t", Server: protocol.Implementation{Name: "s", Version: "1"}, ProtocolVersion: "2025-11-25",
		Capabilities: json.RawMessage(`{"tools":{}}`), Tools: []json.RawMessage{}, Resources: []json.RawMessage{},
		ResourceTemplates: []json.RawMessage{}, Prompts: []json.RawMessage{}}
	for _, tl := range tools {
		s.Tools = append(s.Tools, json.RawMessage(tl))
	}
	return s
}

// TestCompare: what the structural diff reports, and what it calls breaking.
func TestCompare(t *testing.T) {
	echo := `{"name":"echo","description":"Echoes","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}}`
	cases := []struct {
		name     string
		a, b     string
		want     []string // "op path" of the fields, in order
		breaking bool
	}{
		{"same, keys in another order", echo,
			`{"inputSchema":{"required":["message"],"properties":{"message":{"type":"string"}},"type":"object"},"description":"Echoes","name":"echo"}`,
			nil, false},
		{"description", echo, strings.Replace(echo, "Echoes", "Says back", 1), []string{"changed /description"}, false},
		{"new required argument", echo,
			`{"name":"echo","description":"Echoes","inputSchema":{"type":"object","properties":{"message":{"type":"string"},"n":{"type":"integer"}},"required":["message","n"]}}`,
			[]string{"added /inputSchema/properties/n", "added /inputSchema/required"}, true},
		{"new optional argument", echo,
			`{"name":"echo","description":"Echoes","inputSchema":{"type":"object","properties":{"message":{"type":"string"},"n":{"type":"integer"}},"required":["message"]}}`,
			[]string{"added /inputSchema/properties/n"}, false},
		{"type changed", echo, strings.Replace(echo, `"type":"string"`, `"type":"number"`, 1),
			[]string{"changed /inputSchema/properties/message/type"}, true},
		{"property gone", echo, `{"name":"echo","description":"Echoes","inputSchema":{"type":"object","properties":{},"required":[]}}`,
			[]string{"removed /inputSchema/properties/message", "removed /inputSchema/required"}, true},
		{"annotation", echo, strings.Replace(echo, `"name":"echo"`, `"name":"echo","annotations":{"destructiveHint":true}`, 1),
			[]string{"added /annotations"}, false},
		{"enum narrowed", `{"name":"echo","inputSchema":{"type":"object","properties":{"k":{"enum":["a","b","c"]}}}}`,
			`{"name":"echo","inputSchema":{"type":"object","properties":{"k":{"enum":["c","a"]}}}}`,
			[]string{"removed /inputSchema/properties/k/enum"}, true},
		{"numbers as written, compared as numbers", `{"name":"echo","inputSchema":{"maximum":10}}`, `{"name":"echo","inputSchema":{"maximum":10.0}}`, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := diff.Compare(snap(t, c.a), snap(t, c.b))
			var got []string
			for _, ch := range r.Changes {
				for _, f := range ch.Fields {
					got = append(got, f.Op+" "+f.Path)
				}
			}
			if strings.Join(got, "; ") != strings.Join(c.want, "; ") || r.Drift() != (len(c.want) > 0) ||
				(r.Breaking() > 0) != c.breaking {
				t.Fatalf("got %q (breaking %d), want %q (breaking %v)", got, r.Breaking(), c.want, c.breaking)
			}
		})
	}
	r := diff.Compare(snap(t, echo, `{"name":"gone"}`), snap(t, echo, `{"name":"new","title":"New tool"}`))
	if len(r.Changes) != 2 || r.Changes[0].Op != "removed" || r.Changes[0].Name != "gone" || !r.Changes[0].Breaking ||
		r.Changes[1].Op != "added" || r.Changes[1].Title != "New tool" {
		t.Fatalf("added and removed: %+v", r.Changes)
	}
	// Prompt arguments are matched by name, not by position.
	pa := snap(t)
	pa.Prompts = []json.RawMessage{json.RawMessage(`{"name":"p","arguments":[{"name":"a"},{"name":"b","required":false}]}`)}
	pb := snap(t)
	pb.Prompts = []json.RawMessage{json.RawMessage(`{"name":"p","arguments":[{"name":"b","required":true},{"name":"a"}]}`)}
	r = diff.Compare(pa, pb)
	if len(r.Changes) != 1 || len(r.Changes[0].Fields) != 1 || r.Changes[0].Fields[0].Path != "/arguments/name=b/required" || !r.Changes[0].Breaking {
		t.Fatalf("prompt arguments: %+v", r.Changes)
	}
	// A list one side never recorded is not compared (and not "all removed").
	na := snap(t, echo)
	na.Prompts = nil
	r = diff.Compare(na, snap(t, echo))
	if r.Drift() || len(r.Notes) != 1 {
		t.Fatalf("unrecorded prompts: %+v", r)
	}
}

// TestTightenedInputs: an input schema keyword that rejects an argument
// the schema accepted before is breaking, at the top and in nested
// properties; the same keyword loosened is not.
func TestTightenedInputs(t *testing.T) {
	tool := func(prop string) string {
		return `{"name":"t","inputSchema":{"type":"object","properties":{"p":` + prop +
			`,"o":{"type":"object","properties":{"deep":` + prop + `}}}}}`
	}
	cases := []struct {
		name     string
		a, b     string // the property's schema before and after
		breaking bool
	}{
		{"minItems added", `{"type":"array"}`, `{"type":"array","minItems":1}`, true},
		{"minItems raised", `{"type":"array","minItems":1}`, `{"type":"array","minItems":2}`, true},
		{"minItems lowered", `{"type":"array","minItems":2}`, `{"type":"array","minItems":1}`, false},
		{"minItems dropped", `{"type":"array","minItems":2}`, `{"type":"array"}`, false},
		{"maxItems added", `{"type":"array"}`, `{"type":"array","maxItems":3}`, true},
		{"minLength added", `{"type":"string"}`, `{"type":"string","minLength":1}`, true},
		{"minLength lowered", `{"type":"string","minLength":3}`, `{"type":"string","minLength":1}`, false},
		{"maxLength added", `{"type":"string"}`, `{"type":"string","maxLength":8}`, true},
		{"maxLength lowered", `{"type":"string","maxLength":8}`, `{"type":"string","maxLength":4}`, true},
		{"maxLength raised", `{"type":"string","maxLength":4}`, `{"type":"string","maxLength":8}`, false},
		{"minimum added", `{"type":"number"}`, `{"type":"number","minimum":0}`, true},
		{"minimum raised", `{"type":"number","minimum":0}`, `{"type":"number","minimum":0.5}`, true},
		{"minimum lowered", `{"type":"number","minimum":1}`, `{"type":"number","minimum":-1}`, false},
		{"maximum added", `{"type":"number"}`, `{"type":"number","maximum":10}`, true},
		{"maximum lowered", `{"type":"number","maximum":10}`, `{"type":"number","maximum":9}`, true},
		{"maximum raised", `{"type":"number","maximum":10}`, `{"type":"number","maximum":11}`, false},
		{"maximum dropped", `{"type":"number","maximum":10}`, `{"type":"number"}`, false},
		{"pattern added", `{"type":"string"}`, `{"type":"string","pattern":"^a"}`, true},
		{"pattern changed", `{"type":"string","pattern":"^a"}`, `{"type":"string","pattern":"^b"}`, true},
		{"pattern dropped", `{"type":"string","pattern":"^a"}`, `{"type":"string"}`, false},
		{"format added", `{"type":"string"}`, `{"type":"string","format":"email"}`, true},
		{"format changed", `{"type":"string","format":"email"}`, `{"type":"string","format":"uri"}`, true},
		{"format dropped", `{"type":"string","format":"email"}`, `{"type":"string"}`, false},
		{"optional property named format", `{"type":"object","properties":{}}`, `{"type":"object","properties":{"format":{}}}`, false},
		{"const added", `{"type":"string"}`, `{"type":"string","const":"x"}`, true},
		{"const dropped", `{"type":"string","const":"x"}`, `{"type":"string"}`, false},
		{"enum added", `{"type":"string"}`, `{"type":"string","enum":["a","b"]}`, true},
		{"enum narrowed", `{"enum":["a","b"]}`, `{"enum":["a"]}`, true},
		{"enum widened", `{"enum":["a"]}`, `{"enum":["a","b"]}`, false},
		{"enum dropped", `{"enum":["a"]}`, `{}`, false},
		{"additionalProperties false", `{"type":"object"}`, `{"type":"object","additionalProperties":false}`, true},
		{"additionalProperties true", `{"type":"object","additionalProperties":false}`, `{"type":"object","additionalProperties":true}`, false},
		{"required added", `{"type":"object","properties":{"x":{}}}`, `{"type":"object","properties":{"x":{}},"required":["x"]}`, true},
		{"required dropped", `{"type":"object","properties":{"x":{}},"required":["x"]}`, `{"type":"object","properties":{"x":{}}}`, false},
		{"optional property named like a keyword", `{"type":"object","properties":{}}`, `{"type":"object","properties":{"required":{},"minimum":{}}}`, false},
		{"description", `{"type":"string"}`, `{"type":"string","description":"a name"}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := diff.Compare(snap(t, tool(c.a)), snap(t, tool(c.b)))
			if len(r.Changes) != 1 {
				t.Fatalf("changes: %+v", r.Changes)
			}
			var top, deep []bool
			for _, f := range r.Changes[0].Fields {
				if strings.HasPrefix(f.Path, "/inputSchema/properties/o/") {
					deep = append(deep, f.Breaking)
				} else {
					top = append(top, f.Breaking)
				}
			}
			if len(top) == 0 || len(top) != len(deep) {
				t.Fatalf("fields: %+v", r.Changes[0].Fields)
			}
			for i := range top {
				if top[i] != c.breaking || deep[i] != c.breaking {
					t.Fatalf("breaking: top %v, nested %v, want %v (%+v)", top, deep, c.breaking, r.Changes[0].Fields)
				}
			}
			if r.Changes[0].Breaking != c.breaking {
				t.Fatalf("the tool's change is breaking=%v, want %v", r.Changes[0].Breaking, c.breaking)
			}
		})
	}
}

// TestRiskierHints: a tool whose hints now say it writes or destroys
// (readOnlyHint true → false, destructiveHint false → true, read with the
// spec's defaults) is marked riskier, apart from breaking, in the report,
// its JSON and its text; hints that say it is safer are not.
func TestRiskierHints(t *testing.T) {
	tool := func(annotations string) string {
		s := `{"name":"t","inputSchema":{"type":"object"}`
		if annotations != "" {
			s += `,"annotations":` + annotations
		}
		return s + "}"
	}
	cases := []struct {
		name    string
		a, b    string // the annotations before and after ("" none)
		riskier bool
		field   string // the field marked
	}{
		{"destructive false → true", `{"destructiveHint":false}`, `{"destructiveHint":true}`, true, "/annotations/destructiveHint"},
		{"destructive false dropped (defaults to true)", `{"destructiveHint":false,"title":"x"}`, `{"title":"x"}`, true, "/annotations/destructiveHint"},
		{"annotations dropped", `{"destructiveHint":false}`, "", true, "/annotations"},
		{"read-only true → false", `{"readOnlyHint":true}`, `{"readOnlyHint":false}`, true, "/annotations/readOnlyHint"},
		{"read-only true → false, still not destructive", `{"readOnlyHint":true}`, `{"readOnlyHint":false,"destructiveHint":false}`, true, "/annotations/readOnlyHint"},
		{"destructive true → false", `{"destructiveHint":true}`, `{"destructiveHint":false}`, false, ""},
		{"read-only false → true", `{"readOnlyHint":false}`, `{"readOnlyHint":true}`, false, ""},
		{"destructive false added", "", `{"destructiveHint":false}`, false, ""},
		{"read-only tool, destructive hint flipped (ignored)", `{"readOnlyHint":true,"destructiveHint":false}`, `{"readOnlyHint":true,"destructiveHint":true}`, false, ""},
		{"title only", `{"title":"a"}`, `{"title":"b"}`, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := diff.Compare(snap(t, tool(c.a)), snap(t, tool(c.b)))
			if len(r.Changes) != 1 {
				t.Fatalf("changes: %+v", r.Changes)
			}
			ch := r.Changes[0]
			if ch.Riskier != c.riskier || (r.Riskier() == 1) != c.riskier || ch.Breaking {
				t.Fatalf("riskier %v (count %d), breaking %v; want riskier %v, not breaking: %+v", ch.Riskier, r.Riskier(), ch.Breaking, c.riskier, ch)
			}
			for _, f := range ch.Fields {
				if f.Riskier != (f.Path == c.field) {
					t.Errorf("field %s riskier=%v, want only %q marked", f.Path, f.Riskier, c.field)
				}
			}
			js, _ := json.Marshal(r)
			var human bytes.Buffer
			r.Human(&human, diff.Styles{})
			lines := strings.Join(ch.Lines(), "\n")
			for what, text := range map[string]string{"JSON": string(js), "text": human.String(), "lines": lines} {
				mark := map[string]string{"JSON": `"riskier":true`, "text": "(riskier)", "lines": "(riskier)"}[what]
				if strings.Contains(text, mark) != c.riskier {
					t.Errorf("the %s says %q: %v, want %v\n%s", what, mark, !c.riskier, c.riskier, text)
				}
			}
			if c.riskier && !strings.Contains(human.String(), "1 riskier") {
				t.Errorf("the text's summary lacks the count:\n%s", human.String())
			}
		})
	}
}

// TestJournalMatchesLive: the catalog read back from a journal (the last
// listing, every page of it) is the catalog listed live from the same
// server. The server pages its lists two items at a time.
func TestJournalMatchesLive(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	d := demo.New(demo.Options{})
	defer d.Close()
	paged := mcp.NewServer(&mcp.Implementation{Name: "paged", Version: "1"}, &mcp.ServerOptions{PageSize: 2})
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		mcp.AddTool(paged, &mcp.Tool{Name: name, Description: "tool " + name, InputSchema: &jsonschema.Schema{Type: "object"}},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{}, nil, nil
			})
	}
	for name, srv := range map[string]*mcp.Server{"demo": d.Server, "paged": paged} {
		t.Run(name, func(t *testing.T) {
			url := testservers.StartHTTPServer(t, testservers.HTTPOpts{Server: srv}).URL
			path := recordtest.Record(t, name, connect.Spec{URL: url}, func(ctx context.Context, t testing.TB, s *session.Session) {
				recordtest.Lists(ctx, t, s)
				recordtest.Lists(ctx, t, s) // the last listing is the one read back
			})
			fromJournal, err := diff.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			live := liveSnapshot(t, connect.Spec{URL: url})
			if r := diff.Compare(fromJournal, live); r.Drift() {
				var b bytes.Buffer
				r.Human(&b, diff.Styles{})
				t.Fatalf("the journal's catalog differs from the live one:\n%s", b.String())
			}
			if name == "paged" && len(fromJournal.Tools) != 5 {
				t.Fatalf("%d tools read from a journal of paged lists, want 5", len(fromJournal.Tools))
			}
			if name == "demo" && (len(fromJournal.Tools) < 9 || len(fromJournal.Resources) == 0 || len(fromJournal.Prompts) == 0) {
				t.Fatalf("demo: %s", fromJournal.Counts())
			}
		})
	}
}

func liveSnapshot(t *testing.T, sp connect.Spec) *diff.Snapshot {
	t.Helper()
	sp.NoJournal, sp.NoState, sp.Grace = true, true, 500*time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := connect.Connect(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return diff.FromSession(ctx, s, "live")
}

// TestTwoRecordings: a server whose catalog changed between two
// recordings shows the change, and a snapshot written and read back is
// the same catalog.
func TestTwoRecordings(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	record := func(name string, change bool) string {
		d := demo.New(demo.Options{})
		t.Cleanup(d.Close)
		if change {
			mcp.AddTool(d.Server, &mcp.Tool{Name: "echo", Description: "Echoes, louder.",
				InputSchema: &jsonschema.Schema{Type: "object", Required: []string{"message", "volume"},
					Properties: map[string]*jsonschema.Schema{"message": {Type: "string"}, "volume": {Type: "integer"}}}},
				func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					return &mcp.CallToolResult{}, nil, nil
				})
			d.Server.RemoveTools("fail")
		}
		url := testservers.StartHTTPServer(t, testservers.HTTPOpts{Server: d.Server}).URL
		return recordtest.Record(t, name, connect.Spec{URL: url}, func(ctx context.Context, t testing.TB, s *session.Session) { recordtest.Lists(ctx, t, s) })
	}
	before, after := record("before", false), record("after", true)
	a, _ := diff.Load(before)
	b, _ := diff.Load(after)
	r := diff.Compare(a, b)
	var kinds []string
	for _, c := range r.Changes {
		kinds = append(kinds, c.Op+" "+c.Kind+" "+c.Name)
	}
	if strings.Join(kinds, ", ") != "changed tool echo, removed tool fail" || r.Breaking() != 2 {
		t.Fatalf("changes: %v (breaking %d)", kinds, r.Breaking())
	}
	var human bytes.Buffer
	r.Human(&human, diff.Styles{})
	for _, want := range []string{"~ tool echo  (breaking)", "+ /inputSchema/required \"volume\"  (breaking)", "- tool fail", "drift: 2 change(s), 2 breaking"} {
		if !strings.Contains(human.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, human.String())
		}
	}
	file := filepath.Join(t.TempDir(), "catalog.json")
	f, _ := os.Create(file)
	a.Write(f)
	f.Close()
	back, err := diff.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if r := diff.Compare(back, a); r.Drift() {
		t.Fatalf("a snapshot read back differs: %+v", r.Changes)
	}
}

// TestEverythingVersusDemo: server-everything 2026.8.31 (npm peer) and
// the demo differ the way their catalogs say.
func TestEverythingVersusDemo(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	cmd, args := peers.EverythingStdio(t)
	everything := liveSnapshot(t, connect.Spec{Command: append([]string{cmd}, args...)})
	d := demo.New(demo.Options{})
	defer d.Close()
	dm := liveSnapshot(t, connect.Spec{URL: testservers.StartHTTPServer(t, testservers.HTTPOpts{Server: d.Server}).URL})
	r := diff.Compare(everything, dm)
	got := map[string]string{}
	for _, c := range r.Changes {
		got[c.Kind+" "+c.Name] = c.Op
	}
	for k, op := range map[string]string{"tool get-sum": "removed", "tool slow": "added", "tool echo": "changed",
		"prompt simple-prompt": "removed", "prompt greeting": "added", "server ": "changed"} {
		if got[k] != op {
			t.Errorf("%s: %q, want %q", k, got[k], op)
		}
	}
	if r.A.Server.Name != "mcp-servers/everything" || r.B.Server.Name != "mcpscope-demo" {
		t.Errorf("sides: %+v %+v", r.A.Server, r.B.Server)
	}
}
