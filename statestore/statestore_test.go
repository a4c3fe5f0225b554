package statestore

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestFileStoreRoundTripAndMode(t *testing.T) {
	fs := &FileStore{Dir: filepath.Join(t.TempDir(), "calls")}
	d := Detached{Handle: "h1", Target: "http://127.0.0.1:1/mcp", Transport: "http", SessionID: "s",
		RequestID: json.RawMessage("7"), Method: "tools/call", LastEventIDs: map[string]string{"post:7": "ev-3"},
		SecretRefs: map[string]string{"Authorization": "env:MCPSCOPE_BEARER"}, Started: time.Now()}
	if err := fs.Put(d); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(fs.Dir, "h1.json"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("state file mode: %v %v", st.Mode(), err)
	}
	if dst, _ := os.Stat(fs.Dir); dst.Mode().Perm() != 0o700 {
		t.Fatalf("state dir mode %v", dst.Mode())
	}
	got, err := fs.Get("h1")
	if err != nil || got.LastEventIDs["post:7"] != "ev-3" || string(got.RequestID) != "7" {
		t.Fatalf("get: %+v %v", got, err)
	}
	if _, err := fs.Get("nope"); !errors.Is(err, ErrNoSuchCall) {
		t.Fatalf("unknown handle: %v", err)
	}
	if _, err := fs.Get("../etc/passwd"); err == nil {
		t.Fatal("path traversal accepted")
	}
	if err := fs.Delete("h1"); err != nil {
		t.Fatal(err)
	}
	if l, _ := fs.List(); len(l) != 0 {
		t.Fatalf("list after delete: %v", l)
	}
}

// Concurrent writers and readers never see a torn record.
func TestFileStoreConcurrentWriters(t *testing.T) {
	fs := &FileStore{Dir: t.TempDir()}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				d := Detached{Handle: "shared", RequestID: json.RawMessage(strconv.Itoa(w*1000 + i)), Method: "tools/call"}
				if err := fs.Put(d); err != nil {
					t.Error(err)
					return
				}
				if _, err := fs.Get("shared"); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	if l, err := fs.List(); err != nil || len(l) != 1 {
		t.Fatalf("want one record, got %d: %v", len(l), err)
	}
}
