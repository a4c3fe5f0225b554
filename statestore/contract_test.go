package statestore_test

import (
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"mcpscope/statestore"
	"mcpscope/statestore/storetest"
)

// FileBackend is the file store under the contract.
var fileBackend = storetest.Backend{
	Name: "file",
	New: func(t *testing.T, ttl time.Duration) statestore.Store {
		return &statestore.FileStore{Dir: filepath.Join(t.TempDir(), "calls"), LeaseTTL: ttl}
	},
	Leftovers: func(t *testing.T, s statestore.Store) []string {
		var left []string
		root := s.(*statestore.FileStore).Dir
		for _, dir := range []string{root, root + ".leases"} {
			_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && d.Name() != ".lock" {
					left = append(left, p)
				}
				return nil
			})
		}
		return left
	},
}

func TestFileStoreContract(t *testing.T) { storetest.Run(t, fileBackend) }
