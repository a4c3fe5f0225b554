package xdg

import (
	"path/filepath"
	"testing"
)

func TestDirs(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	abs := t.TempDir()

	t.Setenv("XDG_CONFIG_HOME", abs)
	t.Setenv("XDG_STATE_HOME", abs)
	if got, want := ConfigDir(), filepath.Join(abs, "mcpscope"); got != want {
		t.Errorf("ConfigDir with XDG_CONFIG_HOME=%s: %q, want %q", abs, got, want)
	}
	if got, want := StateDir(), filepath.Join(abs, "mcpscope"); got != want {
		t.Errorf("StateDir with XDG_STATE_HOME=%s: %q, want %q", abs, got, want)
	}

	// The XDG spec: a relative path in these variables is invalid and ignored.
	t.Setenv("XDG_CONFIG_HOME", "rel")
	t.Setenv("XDG_STATE_HOME", "")
	if got, want := ConfigDir(), filepath.Join(home, ".config", "mcpscope"); got != want {
		t.Errorf("ConfigDir with a relative XDG_CONFIG_HOME: %q, want %q", got, want)
	}
	if got, want := StateDir(), filepath.Join(home, ".local", "state", "mcpscope"); got != want {
		t.Errorf("StateDir without XDG_STATE_HOME: %q, want %q", got, want)
	}
}
