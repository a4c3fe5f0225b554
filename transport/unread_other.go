//go:build !linux

package transport

import "os"

// unread cannot tell here: waits do not follow the server's start.
func unread(*os.File) (int, bool) { return 0, false }
