package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/connect"
	"mcpscope/filter"
	"mcpscope/testkit/testservers"
)

// TestRunRecordFilters: runRecord, without cobra, prints only the frames
// its filter keeps: with '~k response' the handshake's result, and not the
// initialize request that comes before it.
func TestRunRecordFilters(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	flt, err := filter.Parse("~k response")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := connect.Connect(ctx, connect.Spec{Command: []string{testservers.BuildStdio(t)},
		Journal: filepath.Join(t.TempDir(), "r.jsonl"), Grace: oneShotGrace})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	out := &stopAtLine{want: []byte(`\"result\"`), stop: stop}
	if err := runRecord(runCtx, s, &recordOptions{filter: flt}, out); err != nil {
		t.Fatalf("record stopped: %v", err)
	}
	printed := strings.Split(strings.TrimSpace(out.String()), "\n")
	for _, l := range printed {
		if !strings.Contains(l, `"dir":"in"`) || !strings.Contains(l, `\"result\"`) || strings.Contains(l, `\"method\":\"initialize\"`) {
			t.Errorf("--filter '~k response' printed a line that is no response: %s", l)
		}
	}
	if len(printed) == 0 || printed[0] == "" {
		t.Fatal("record printed nothing")
	}
}
