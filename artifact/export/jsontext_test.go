package export

import (
	"encoding/json"
	"testing"
)

// TestAppendJSONTextRuns: runs of plain bytes are copied at once, and
// stop at every byte that needs escaping, DEL included, wherever it falls
// in a run.
func TestAppendJSONTextRuns(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, longer than one word":  "plain text, longer than one word",
		"abcdefgh\x7fijk":                   `abcdefgh\u007fijk`,
		"ab\x7f":                            `ab\u007f`,
		`say "hi" \ bye`:                    `say \"hi\" \\ bye`,
		"line one\nline two\ttab\x01":       `line one\nline two\ttab\u0001`,
		"caf\xc3\xa9 bad\xff end":           `café bad\ufffd end`,
		"\x1b[2Jclear, then more plain tex": `\u001b[2Jclear, then more plain tex`,
	} {
		got := string(appendJSONText(nil, []byte(in)))
		if got != want {
			t.Errorf("appendJSONText(%q) = %s, want %s", in, got, want)
		}
		var back string
		if err := json.Unmarshal([]byte(`"`+got+`"`), &back); err != nil {
			t.Errorf("appendJSONText(%q) = %s, not a JSON string's inside: %v", in, got, err)
		}
	}
}
