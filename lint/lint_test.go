package lint

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A case of testdata: lists as a server answered them, and the findings
// lint must make of them, exactly.
type crafted struct {
	ProtocolVersion string                     `json:"protocolVersion"`
	Tools           json.RawMessage            `json:"tools"`
	Again           json.RawMessage            `json:"again"`
	Templates       json.RawMessage            `json:"templates"`
	Prompts         json.RawMessage            `json:"prompts"`
	Pages           map[string]json.RawMessage `json:"pages"` // tools/list pages by cursor
	Results         []struct {
		Tool              string          `json:"tool"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	} `json:"results"`
	Want []Finding `json:"want"`
}

func items(t *testing.T, page json.RawMessage, field string) []json.RawMessage {
	t.Helper()
	if page == nil {
		return nil
	}
	l, problems, err := Follow(func(string) (json.RawMessage, error) { return page, nil }, field, "name")
	if err != nil || len(problems) > 0 {
		t.Fatalf("reading %s: %v %v", field, err, problems)
	}
	return l
}

// load reads testdata/NAME.json into a catalog, the pages through
// Follow as a live server's would go.
func load(t *testing.T, name string) (*Catalog, []Finding) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var c crafted
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	cat := &Catalog{ProtocolVersion: c.ProtocolVersion, Tools: items(t, c.Tools, "tools"), ToolsAgain: items(t, c.Again, "tools"),
		Templates: items(t, c.Templates, "resourceTemplates"), Prompts: items(t, c.Prompts, "prompts")}
	if c.Pages != nil {
		var asked []string
		tools, problems, err := Follow(func(cursor string) (json.RawMessage, error) {
			asked = append(asked, cursor)
			p, ok := c.Pages[cursor]
			if !ok {
				return nil, fmt.Errorf("no page %q", cursor)
			}
			return p, nil
		}, "tools", "name")
		if err != nil {
			t.Fatal(err)
		}
		if len(asked) > len(c.Pages)+1 {
			t.Fatalf("asked for %d pages of %d: %q", len(asked), len(c.Pages), asked)
		}
		cat.Tools = tools
		for _, p := range problems {
			cat.Paging = append(cat.Paging, PagingProblem{Method: "tools/list", Detail: p})
		}
	}
	for _, r := range c.Results {
		cat.Results = append(cat.Results, Result{Tool: r.Tool, Structured: r.StructuredContent, IsError: r.IsError})
	}
	return cat, c.Want
}

func key(f Finding) string {
	return fmt.Sprintf("%s %s %s %q %s %s", f.Rule, f.Severity, f.Kind, f.Name, f.Pointer, strings.Join(f.Hosts, ","))
}

// check runs lint over testdata/NAME.json and compares the findings with
// the ones it wants, exactly: a rule taken out, or firing where it should
// not, fails.
func check(t *testing.T, name string) *Report {
	t.Helper()
	cat, want := load(t, name)
	r := Check(cat, nil)
	var got, exp []string
	for _, f := range r.Findings {
		got = append(got, key(f))
		if f.Reason == "" {
			t.Errorf("%s: no reason", key(f))
		}
	}
	for _, f := range want {
		exp = append(exp, key(f))
	}
	slices.Sort(got)
	slices.Sort(exp)
	if !slices.Equal(got, exp) {
		t.Errorf("%s: findings\n got  %s\n want %s\n(all: %+v)", name, strings.Join(got, "\n      "), strings.Join(exp, "\n      "), r.Findings)
	}
	return r
}

// TestEveryRuleHasACase: each rule has its crafted answer in testdata,
// and each case there is run by TestRules.
func TestEveryRuleHasACase(t *testing.T) {
	for _, r := range Rules {
		if _, err := os.Stat(filepath.Join("testdata", r.ID+".json")); err != nil {
			t.Errorf("rule %s has no testdata/%s.json", r.ID, r.ID)
		}
		if r.Reason == "" || r.Explain == "" || r.Source == "" || strings.Contains(r.Explain, "http") {
			t.Errorf("rule %s: a reason, a link-free explanation and a source, each", r.ID)
		}
		if !r.Portable && r.Severity == "" {
			t.Errorf("rule %s: no severity", r.ID)
		}
	}
}

func TestRules(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json")
	if len(files) < len(Rules) {
		t.Fatalf("%d cases for %d rules", len(files), len(Rules))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) { check(t, name) })
	}
}

// TestProfiles: one profile asked for, only its hosts and its rules.
func TestProfiles(t *testing.T) {
	cat, _ := load(t, "format")
	ps, err := SelectProfiles([]string{"claude-code"})
	if err != nil {
		t.Fatal(err)
	}
	if r := Check(cat, ps); len(r.Findings) != 0 {
		t.Errorf("claude-code takes any format, got %+v", r.Findings)
	}
	ps, _ = SelectProfiles([]string{"gemini"})
	r := Check(cat, ps)
	if len(r.Findings) != 2 || r.Errors() != 0 || !slices.Equal(r.Findings[0].Hosts, []string{"gemini"}) {
		t.Errorf("gemini: two warnings for uri and date, got %+v", r.Findings)
	}
	if _, err := SelectProfiles([]string{"claude"}); err == nil || !strings.Contains(err.Error(), "claude-code") {
		t.Errorf("an unknown profile names the known ones: %v", err)
	}
}

// TestFollowBounded: a server that always sends a fresh nextCursor is
// followed MaxPages pages, no more.
func TestFollowBounded(t *testing.T) {
	n := 0
	_, problems, err := Follow(func(string) (json.RawMessage, error) {
		n++
		return json.RawMessage(fmt.Sprintf(`{"tools":[],"nextCursor":"c%d"}`, n)), nil
	}, "tools", "name")
	if err != nil || n != MaxPages || len(problems) != 1 {
		t.Errorf("pages %d, problems %q, err %v", n, problems, err)
	}
}

// TestToolNameByHand: the hand-written check says what the spec's pattern
// says, on the edges of its set and its length.
func TestToolNameByHand(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	for _, n := range []string{"", "a", "get_weather", "a.b-c_D9", "a b", "é", "a\n", "\xff", "/", ":", "@", "[", "`", "{",
		strings.Repeat("x", 128), strings.Repeat("x", 129), strings.Repeat("é", 64)} {
		if got, want := toolName(n), re.MatchString(n); got != want {
			t.Errorf("toolName(%q) = %t, the pattern says %t", n, got, want)
		}
	}
	for c := 0; c < 256; c++ {
		if got, want := toolNameByte(byte(c)), re.MatchString(string(rune(c))) && c < 128; got != want {
			t.Errorf("toolNameByte(%#x) = %t, the pattern says %t", c, got, want)
		}
	}
}
