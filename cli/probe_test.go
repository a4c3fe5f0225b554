package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"mcpscope/testkit/peers"
	"mcpscope/testkit/testservers"
)

// A 2025 server answers the era probe (server/discover) with an HTTP error
// whose JSON-RPC error has no id. That is the probe's answer: no warning,
// the probe call ends "legacy" (not lost, not matched by ~e), and the HAR
// export has one entry per HTTP request (the error status and its body
// are one exchange, labelled with the answer's own Content-Type).
func TestProbeRefusalIsTheProbesAnswer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		url   func(t *testing.T) string
		probe string // how the probe call ends
	}{
		// 400 with {"error":…,"id":null}: the refusal.
		{"server-everything", func(t *testing.T) string { return peers.StartEverythingHTTP(t, "streamableHttp") }, "legacy"},
		// The Go SDK answers server/discover: the same checks hold.
		{"go-sdk", func(t *testing.T) string { return testservers.StartHTTPServer(t, testservers.HTTPOpts{}).URL }, "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.url(t)
			state := t.TempDir()
			journal := filepath.Join(t.TempDir(), "probe.jsonl")
			code, out, errb := runIn(t, state, "tools", "--journal", journal, url)
			if code != exitOK {
				t.Fatalf("tools: exit %d\n%s\n%s", code, out, errb)
			}
			if strings.Contains(errb, "warning") {
				t.Errorf("the probe's refusal printed a warning:\n%s", errb)
			}
			code, out, errb = runIn(t, state, "journal", "--summary", journal)
			if code != exitOK || !strings.Contains(out, "server/discover") {
				t.Fatalf("journal: exit %d\n%s\n%s", code, out, errb)
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, "server/discover") && !strings.Contains(line, " "+tc.probe+" ") {
					t.Errorf("the probe call should end %s: %q", tc.probe, line)
				}
			}
			if _, out, _ = runIn(t, state, "journal", journal, "--filter", "~e"); strings.Contains(out, "server/discover") {
				t.Errorf("~e matched the probe's refusal:\n%s", out)
			}
			code, out, errb = runIn(t, state, "export", "--format", "har", journal)
			if code != exitOK {
				t.Fatalf("export: exit %d\n%s", code, errb)
			}
			var har struct {
				Log struct {
					Entries []struct {
						Request struct {
							Method   string `json:"method"`
							PostData *struct {
								Text string `json:"text"`
							} `json:"postData"`
						} `json:"request"`
						Response struct {
							Status  int `json:"status"`
							Content struct {
								MimeType string `json:"mimeType"`
								Text     string `json:"text"`
							} `json:"content"`
						} `json:"response"`
					} `json:"entries"`
				} `json:"log"`
			}
			if err := json.Unmarshal([]byte(out), &har); err != nil {
				t.Fatalf("HAR: %v", err)
			}
			probes := 0
			for _, e := range har.Log.Entries {
				if e.Request.Method == "POST" && e.Request.PostData == nil {
					t.Errorf("a POST entry with no request body (the error's body split off): %+v", e)
				}
				if e.Request.PostData == nil || !strings.Contains(e.Request.PostData.Text, `"server/discover"`) {
					continue
				}
				probes++
				if e.Response.Status >= 400 && (e.Response.Content.MimeType == "text/plain" || !strings.Contains(e.Response.Content.Text, `"error"`)) {
					t.Errorf("the probe's %d answer: %s %q, want its JSON body with its own Content-Type", e.Response.Status, e.Response.Content.MimeType, e.Response.Content.Text)
				}
			}
			if probes != 1 {
				t.Errorf("%d HAR entries for the probe, want 1", probes)
			}
		})
	}
}
