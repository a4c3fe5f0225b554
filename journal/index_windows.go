package journal

import "os"

// oNoFollow is nothing on Windows, whose open has no such flag: making a
// symlink there needs Developer Mode or an administrator, and the cache
// directory is under the user's profile, which others cannot write.
const oNoFollow = 0

// links is 1: Windows reports no link count through os.FileInfo.
func links(os.FileInfo) uint64 { return 1 }
