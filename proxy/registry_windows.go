package proxy

import (
	"io/fs"
	"os"
	"path/filepath"
)

// shortSocketRoot is under %TEMP%, which is the user's own on Windows
// (C:\Users\NAME\AppData\Local\Temp): Windows has no shared /tmp, and its
// AF_UNIX sockets (Windows 10 1803 and later) take paths as long as Unix's.
func shortSocketRoot() string { return filepath.Join(os.TempDir(), "mcpscope-proxies") }

// ownDir has nothing to do on Windows: the socket directories are under the
// user's profile (or $XDG_RUNTIME_DIR, if set), whose ACL keeps other users
// out, and Unix permission bits mean nothing there (os.Chmod only sets the
// read-only attribute).
func ownDir(string, fs.FileInfo) error { return nil }

// restrictSocket has nothing to do either: the socket inherits its
// directory's ACL.
func restrictSocket(string) error { return nil }
