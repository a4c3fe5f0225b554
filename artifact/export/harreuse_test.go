package export_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcpscope/transport"
)

// TestHARReusesNothingStale: what the HAR writer reuses from one exchange
// to the next (body buffers, the last header list, the last query string)
// never carries over: each entry has its own headers, query and body, a
// body past the in-memory limit included, with or without a filter (the
// frames bare or decoded).
func TestHARReusesNothingStale(t *testing.T) {
	j := newHTTPJournal()
	add := j.add
	big := strings.Repeat("é\x01\"", 400000) // over a MiB escaped: spooled to a file
	type ex struct{ query, xa, body string }
	exs := []ex{{"a=1", "1", big}, {"a=2", "2", "second"}, {"a=2", "1", "third"}, {"b=%E2%80%AE", "1", "\xff bad"}, {"a=1", "2", "x"}}
	for i, x := range exs {
		stream := "post:" + string(rune('a'+i))
		m := transport.Meta{HTTPMethod: "POST", URL: "http://127.0.0.1:1/mcp?" + x.query, Stream: stream,
			Headers: map[string]string{"Content-Type": "application/json", "X-A": x.xa}}
		add(transport.Frame{Dir: transport.Out, Kind: transport.Message, Meta: m,
			Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)})
		in := transport.Meta{HTTPMethod: "POST", URL: m.URL, Stream: stream, Status: 200, Headers: map[string]string{"Content-Type": "application/json"}}
		add(transport.Frame{Dir: transport.In, Kind: transport.Message, Meta: in, Data: []byte(x.body)})
	}
	path := filepath.Join(t.TempDir(), "reuse.jsonl")
	if err := os.WriteFile(path, j.b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, expr := range []string{"", "~m tools/list"} {
		var doc struct {
			Log struct {
				Entries []struct {
					Request struct {
						Headers     []struct{ Name, Value string } `json:"headers"`
						QueryString []struct{ Name, Value string } `json:"queryString"`
					} `json:"request"`
					Response struct {
						Content struct {
							Size int    `json:"size"`
							Text string `json:"text"`
						} `json:"content"`
					} `json:"response"`
				} `json:"entries"`
			} `json:"log"`
		}
		if err := json.Unmarshal(exportOf(t, path, "har", expr), &doc); err != nil {
			t.Fatalf("filter %q: not JSON: %v", expr, err)
		}
		if len(doc.Log.Entries) != len(exs) {
			t.Fatalf("filter %q: %d entries, want %d", expr, len(doc.Log.Entries), len(exs))
		}
		for i, x := range exs {
			e := doc.Log.Entries[i]
			if h := e.Request.Headers; len(h) != 2 || h[1].Name != "X-A" || h[1].Value != x.xa {
				t.Errorf("filter %q, entry %d: headers %v, want X-A %s", expr, i, h, x.xa)
			}
			name, value, _ := strings.Cut(x.query, "=")
			if name == "b" {
				value = "\u202e"
			}
			if q := e.Request.QueryString; len(q) != 1 || q[0].Name != name || q[0].Value != value {
				t.Errorf("filter %q, entry %d: query %v, want %s=%q", expr, i, q, name, value)
			}
			want := strings.ToValidUTF8(x.body, "\ufffd")
			if c := e.Response.Content; c.Text != want || c.Size != len(x.body) {
				t.Errorf("filter %q, entry %d: body of %d bytes (size %d), want %d bytes", expr, i, len(c.Text), c.Size, len(x.body))
			}
		}
	}
}
