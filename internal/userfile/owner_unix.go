//go:build unix

package userfile

import (
	"io/fs"
	"os"
	"syscall"
)

// keepOwner gives tmp the owner of the file it replaces when that is not
// us: root replacing someone's file leaves it theirs. Where we may not
// chown, the file becomes ours, as any rewrite by its editor would.
func keepOwner(tmp *os.File, old fs.FileInfo) {
	if st, ok := old.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		_ = tmp.Chown(int(st.Uid), int(st.Gid))
	}
}
