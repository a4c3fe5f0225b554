//go:build unix

package proxy

import (
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// shortSocketRoot is /tmp/mcpscope-UID: /tmp, not $TMPDIR, whose length is
// anyone's.
func shortSocketRoot() string { return "/tmp/mcpscope-" + strconv.Itoa(os.Getuid()) }

// ownDir refuses a socket directory another user owns and makes ours 0700.
func ownDir(dir string, st fs.FileInfo) error {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		return fmt.Errorf("%s belongs to another user (uid %d)", dir, sys.Uid)
	}
	if st.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, socketDirPerm); err != nil {
			return err
		}
	}
	return nil
}

// restrictSocket makes a proxy's socket 0600: only its user may connect.
func restrictSocket(path string) error { return os.Chmod(path, socketFilePerm) }
