package journal

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"mcpscope/transport"
)

// hostileMetas are meta objects a journal from another build, a hand edit
// or an attacker may hold: each must read exactly as encoding/json reads it.
var hostileMetas = []string{
	`{}`,
	`{"pid":42}`,
	`{"pid":-0}`,
	// metaInt adds up the digits of an int that fits whatever they are,
	// and parses longer ones: at the edges of both.
	`{"pid":9999999999999999}`, `{"pid":-9999999999999999}`, `{"pid":99999999999999999}`, `{"status":9223372036854775807}`,
	`{"status":9223372036854775808}`, `{"exitCode":-9223372036854775808}`, `{"retryMs":0}`, `{"retryMs":-1}`,
	`{"pid":1e3}`,
	`{"pid":1.0}`,
	`{"pid":99999999999999999999}`,
	`{"pid":null}`,
	`{"pid":"7"}`,
	`{"PID":7}`,
	`{"pid":1,"pid":2}`,
	`{"event":"exited","exitCode":0,"signal":"SIGKILL"}`,
	`{"exitCode":null}`,
	`{"exitCode":-3}`,
	`{"httpMethod":"POST","url":"http://u:p@h/mcp?token=s3cret","status":200,"stream":"post:1","eventId":"e\u0000","eventType":"message","retryMs":3000,"headers":{"Content-Type":"application/json","Authorization":"Bearer x"}}`,
	`{"headers":{}}`,
	`{"headers":null}`,
	`{"headers":{"a":null}}`,
	`{"headers":{"a":1}}`,
	`{"headers":{"a":"1","a":"2"}}`,
	`{"headers":{"\u0041":"\ud800"}}`,
	`{"headers":{"a":"b"},"headers":{"c":"d"}}`,
	`{"headers":["a"]}`,
	`{"detail":"\u001b]52;c;aGk=\u0007 \u202e evil"}`,
	`{"detail":"a\\b\"c\/d\ne\u00e9\ud83d\ude00"}`,
	`{"detail":null}`,
	`{"detail":true}`,
	`{"Detail":"folded"}`,
	`{"dEtAiL":"folded"}`,
	`{"unknown":{"deep":[1,2,{"x":null}]},"via":"host"}`,
	`{"vi\u0061":"escaped key"}`,
	`{"status":"200"}`,
	`{"status":200.5}`,
	`{"retryMs":-1}`,
	` { "pid" : 3 , "via" : "server" } `,
	`{"resumes":"post:1","stream":"get:2"}`,
	"{\"detail\":\"\xff\xfe bad UTF-8\",\"headers\":{\"k\xc3\":\"\xed\xa0\x80\"}}",
}

// TestMetaMatchesJSON: the fast meta reader gives what encoding/json gives
// on hostile metadata, and takes the fast path on what mcpscope writes.
func TestMetaMatchesJSON(t *testing.T) {
	for _, in := range hostileMetas {
		checkMeta(t, []byte(in))
	}
	code := 2
	written := transport.Meta{Event: "exited", Detail: "bye \x1b[2J", HTTPMethod: "GET", URL: "http://h/mcp", Status: 404,
		Headers: map[string]string{"Content-Type": "text/event-stream", "X": "é"}, Stream: "get:1", Resumes: "post:2",
		EventID: "7", EventType: "message", Retry: 10, PID: 9, ExitCode: &code, Signal: "SIGTERM", Via: "host"}
	line := AppendRecord(nil, 1, transport.Frame{Time: time.Now(), Dir: transport.Local, Kind: transport.Event, Meta: written})
	var rec struct {
		Meta json.RawMessage `json:"meta"`
	}
	if err := json.Unmarshal(line, &rec); err != nil {
		t.Fatal(err)
	}
	var m transport.Meta
	if sc := (scanner{b: rec.Meta}); !fastMeta(&sc, &m, false) || sc.i != len(rec.Meta) {
		t.Fatalf("the meta mcpscope writes took the slow path: %s", rec.Meta)
	}
	checkMeta(t, rec.Meta)
}

func checkMeta(t *testing.T, b []byte) {
	t.Helper()
	if !json.Valid(b) {
		return // the record reader only passes valid JSON
	}
	var want transport.Meta
	werr := json.Unmarshal(b, &want)
	var got transport.Meta
	ok := readMetaJSON(b, &got)
	if ok != (werr == nil) {
		t.Fatalf("%s: fast reader ok=%v, encoding/json err=%v", b, ok, werr)
	}
	if ok && !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\nfast %+v\njson %+v", b, got, want)
	}
}

func FuzzMetaMatchesJSON(f *testing.F) {
	for _, in := range hostileMetas {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkMeta(t, b) })
}

// TestRedactedAlreadyAgreesWithRedactHeader: a value skipped as redacted
// is one RedactHeader would leave unchanged under a secret name.
func TestRedactedAlreadyAgreesWithRedactHeader(t *testing.T) {
	for _, v := range []string{"[redacted]", "Bearer [redacted]", "Basic [redacted]", "a b [redacted]", " [redacted]",
		"VeryLongSchemeName [redacted]", "Bearer x", "Bearer  [redacted]", "[redacted] x", ""} {
		if redactedAlready(v) && transport.RedactHeader("Authorization", v) != v {
			t.Errorf("%q skipped, but RedactHeader makes it %q", v, transport.RedactHeader("Authorization", v))
		}
	}
}

// TestPlainHeadersHoldNoCredential: the header names the reader does not
// redact are names transport.RedactHeader leaves alone, whatever the value.
func TestPlainHeadersHoldNoCredential(t *testing.T) {
	for _, n := range plainHeaders {
		if transport.IsSecretName(n) {
			t.Errorf("%q is skipped by the journal reader's redaction, but transport.IsSecretName says it holds a secret", n)
		}
		if !plainHeader(n) {
			t.Errorf("plainHeader(%q) = false", n)
		}
	}
	if plainHeader("Authorization") || plainHeader("content-type") {
		t.Error("plainHeader matches a name not in its list")
	}
}

// TestKeyBytesIsKey: the lookup form of an id's key is its key, for ids of
// every kind (and none).
func TestKeyBytesIsKey(t *testing.T) {
	for _, id := range []string{"7", " 7 ", "7.0", "-0", "1e3", "007", `"7"`, `"a\u0062"`, `"é"`, `"\ud800"`, "null", "", "true", `{"a":1}`, "123456789012345678"} {
		if got, want := string(KeyBytes(json.RawMessage(id))), IDKey(json.RawMessage(id)); got != want {
			t.Errorf("KeyBytes(%s) = %q, Key %q", id, got, want)
		}
	}
}

// TestIDKeyIntegers: the integer shortcut gives what the float round trip gives.
func TestIDKeyIntegers(t *testing.T) {
	for _, id := range []string{"0", "-0", "7", "-7", "123456789012345", "1234567890123456", "007", "1e3", "7.0", "-"} {
		want := id
		if f, err := strconv.ParseFloat(id, 64); err == nil {
			want = strconv.FormatFloat(f, 'f', -1, 64)
		}
		if got := IDKey([]byte(id)); got != want {
			t.Errorf("IDKey(%s) = %q, want %q", id, got, want)
		}
	}
}

// TestRepeatedHeadersReadRedacted: headers objects repeated from frame to
// frame are read once and shared, and every frame's headers (and URL) come
// out as encoding/json reads them, redacted as redactMeta redacts them:
// the first sighting, the repeats, and objects that only start alike.
func TestRepeatedHeadersReadRedacted(t *testing.T) {
	metas := []string{
		`{"httpMethod":"POST","url":"http://u:pw@h/mcp?token=s3cret","headers":{"Authorization":"Bearer s3cret","X-Api-Key":"k3y","Accept":"a"},"stream":"post:1"}`,
		`{"httpMethod":"POST","url":"http://u:pw@h/mcp?token=s3cret","headers":{"Authorization":"Bearer s3cret","X-Api-Key":"k3y","Accept":"a"},"stream":"post:2"}`,
		`{"headers":{"Authorization":"Bearer s3cret","X-Api-Key":"k3y","Accept":"a"}}`,
		`{"headers":{"Authorization":"Bearer s3cret","X-Api-Key":"k3y","Accept":"a","Cookie":"c=1"}}`,
		`{"headers":{"Authorization":"Bearer s3cret","X-Api-Key":"k3y","Accept":"a"},"eventId":"e1"}`,
		`{"headers":{"Authorization":"Bearer s3cret"}}`,
		`{"headers":{"Authorization":"Bearer s3cret"}, "pid":1}`,
		`{"headers":{"Authori\u007aation":"Bearer s3cret"}}`,
		`{"headers":{"Authorization":"Bearer s3cret"},"headers":{"Accept":"x"}}`,
		`{ "headers" : {"Authorization":"Bearer s3cret"} }`,
	}
	for round := 0; round < 2; round++ {
		for i, m := range metas {
			line := fmt.Sprintf(`{"seq":%d,"t":"2026-01-02T03:04:05Z","dir":"out","kind":"message","meta":%s,"raw":"{}"}`, i+1, m)
			_, got, err := parseRecordScratch([]byte(line), false, false, &rawScratch{})
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			var want transport.Meta
			if err := json.Unmarshal([]byte(m), &want); err != nil {
				t.Fatal(err)
			}
			redactMeta(&want)
			if !reflect.DeepEqual(got.Meta, want) {
				t.Fatalf("round %d, %s:\n got  %+v\n want %+v", round, m, got.Meta, want)
			}
			for k, v := range got.Meta.Headers {
				if strings.Contains(v, "s3cret") || strings.Contains(v, "k3y") {
					t.Fatalf("%s: header %s kept its secret: %q", m, k, v)
				}
			}
			if strings.Contains(got.Meta.URL, "s3cret") || strings.Contains(got.Meta.URL, "pw") {
				t.Fatalf("%s: the URL kept its secret: %q", m, got.Meta.URL)
			}
		}
	}
}

// readMetaJSON reads a record's meta object, which the caller has already
// checked is valid JSON, into m. The layout mcpscope writes (the fields'
// own names, once each, strings and integers, headers a flat object of
// strings) is read by hand with the session's scanner; anything else (a
// null, a name in another case, a repeated or unknown field, a number
// that is not a plain integer) goes to encoding/json, so the result is
// always what json.Unmarshal gives. FuzzMetaMatchesJSON checks that.
func readMetaJSON(b []byte, m *transport.Meta) bool {
	var fast transport.Meta
	sc := scanner{b: b}
	if fastMeta(&sc, &fast, false) && sc.i == len(b) {
		*m = fast
		return true
	}
	return json.Unmarshal(b, m) == nil
}
