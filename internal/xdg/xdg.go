// Package xdg is where mcpscope keeps its files: the XDG base directories,
// read one way by every package that writes state or settings.
package xdg

import (
	"os"
	"path/filepath"
)

// base is the XDG variable's directory when it is absolute (the spec
// says a relative one is invalid and ignored), else home joined with def;
// "" when neither is known.
func base(env string, def ...string) string {
	if d := os.Getenv(env); filepath.IsAbs(d) {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(append([]string{home}, def...)...)
}

// ConfigHome is $XDG_CONFIG_HOME, or ~/.config: where hosts and
// mcpscope keep settings.
func ConfigHome() string { return base("XDG_CONFIG_HOME", ".config") }

// ConfigDir is mcpscope's settings directory, $XDG_CONFIG_HOME/mcpscope
// ("" when no home is known).
func ConfigDir() string {
	if d := ConfigHome(); d != "" {
		return filepath.Join(d, "mcpscope")
	}
	return ""
}

// StateDir is mcpscope's state directory, $XDG_STATE_HOME/mcpscope (or
// ~/.local/state/mcpscope): journals, rejoin records, logins, caches of
// verdicts. Without a home it falls back to the temporary directory, so
// that a journal can always be written somewhere.
func StateDir() string {
	if d := base("XDG_STATE_HOME", ".local", "state"); d != "" {
		return filepath.Join(d, "mcpscope")
	}
	return filepath.Join(os.TempDir(), "mcpscope-state")
}
