package session_test

import (
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"mcpscope/session"
	"mcpscope/session/storetest"
)

// FileBackend is the file store under the contract.
var fileBackend = storetest.Backend{
	Name: "file",
	New: func(t *testing.T, ttl time.Duration) session.StateStore {
		return &session.FileStore{Dir: filepath.Join(t.TempDir(), "calls"), LeaseTTL: ttl}
	},
	Leftovers: func(t *testing.T, s session.StateStore) []string {
		var left []string
		root := s.(*session.FileStore).Dir
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
