package cli

import (
	"regexp"
	"testing"
	"time"

	"mcpscope/session"
	"mcpscope/testkit/otlptest"
)

// TestOTLPUnansweredSaysLost: a recording's last call got no answer; the
// OTLP export ends its span with the recording and names its state with
// the word journal shows for it (lost, not a word of its own), as an
// error, with the reason open gives.
func TestOTLPUnansweredSaysLost(t *testing.T) {
	t0, path := unansweredJournal(t)
	code, out, errs := run(t, "journal", "--summary", path)
	if code != exitOK {
		t.Fatalf("journal: exit %d: %s", code, errs)
	}
	m := regexp.MustCompile(`tools/call slow\s+(\w+)\s`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("journal does not list the unanswered call:\n%s", out)
	}
	journalWord := m[1]
	code, exported, errs := run(t, "export", "--format", "otlp", path)
	if code != exitOK {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	tr := otlptest.Read(t, []byte(exported))
	for _, s := range tr.Spans {
		if s.Name != "tools/call slow" {
			continue
		}
		state := ""
		for _, a := range s.Attributes {
			if a.Key == "mcpscope.call.state" {
				state = a.GetValue().GetStringValue()
			}
		}
		if state != journalWord || state != "lost" {
			t.Fatalf("the span's mcpscope.call.state is %q; journal says %q (want both lost)", state, journalWord)
		}
		if s.Status.GetCode() != 2 || s.Status.GetMessage() != session.RecordingEnded {
			t.Fatalf("the span's status is %v, want an error saying %q", s.Status, session.RecordingEnded)
		}
		if end := time.Unix(0, int64(s.EndTimeUnixNano)); !end.Equal(t0.Add(3500 * time.Millisecond)) {
			t.Fatalf("the span ends at %s, want where the recording ends (%s)", end, t0.Add(3500*time.Millisecond))
		}
		return
	}
	t.Fatalf("no tools/call slow span in the export:\n%s", exported)
}
