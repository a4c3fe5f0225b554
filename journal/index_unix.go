//go:build unix

package journal

import (
	"os"
	"syscall"
)

// oNoFollow makes opening a symlink fail (ELOOP) instead of following it.
const oNoFollow = syscall.O_NOFOLLOW

// links is how many names the file has (1 when it cannot tell).
func links(st os.FileInfo) uint64 {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Nlink)
	}
	return 1
}
