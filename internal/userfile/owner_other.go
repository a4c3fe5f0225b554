//go:build !unix

package userfile

import (
	"io/fs"
	"os"
)

// keepOwner does nothing where files have no Unix owner (Windows: the new
// file inherits its directory's ACL, as the one it replaces did).
func keepOwner(*os.File, fs.FileInfo) {}
