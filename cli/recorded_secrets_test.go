package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/artifact/diff"
	journalsum "mcpscope/artifact/journals"
	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/transport"
)

// secretCanaries are the secrets an older build left in a journal.
var secretCanaries = []string{"PW-CANARY-7d1", "KEY-CANARY-7d1", "TOK-CANARY-7d1"}

// oldJournal writes, into dir, a journal as builds before redaction wrote
// it: the target, each request's URL and its Authorization header as
// typed. It returns the journal's path and the target it recorded.
func oldJournal(t *testing.T, dir string) (path, target string) {
	t.Helper()
	url := "http://ada:" + secretCanaries[0] + "@127.0.0.1:9/mcp?api_key=" + secretCanaries[1] + "&x=1"
	target = "http: " + url
	head, _ := json.Marshal(journal.Header{Format: journal.Format, Started: time.Unix(1700000000, 0), Target: target, PID: 1})
	j := string(head) + "\n"
	at := time.Unix(1700000000, 0)
	out := transport.Meta{HTTPMethod: "POST", URL: url, Headers: map[string]string{"Authorization": "Bearer " + secretCanaries[2], "Mcp-Session-Id": "s1"}}
	in := transport.Meta{HTTPMethod: "POST", URL: url, Status: 200, Headers: map[string]string{"Content-Type": "application/json"}}
	for i, m := range []struct {
		dir  transport.Dir
		meta transport.Meta
		data string
	}{
		{transport.Out, out, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"old","version":"0"}}}`},
		{transport.In, in, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`},
		{transport.Out, out, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`},
		{transport.In, in, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`},
	} {
		j += string(journal.AppendRecord(nil, uint64(i+1), transport.Frame{Time: at.Add(time.Duration(i) * time.Millisecond), Dir: m.dir, Kind: transport.Message, Meta: m.meta, Data: []byte(m.data)}))
	}
	// A URL in an event's detail: in the layout mcpscope writes, and in a
	// foreign one (an unknown member sends the meta to encoding/json).
	j += string(journal.AppendRecord(nil, 5, transport.Frame{Time: at.Add(5 * time.Millisecond), Dir: transport.Local, Kind: transport.Event,
		Meta: transport.Meta{Event: transport.EvNote, Detail: "reconnecting to " + target + " now"}}))
	foreign, _ := json.Marshal(map[string]any{"seq": 6, "t": at.Add(6 * time.Millisecond), "dir": "local", "kind": "event",
		"meta": map[string]any{"detail": "redirected to " + url, "event": transport.EvNote, "foreign": true}})
	j += string(foreign) + "\n"
	path = filepath.Join(dir, "old.jsonl")
	if err := os.WriteFile(path, []byte(j), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, target
}

func noSecret(t *testing.T, what, text string) {
	t.Helper()
	for _, c := range secretCanaries {
		if strings.Contains(text, c) {
			t.Errorf("%s shows the secret %s:\n%s", what, c, text)
		}
	}
}

// Everything that reads a journal shows its recorded target, URLs and
// headers redacted, whoever wrote it: journal --summary, journals (also
// from a cache an older build wrote), replay, export (HAR, OTLP, JSONL),
// diff against a baseline, and what open reads.
func TestOldJournalsSecretsStayHidden(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	path, target := oldJournal(t, dir)

	code, out, errb := run(t, "journal", "--summary", path)
	if code != exitOK || !strings.Contains(out, "[redacted]@127.0.0.1:9/mcp?api_key=[redacted]") {
		t.Errorf("journal --summary: exit %d\n%s%s", code, out, errb)
	}
	noSecret(t, "journal --summary", out+errb)

	for _, argv := range [][]string{{"journals", "--dir", dir}, {"journals", "--dir", dir, "--json"}} {
		code, out, errb := run(t, argv...)
		if code != exitOK || !strings.Contains(out, "[redacted]") {
			t.Errorf("%v: exit %d\n%s%s", argv, code, out, errb)
		}
		noSecret(t, strings.Join(argv, " "), out+errb)
	}
	// A cache an older build wrote, summary and all, is read redacted.
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	cached, _ := json.Marshal(map[string]any{"format": "mcpscope-journals/1", "summaries": []journalsum.Summary{
		{Path: path, Size: fi.Size(), ModTime: fi.ModTime(), Target: target, Calls: 7}}})
	if err := os.WriteFile(journalsum.DefaultCache(), cached, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errb = run(t, "journals", "--dir", dir, "--json")
	if code != exitOK || !strings.Contains(out, `"calls":7`) {
		t.Errorf("journals from the old cache: exit %d\n%s%s", code, out, errb)
	}
	noSecret(t, "journals from an old cache", out+errb)

	// replay: the recorded URL lost its credentials, so it is not used;
	// a live target that fails says so without the recorded secrets.
	code, out, errb = run(t, "replay", path)
	if code != exitUsage || !strings.Contains(errb, "no usable URL") {
		t.Errorf("replay against the recorded URL: exit %d\n%s%s", code, out, errb)
	}
	noSecret(t, "replay", out+errb)
	code, out, errb = run(t, "replay", path, "--no-journal", "http://127.0.0.1:1/mcp")
	if code != exitTransport {
		t.Errorf("replay against a dead target: exit %d\n%s%s", code, out, errb)
	}
	noSecret(t, "replay to a dead target", out+errb)

	for _, format := range []string{"har", "otlp", "jsonl"} {
		file := filepath.Join(t.TempDir(), "out."+format)
		code, out, errb := run(t, "export", "--format", format, "-o", file, path)
		b, rerr := os.ReadFile(file)
		if code != exitOK || rerr != nil || !strings.Contains(string(b), "[redacted]") {
			t.Errorf("export --format %s: exit %d (%v)\n%s%s\n%s", format, code, rerr, out, errb, b)
		}
		noSecret(t, "export --format "+format, out+errb+string(b))
	}

	// A diff baseline an older build wrote names its source as typed.
	snap, err := diff.FromJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	snap.Source = target
	base := filepath.Join(t.TempDir(), "base.json")
	f, err := os.Create(base)
	if err != nil {
		t.Fatal(err)
	}
	if err := snap.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, argv := range [][]string{{"diff", base, path}, {"diff", "--json", base, path}} {
		code, out, errb := run(t, argv...)
		if code == exitUsage || !strings.Contains(out, "[redacted]") {
			t.Errorf("%v: exit %d\n%s%s", argv, code, out, errb)
		}
		noSecret(t, strings.Join(argv, " "), out+errb)
	}

	// open: the session's target (header, info view), every frame's URL and
	// headers (detail view), and where a replay would go.
	s, h, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	noSecret(t, "open's header", h.Target+s.Info().Target)
	loaded, _, err := session.Load(path) // the same reads, all done on return
	if err != nil {
		t.Fatal(err)
	}
	defer loaded.Close()
	var metas []byte
	for _, it := range loaded.Store().Since(0, 0) {
		b, _ := json.Marshal(it.Frame.Meta)
		metas = append(metas, b...)
	}
	if !strings.Contains(string(metas), "Bearer [redacted]") || strings.Count(string(metas), "[redacted]@127.0.0.1:9/mcp?api_key=[redacted]") < 6 {
		t.Errorf("no frame read back: %s", metas)
	}
	noSecret(t, "open's frames", string(metas))
	lv, err := liveTarget(&cobra.Command{Use: "open"}, &connFlags{}, "", nil, h.Target)
	if err != nil || lv.live.Connect != nil || !strings.Contains(lv.live.Missing, "redaction") {
		t.Errorf("open would replay to the recorded target: %+v, %v", lv.live, err)
	}
}
