package cli

import (
	"runtime/debug"
	"strings"
	"testing"

	"mcpscope/session"
)

// A binary without a recorded commit says why and how to get one; one with
// a commit names it.
func TestVersionSaysCommitOrWhyNot(t *testing.T) {
	for _, info := range []*debug.BuildInfo{nil, {Main: debug.Module{Path: "mcpscope", Version: "(devel)"}}} {
		v := versionOf(info)
		for _, want := range []string{"no commit recorded", "go run", "worktree", "go install ."} {
			if !strings.Contains(v, want) {
				t.Errorf("versionOf(%v) = %q, lacks %q", info, v, want)
			}
		}
	}
	stamped := &debug.BuildInfo{Main: debug.Module{Path: "mcpscope", Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-11-26T00:00:18Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	if v := versionOf(stamped); !strings.Contains(v, "commit 0123456789ab, modified, 2026-11-26T00:00:18Z") {
		t.Errorf("stamped build: %q", v)
	}
	release := &debug.BuildInfo{Main: debug.Module{Path: "mcpscope", Version: "v0.2.0"}}
	if v := versionOf(release); v != "0.2.0" {
		t.Errorf("module release: %q, want 0.2.0", v)
	}
}

// A version stamped at link time (-X mcpscope/session.Version=..., as a
// release build does) wins over the pseudo-version Go derives from git.
func TestVersionStampedWins(t *testing.T) {
	defer func(v string) { session.Version = v }(session.Version)
	session.Version = "1.4.0-SNAPSHOT-0123456"
	info := &debug.BuildInfo{Main: debug.Module{Path: "mcpscope", Version: "v0.0.0-20261126000018-0123456789ab"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-11-26T00:00:18Z"},
	}}
	if v := versionOf(info); v != "1.4.0-SNAPSHOT-0123456 (commit 0123456789ab, 2026-11-26T00:00:18Z)" {
		t.Errorf("stamped build: %q", v)
	}
}
