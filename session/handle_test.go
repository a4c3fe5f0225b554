package session

import (
	"regexp"
	"testing"
	"time"

	"mcpscope/internal/shell"
	"mcpscope/statestore"
)

// Two processes with the same pid on two machines (containers all run as
// pid 1) starting a call with the same id in the same second make two
// handles: each process tags its handles. A handle stays short, file-safe
// and shell-safe.
func TestHandlesDifferAcrossMachines(t *testing.T) {
	c := &Call{Key: "3", started: wallNano(time.Date(2026, 11, 26, 1, 2, 3, 0, time.UTC))}
	here := handleFor(c, 1)
	saved := procTag
	defer func() { procTag = saved }()
	other := newProcTag() // the same pid, another machine
	for other == saved() {
		other = newProcTag()
	}
	procTag = func() string { return other }
	there := handleFor(c, 1)
	if here == there {
		t.Fatalf("two machines made the same handle %s", here)
	}
	// Two sessions of one process number their calls alike.
	if second := handleFor(c, 2); second == there || !regexp.MustCompile(`^20261126T010203-[0-9a-f]{6}-[0-9]+\.2-3$`).MatchString(second) {
		t.Fatalf("the second session's handle %q", second)
	}
	for _, h := range []string{here, there} {
		if !regexp.MustCompile(`^20261126T010203-[0-9a-f]{6}-[0-9]+-3$`).MatchString(h) || shell.Join([]string{h}) != h || len(h) > 40 {
			t.Fatalf("handle %q is not short, file- and shell-safe", h)
		}
	}
	// A handle from before the tag is still a handle.
	fs := &statestore.FileStore{Dir: t.TempDir()}
	old := statestore.Detached{Handle: "20250101T000000-1234-7", RequestID: []byte("7")}
	if err := fs.Put(old); err != nil {
		t.Fatal(err)
	}
	if d, err := fs.Get(old.Handle); err != nil || d.Handle != old.Handle {
		t.Fatalf("an untagged handle: %+v %v", d, err)
	}
}
