package conformance

import (
	"encoding/json"
	"testing"
)

func TestConformanceElicitDefaults(t *testing.T) {
	params := json.RawMessage(`{"message":"m","requestedSchema":{"type":"object","properties":{
		"name":{"type":"string","default":"John Doe"},"age":{"type":"integer","default":30},
		"score":{"type":"number","default":95.5},"status":{"type":"string","enum":["a","b"],"default":"b"},
		"verified":{"type":"boolean","default":true},"nick":{"type":"string"},
		"level":{"type":"string","enum":["x","y"]}},"required":["level"]}}`)
	res, err := elicitDefaults(params)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"action":"accept","content":{"age":30,"level":"x","name":"John Doe","score":95.5,"status":"b","verified":true}}`
	if string(res) != want {
		t.Fatalf("elicitDefaults:\n got %s\nwant %s", res, want)
	}
	res, _ = elicitDefaults(json.RawMessage(`{"mode":"url","url":"https://example.com","message":"m"}`))
	if string(res) != `{"action":"decline"}` {
		t.Fatalf("URL-mode elicitation: got %s, want a decline", res)
	}
}

func TestConformanceArguments(t *testing.T) {
	got := confArguments(json.RawMessage(`{"type":"object","properties":{"region":{"type":"string"},
		"n":{"type":["null","integer"]},"opt":{"type":"string"},"flag":{"type":"boolean","default":false}},
		"required":["region","n","flag"]}`))
	if want := `{"flag":false,"n":1,"region":"mcpscope"}`; string(got) != want {
		t.Fatalf("confArguments: got %s, want %s", got, want)
	}
}

// Arguments keep to the formats and bounds the schema states, read with
// the same schema library as the inspector's forms.
func TestConformanceArgumentsFormats(t *testing.T) {
	got := confArguments(json.RawMessage(`{"type":"object","properties":{"to":{"type":"string","format":"email"},
		"at":{"type":"string","format":"date-time"},"code":{"type":"string","minLength":10},"n":{"type":"integer","minimum":5}},
		"required":["to","at","code","n","unlisted"]}`))
	if want := `{"at":"2026-07-28T00:00:00Z","code":"mcpscopexx","n":5,"to":"mcpscope@example.com","unlisted":"mcpscope"}`; string(got) != want {
		t.Fatalf("confArguments: got %s, want %s", got, want)
	}
}
